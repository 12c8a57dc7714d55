"""Command-line front ends, installed as console scripts and run from the checkout as scripts:

- ``rook-eval`` / ``python evaluate.py``: :func:`rook_env.cli.evaluate.main`;
- ``rook-play`` / ``python play.py``: :func:`rook_env.cli.play.main`.
"""
