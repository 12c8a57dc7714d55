"""Training for Rook from a checkout; ``rook-train`` is the same command line (:mod:`rook_env.training.cli`). The
config's ``algorithm`` says what runs: ``label_rounds`` (the default run: rounds of counterfactual labels from the
shipped network) or ``ppo`` (PPO self-play).

    python train.py --config configs/default.yaml                  # the default run: a league round of labels (18 min)
    python train.py --config configs/smoke.yaml                    # PPO end to end in about a minute
    python train.py --config configs/ppo.yaml --lr 1e-4 --set seed=3 --opponent_mix.heuristic 0.6
    python train.py --config configs/default.yaml --rounds.rounds 3
    python train.py --resume runs/ppo/last.pt --max_minutes 90     # go on with an interrupted PPO run
    python train.py labels --help                                  # the tools: labels, fit, rounds, search-labels,
    python train.py --help                                         # distill

Outputs go to ``runs/<name>/``; ``agent.pt`` is the model to evaluate. A label_rounds run resumes when its command is
run again; a PPO run with ``--resume runs/<name>/last.pt``. Exit codes: 0 finished, 2 bad config/file/checkpoint,
130 interrupted (Ctrl-C or SIGTERM; the message says how to resume).
"""

import sys

from rook_env.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
