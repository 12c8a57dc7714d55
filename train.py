"""PPO self-play for Rook: the command line of :mod:`rook_env.training` (the algorithm, one module per part,
lives there; see docs/training.md).

    python train.py --config configs/smoke.yaml                    # about a minute on 2 CPU cores
    python train.py --config configs/default.yaml                  # the default run (55 min + the playoff)
    python train.py --config configs/from_scratch.yaml             # pure self-play, no warm start
    python train.py --config configs/call_partner.yaml             # call-your-partner Rook, 5 players
    python train.py --config configs/default.yaml --lr 1e-4 --set seed=3 --opponent_mix.heuristic 0.6
    python train.py --resume runs/default/last.pt --total_decisions 30_000_000 --max_minutes 90
    tensorboard --logdir runs

A run stops at ``total_decisions`` or at ``max_minutes`` of its wall time across resumes, whichever comes
first. Outputs go to ``runs/<name>/``; ``agent.pt`` is the model to evaluate (an interrupted run writes it
from its best checkpoint). Exit codes: 0 finished, 2 bad config/file/checkpoint, 130 interrupted.
"""

import sys

from rook_env.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
