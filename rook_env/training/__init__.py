"""Training for Rook (needs torch, the ``[train]`` extra): PPO self-play for the four-player partnership game or
call-your-partner Rook for 4 to 6 players (``game: call_partner``, ``players``), and rounds of counterfactual
labels from a trained network (:mod:`.label_rounds`, ``algorithm: label_rounds``: the default run). ``python
train.py`` is its command line (:mod:`.cli`); ``import rook_env`` does not import this package (nor torch).

Each module holds one part of the algorithm and can be imported and tested alone, in the order the
loop uses them:

- :mod:`.config`: :class:`Config` (every option; :class:`RoundsConfig`, its ``rounds`` section), its checks, YAML
  and command-line overrides, the schedules (learning rate, entropy, opponent mix);
- :mod:`.games`: :class:`Game`, the only game-specific part (batched engine, seats, learning groups,
  heuristic, fair match);
- :mod:`.collection`: the rollout :class:`Collector` on the batched engine (opponents per game, credit
  assignment, forced moves, the centralized critic's input);
- :mod:`.ppo`: GAE over each seat's own decisions, the clipped loss, the update (:class:`PPOSettings`:
  what it reads of the config);
- :mod:`.behaviour_cloning`: the warm start that imitates the heuristic;
- :mod:`.selection`: evaluation, checkpoint selection over the evaluated field, the playoff;
- :mod:`.checkpoints`: save, resume (every random state), ``agent.pt``;
- :mod:`.reporting`: the progress line with its ETA against the real stopping rule, the summary, the curve;
- :mod:`.loop`: :func:`train`, which runs them (overlap of update and collection, Ctrl-C, the end);
- :mod:`.cli`: ``python train.py``'s arguments and exit codes (a config with ``algorithm: label_rounds`` goes to
  :func:`.label_rounds.train_rounds`, the labels and fits of :mod:`.network_labels` and :mod:`.residual_fit`).

Outputs in ``runs/<name>/``: TensorBoard events, ``last.pt`` / ``best.pt`` (model, optimizer, config,
counters, RNG states, snapshot pool), ``agent.pt`` (the best model only, or the playoff's winner: what
ships, see tools/ship.py; an interrupted run gets it from ``best.pt``), ``candidates/`` (the playoff's),
``curve.png`` and ``summary.json``. A new run refuses an existing ``runs/<name>/`` unless ``--overwrite``
(or ``--resume``).
"""

from .cli import main, parse_args
from .config import OPPONENT_KINDS, Config, RoundsConfig, make_train_config, mix_at
from .games import Game, game_of
from .loop import train
from .reporting import print_summary

__all__ = ["OPPONENT_KINDS", "Config", "Game", "RoundsConfig", "game_of", "main", "make_train_config", "mix_at",
           "parse_args", "print_summary", "train"]
