"""Training for Rook: the command line of :mod:`rook_env.training` (the algorithms, one module per part, live
there; see docs/training.md). The default run is a round of counterfactual labels from the shipped network
(``algorithm: label_rounds``); the other configs are PPO self-play.

    python train.py --config configs/smoke.yaml                    # about a minute on 2 CPU cores
    python train.py --config configs/default.yaml                  # the default run: a league round of labels (18 min)
    python train.py --config configs/ppo.yaml                      # PPO self-play (55 min + the playoff)
    python train.py --config configs/from_scratch_rounds.yaml      # the default loop from a random network
    python train.py --config configs/from_scratch.yaml             # PPO self-play, no warm start
    python train.py --config configs/call_partner.yaml             # call-your-partner Rook, 5 players
    python train.py --config configs/ppo.yaml --lr 1e-4 --set seed=3 --opponent_mix.heuristic 0.6
    python train.py --resume runs/ppo/last.pt --total_decisions 30_000_000 --max_minutes 90
    tensorboard --logdir runs

A PPO run stops at ``total_decisions`` or at ``max_minutes`` of its wall time across resumes, whichever comes
first; a label_rounds run resumes when its command is run again. Outputs go to ``runs/<name>/``; ``agent.pt`` is
the model to evaluate (an interrupted PPO run writes it from its best checkpoint). Exit codes: 0 finished, 2 bad
config/file/checkpoint, 130 interrupted.
"""

import sys

from rook_env.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
