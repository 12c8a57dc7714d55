"""Training for Rook (needs torch, the ``[train]`` extra): PPO self-play for the four-player partnership game or
call-your-partner Rook for 4 to 6 players (``game: call_partner``, ``players``), and rounds of counterfactual
labels from a trained network (:mod:`.labels`, ``algorithm: label_rounds``: the default run). ``python train.py``
and ``rook-train`` are its command line (:mod:`.cli`); ``import rook_env`` does not import this package (nor torch).

PPO is one loop that reads top to bottom (:mod:`.loop`) and the plug-ins it calls. Each module can be imported and
tested alone; from the bottom up:

- :mod:`.config`: one config class per algorithm (:class:`PPOConfig`, also named ``Config``, with its ``ray`` and
  ``exit`` sections; :class:`LabelRoundsConfig`), their checks, YAML and command-line overrides, the schedules
  (learning rate, entropy, opponent mix), :func:`game_of` (the run's game from the registry);
- :mod:`.ppo`: GAE over each seat's own decisions, the clipped loss, the update (:class:`PPOSettings`);
- :mod:`.collection`: the rollout :class:`Collector` on the batched engine (opponents per game, credit
  assignment, forced moves, the centralized critic's input); :mod:`.ray_collection`: the same on a Ray cluster;
- :mod:`.expert`: expert iteration's labels and distillation loss; :mod:`.behaviour_cloning`: the warm start that
  imitates the heuristic; :mod:`.selection`: evaluation, checkpoint selection, the playoff;
- :mod:`.checkpoints`: save, resume (every random state), ``agent.pt``; :mod:`.reporting`: the progress line with
  its ETA against the real stopping rule, the summary, the curve;
- :mod:`.run`: what a run holds (counters, random streams, paths, log), shared by the loop and its plug-ins;
- the plug-ins: :mod:`.collectors` (in-process, overlapped, Ray), :mod:`.losses` (terms beside PPO's loss),
  :mod:`.callbacks` (rollback, evaluation, playoff, checkpointing);
- :mod:`.loop`: :func:`train`; :mod:`.cli`: the command line and its exit codes.

Outputs in ``runs/<name>/``: TensorBoard events, ``last.pt`` / ``best.pt`` (model, optimizer, config,
counters, RNG states, snapshot pool), ``agent.pt`` (the best model only, or the playoff's winner: what
ships, see tools/ship.py; an interrupted run gets it from ``best.pt``), ``candidates/`` (the playoff's),
``curve.png`` and ``summary.json``. A new run refuses an existing ``runs/<name>/`` unless ``--overwrite``
(or ``--resume``).
"""

from rook_env.games import Game

from .cli import main, parse_args
from .config import (OPPONENT_KINDS, Config, LabelRoundsConfig, PPOConfig, RoundsConfig, game_of, make_train_config,
                     mix_at)
from .loop import train
from .reporting import print_summary

__all__ = ["OPPONENT_KINDS", "Config", "Game", "LabelRoundsConfig", "PPOConfig", "RoundsConfig", "game_of", "main",
           "make_train_config", "mix_at", "parse_args", "print_summary", "train"]
