"""The batched engine: ``num_envs`` tables of one game stepped together, one class for every game.

``RookVectorEnv`` takes the same game arguments as ``rook_env.env`` / ``raw_env`` (``game=``,
``players=``, the rule flags) and returns that game's engine, read from the game registry
(:mod:`rook_env.games`, the spec's ``vector`` part): :mod:`rook_env.games.partnership.vector`
(vectorised numpy, with optional numba kernels) or :mod:`rook_env.games.call_partner.vector` (one
rules state per table). What every game shares (arguments and their errors, ``reset``, the step
loop with auto-reset and illegal actions, the views) is :mod:`rook_env.core.vector`. numpy only
(no torch).

API (in the style of gymnasium's vector environments and Pgx; ``N = num_envs``, ``n`` seats
(4 for the partnership game, ``players`` for call-your-partner), ``D = obs_dim``,
``A = n_actions``)::

    from rook_env.vector import RookVectorEnv, sample_legal

    env = RookVectorEnv(N, game="partnership", players=None, max_hands=None, illegal_action="raise",
                        illegal_reward=-1.0, deal_source=None, backend="auto", **flags)
    obs, info = env.reset(seed=None, options=None)
    obs, rewards, terminated, truncated, info = env.step(actions)

    env = RookVectorEnv(256, game="call_partner", players=5, episode="game")   # the other game

- ``game``: a registered game (default ``"partnership"``); ``players``: its table size (the
  partnership game is played by 4); flags: the game's rule flags. Errors are those of
  ``rook_env.env``: an unknown flag names the game that has it.
- ``backend``: ``"numba"`` runs the partnership engine's hot paths as the compiled kernels of
  :mod:`rook_env.games.partnership.kernels` (numba, imported and compiled on the first such engine), ``"numpy"``
  the reference they mirror, ``"auto"`` numba where installed. Call-your-partner has no kernels:
  ``"auto"`` and ``"numpy"`` run it, ``"numba"`` is an error.
- ``obs``: ``(N, D)`` float32, the observation of the seat to act at every table, bit for bit
  that of ``raw_env`` (the lock-step tests check it).
- ``info["seat"]``: ``(N,)`` int64, that seat (absolute, 0..n-1).
- ``info["action_mask"]``: ``(N, A)`` int8, its legal actions.
- ``actions``: ``(N,)`` integers, one action per table for its seat to act.
- ``rewards``: ``(N, n)`` float32 for the absolute seats; non-zero only on the step that ends
  a hand (or on an illegal action in ``"terminate"`` mode), with the flag ``reward``'s meaning
  exactly as in ``raw_env``.
- ``terminated`` / ``truncated``: ``(N,)`` bool; the episode (a hand, or a game with
  ``episode="game"``) ended / was cut by ``max_hands``.
- ``info["hand_over"]``: ``(N,)`` bool, a hand was finished on this step (in game episodes
  also hands that do not end the game); ``info["hand"]``: the finished hands' facts, with
  ``raw_env``'s ``infos[agent]["hand"]`` keys (the partnership engine: a dict of arrays, see
  :mod:`rook_env.games.partnership.vector`; call-your-partner: a list of ``N`` dicts or ``None``).
- ``info["illegal"]``: ``(N,)`` bool, the table's action was illegal (``"terminate"`` mode).

Auto-reset: a table whose episode ends on a step (``terminated | truncated``) is reset in
that same step: its ``rewards`` and ``info["hand"]`` describe the hand that just ended,
while ``obs``, ``info["seat"]`` and ``info["action_mask"]`` are already the first
decision of the next episode (a new deal, a new random first dealer, scores 0). Inside a
game episode the next hand is dealt as in ``raw_env`` (dealer rotated, scores kept), and a
redeal deals again within the same step. The final observation of an ended episode is not
returned (nothing follows a terminal decision).

Illegal actions: ``illegal_action="raise"`` (default) raises ``ValueError`` naming every
offending table, its action, seat, phase and legal actions, and applies nothing on any
table for that call. ``illegal_action="terminate"`` follows ``rook_env.env()``
(PettingZoo's ``TerminateIllegalWrapper``): the offending table's episode ends
(``terminated``), its offender receives ``illegal_reward`` and the other seats 0,
``info["illegal"]`` marks it, and it is reset; the other tables step normally. Actions
that are not integers or lie outside ``0..A-1`` always raise.

Deals: seeded by ``reset(seed)``; the same seed, ``N`` and actions give the same deals.
``reset(options=[...])`` fixes per-table deals with ``raw_env``'s keys ``hands``, ``nest``,
``dealer`` and ``scores`` (:data:`OPTION_KEYS`; ``None`` entries: random), validated with
``raw_env``'s errors. ``deal_source(tables, new_game)`` (partnership game; tests and duplicate
evaluation) is called whenever tables need a deal after ``reset``: ``tables`` are their
indices, ``new_game`` marks a new episode (else a redeal or the next hand of a game); it
returns one entry per table, ``None`` (draw) or a dict of the same keys (``dealer``/``scores``
only for a new game).

Other members: ``observe(seat)`` ``(N, D)`` (an int seat, or one seat per table),
``state_for(seat)`` ``(N, state_dim)`` (``raw_env.state_for``'s layout, for central critics),
``current_player`` / ``action_mask`` / ``observation`` (copies of the latest ones), ``phase``,
``game``, ``backend``, ``n_seats``, ``obs_dim``, ``n_actions``, ``state_dim``,
``single_observation_space``, ``single_action_space``, ``config``, ``layout``, ``obs_layout``;
each game's engine adds its own (see its module).

Helpers: :func:`sample_legal` (one uniformly random legal action per row of a mask, compiled
where numba is installed) and :func:`pick_legal` (its numpy reference), :func:`check_actions`.
"""

from __future__ import annotations

from rook_env.core.vector import (BACKENDS, ILLEGAL_MODES, OPTION_KEYS, RookVectorEnv, check_actions, engine_class,
                                  pick_legal, sample_legal, unpack_bits)

__all__ = ["BACKENDS", "ILLEGAL_MODES", "OPTION_KEYS", "RookVectorEnv", "check_actions", "engine_class",
           "pick_legal", "sample_legal", "unpack_bits"]
