"""Command-line front ends, installed as console scripts and run from the checkout as scripts:

- ``rook-eval`` / ``python evaluate.py``: :func:`rook_env.cli.evaluate.main`;
- ``rook-play`` / ``python play.py``: :func:`rook_env.cli.play.main` (the terminal session of
  :mod:`rook_env.cli.session`, with each game's part: :mod:`rook_env.games.partnership.play`,
  :mod:`rook_env.games.call_partner.play`);
- ``python -m rook_env.cli.replay``: hands recorded as one HTML replay (:mod:`rook_env.cli.replay`);
- ``python -m rook_env.cli.render_image``: a PNG of a table (:mod:`rook_env.cli.render_image`).

Every command line offers the games of the registry (:mod:`rook_env.games`) through ``--game`` and
``--players`` (:mod:`rook_env.cli.common`).
"""
