"""Play Rook in the terminal from the checkout: ``python play.py --help`` (installed: ``rook-play``).

The code lives in the package: :mod:`rook_env.cli.play`.
"""

import sys

from rook_env.cli.play import main

if __name__ == "__main__":
    sys.exit(main())
