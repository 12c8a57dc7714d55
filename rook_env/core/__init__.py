"""The trick-taking core both games are built from.

- :mod:`rook_env.core.flags`: integer checks and the rule flags every game takes;
- :mod:`rook_env.core.deck`: the Rook deck (colours, ranks, counters, card names) and the action ids
  every game shares;
- :mod:`rook_env.core.rules`: :class:`~rook_env.core.rules.TrickState`, the deal, auction, nest
  exchange and trick play, with hooks for what a game changes;
- :mod:`rook_env.core.aec`: :class:`~rook_env.core.aec.TrickTakingEnv`, the PettingZoo AEC wrapper;
- :mod:`rook_env.core.vector`: :class:`~rook_env.core.vector.RookVectorEnv`, the batched engine's shared part,
  and :mod:`rook_env.core.kernels`, numba's one import and the kernels every engine shares;
- :mod:`rook_env.core.render` and :mod:`rook_env.core.drawing`: the table views every game shares (text, scenes)
  and the drawn table;
- :mod:`rook_env.core.loop`: the play loop (observe, act, step) of evaluation and play;
- :mod:`rook_env.core.registry`: :class:`~rook_env.core.registry.GameSpec`, the registry every game registers in.

The core imports nothing above it and names no game (``tests/test_layers.py``). A game is a package of
what differs under :mod:`rook_env.games` (``docs/adding_a_game.md`` shows the shape of one).
"""
