"""Evaluate Rook agents from the checkout: ``python evaluate.py --help`` (installed: ``rook-eval``).

The code lives in the package: :mod:`rook_env.cli.evaluate` (command line) and :mod:`rook_env.evaluation`.
"""

import sys

from rook_env.cli.evaluate import main

if __name__ == "__main__":
    sys.exit(main())
