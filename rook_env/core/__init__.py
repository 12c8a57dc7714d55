"""The trick-taking core both games are built from.

- :mod:`rook_env.core.flags`: integer checks and the rule flags every game takes;
- :mod:`rook_env.core.deck`: the Rook deck (colours, ranks, counters, card names) and the action ids
  every game shares;
- :mod:`rook_env.core.rules`: :class:`~rook_env.core.rules.TrickState`, the deal, auction, nest
  exchange and trick play, with hooks for what a game changes;
- :mod:`rook_env.core.aec`: :class:`~rook_env.core.aec.TrickTakingEnv`, the PettingZoo AEC wrapper.

A game is a small module of what differs, registered in :mod:`rook_env.games`
(``docs/adding_a_game.md`` shows the shape of one).
"""
