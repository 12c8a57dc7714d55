"""Shared helpers of the environment and game tests (``from helpers import ...``).

- The games: ``GAMES`` (the registered games, each a pytest parameter marked with its name, so that
  ``pytest -m call_partner`` runs one game's cases), ``over_games`` (a test's cases for every game) and
  ``per_game`` (a table with one entry per game, checked to name every game).
- Positions: ``positions`` walks a game's environment with seeded random legal moves and yields every
  position on the way; ``state_positions`` / ``play_random`` do the same on a rules state. The tests that
  walk hands (hidden information, observations, masks, errors, rewards) share them.
- Fixed deals are written with card names (``R14``, ``B5``, ``Rook``) and turned into ids by
  ``layout.parse_card``; actions are driven by id through the environment (``parse_action``):
  ``complete_deal`` / ``state_in_play`` and the designed deals of RULES.md for the partnership game,
  ``cp_deal`` / ``scripted_setup`` for call-your-partner Rook.
- The hidden-card shuffles of the agent information tests (``shuffle_hidden``, ``seat_observation``).

pytest puts ``tests/`` on the import path (the test folder is not a package), so test modules
import this module by name; ``conftest.py`` registers the games' markers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import rook_env
from rook_env.games import game_names, get_game
from rook_env.games.call_partner import rules as cp_rules
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.layout import layout_for as cp_layout_for
from rook_env.games.partnership.cards import DEFAULT_LAYOUT, bits
from rook_env.games.partnership.config import RookConfig
from rook_env.games.partnership.rules import BID, DISCARD, PLAY, TRUMP, RookState

L = DEFAULT_LAYOUT
bits_of = bits  # the set bits of a card mask, ascending (either game's cards)


# ---------------------------------------------------------------------------------------------
# The games. GAMES is read when this module is first imported (conftest.py imports it before any
# test module), so a game a test registers for itself (test_adding_a_game.py, test_play.py) is not
# among them.
GAME_NAMES: tuple[str, ...] = game_names()


def game_param(game: str, *values: Any, id: str | None = None) -> Any:
    """A pytest parameter ``(game, *values)`` marked with the game's name (``pytest -m <game>``)."""
    return pytest.param(game, *values, marks=getattr(pytest.mark, game), id=id or game)


GAMES = [game_param(g) for g in GAME_NAMES]


def per_game(table: dict[str, Any]) -> dict[str, Any]:
    """``table`` (one entry per game), refused unless it names exactly the registered games: a game added to the
    registry must bring its own cases to the tests that are parametrized over the games."""
    if set(table) != set(GAME_NAMES):
        raise ValueError(f"a per-game table must name every game {GAME_NAMES}, got {tuple(table)}")
    return table


def over_games(table: dict[str, Sequence[Any]], ids: Any = None) -> list[Any]:
    """pytest parameters ``(game, case)`` (or ``(game, *case)`` for tuple cases) for every case of every game of
    ``table`` (see :func:`per_game`), marked with the game; ``ids(case)`` names a case (its index otherwise)."""
    out = []
    for game, cases in per_game(table).items():
        for k, case in enumerate(cases):
            values = case if isinstance(case, tuple) else (case,)
            name = ids(case) if ids is not None else str(k)
            out.append(game_param(game, *values, id=f"{game}-{name}"))
    return out


def make_env(game: str, checked: bool = False, **kwargs: Any):
    """``rook_env.raw_env`` (or the checked ``rook_env.env``) of ``game``."""
    return (rook_env.env if checked else rook_env.raw_env)(game=game, **kwargs)


def encoder(game: str):
    """The game's reference observation encoder, ``encode(state, seat)`` (in its observation module)."""
    import importlib

    return importlib.import_module(get_game(game).obs_layout.__module__).encode


# ---------------------------------------------------------------------------------------------
# Positions: random legal play, through an environment or on a rules state.
def episode_over(e) -> bool:
    """Whether the environment's episode is over: no agent left, or every seat terminated or truncated."""
    return not e.agents or all(e.terminations.values()) or all(e.truncations.values())


def start(game, seed: int | None = 0, flags: dict | None = None, options: dict | None = None):
    """``game`` itself if it is an environment; otherwise a new ``raw_env`` of the game named ``game`` with
    ``flags``, reset with ``seed`` and ``options``."""
    if not isinstance(game, str):
        return game
    e = make_env(game, **(flags or {}))
    e.reset(seed=seed, options=options)
    return e


def positions(game, seed: int = 0, steps: int | None = None, *, flags: dict | None = None,
              options: dict | None = None, setup=None, rng: random.Random | None = None) -> Iterator[tuple[Any, int]]:
    """The positions of a random walk through a game: yields ``(env, seat)`` before each move, ``seat`` the
    seat to act, then plays a random legal move (``rng.choice`` of the rules' legal actions).

    ``game``: a game's name (a new environment, see :func:`start`) or an environment already reset.
    ``setup(state)``: applied to the rules state first (a scripted auction). ``rng``: the move generator
    (``random.Random(seed)`` by default). The walk stops when the episode is over (:func:`episode_over`) or
    after ``steps`` moves; the environment then holds the last position.
    """
    e = start(game, seed, flags, options)
    if setup is not None:
        setup(e.unwrapped.game)
    rng = random.Random(seed) if rng is None else rng
    moves = 0
    while not episode_over(e) and (steps is None or moves < steps):
        state = e.unwrapped.game
        yield e, state.current
        e.step(rng.choice(state.legal_actions()))
        moves += 1


def walk(game, seed: int = 0, steps: int | None = None, *, flags: dict | None = None, options: dict | None = None,
         **kwargs: Any):
    """:func:`positions` to the walk's end; returns the environment."""
    e = start(game, seed, flags, options)
    for _ in positions(e, seed, steps, **kwargs):
        pass
    return e


def _random_moves(st, rng: random.Random, max_steps: int) -> Iterator[int]:
    """Random legal moves on a rules state: yields each before applying it, until the state is over."""
    for _ in range(max_steps):
        if st.is_over:
            return
        a = rng.choice(st.legal_actions())
        yield a
        st.apply(a)
    raise AssertionError("the game did not end")


def state_positions(st, rng: random.Random, max_steps: int = 100_000) -> Iterator[tuple[Any, int]]:
    """The positions of a random walk on a rules state (either game's): yields ``(state, seat to act)`` before
    each move, until the state is over."""
    for _ in _random_moves(st, rng, max_steps):
        yield st, st.current


def play_random(st, rng: random.Random, max_steps: int = 100_000) -> list[int]:
    """Apply random legal actions to a rules state (either game's) until it is over; returns the actions."""
    return list(_random_moves(st, rng, max_steps))


# ---------------------------------------------------------------------------------------------
# Command lines and agents of the tests.
def usage_error(main, argv, capsys, **kwargs: Any) -> str:
    """What ``main(argv, **kwargs)`` writes to stderr when it refuses its command line: it must exit with
    argparse's status 2 and no traceback."""
    with pytest.raises(SystemExit) as exc:
        main(argv, **kwargs)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def unseeded_agent():
    """A fresh agent class that ignores its seed (its moves come from one generator of the class): the replay of
    a hand it played cannot match."""

    class Unseeded:
        name = "unseeded"
        rng = np.random.default_rng(0)

        def __init__(self, seed=None):
            pass

        def act(self, obs, info=None):
            legal = np.flatnonzero(obs["action_mask"])
            return int(legal[Unseeded.rng.integers(legal.size)])

    return Unseeded


# ---------------------------------------------------------------------------------------------
# Fixed deals.
def ids(text: str, layout=L) -> list[int]:
    """Card ids of a space-separated list of card names."""
    return [layout.parse_card(t) for t in text.split()]


def fill_deal(layout, seats: int, fixed: dict[int, str], nest: str, nest_size: int):
    """A legal deal of ``layout``'s deck to ``seats`` hands and a nest of ``nest_size`` cards where seat ``s``
    holds the cards named in ``fixed[s]`` and the nest holds ``nest``; the remaining cards are filled in id
    order. Returns ``(hands, nest)`` as id lists."""
    hands = [ids(fixed.get(s, ""), layout) for s in range(seats)]
    nest_ids = ids(nest, layout)
    used = {c for h in hands for c in h} | set(nest_ids)
    assert len(used) == sum(map(len, hands)) + len(nest_ids), "a card is named twice"
    rest = [c for c in range(layout.n_cards) if c not in used]
    for h in hands:
        while len(h) < layout.hand_size:
            h.append(rest.pop(0))
    while len(nest_ids) < nest_size:
        nest_ids.append(rest.pop(0))
    assert not rest
    return hands, nest_ids


def deal_from_tricks(tricks: Sequence[tuple[dict[int, str], int]], nest: str, layout=L):
    """The hands that play exactly ``tricks`` (each ``({seat: card name}, expected winner)``).

    The nest is given too; the bidder is expected to discard the nest cards again, so no hand
    changes through the nest. Returns ``(hands, nest)`` as card-id lists for ``reset(options=...)``.
    """
    hands: list[list[int]] = [[], [], [], []]
    for cards, _winner in tricks:
        assert sorted(cards) == [0, 1, 2, 3]
        for seat, name in cards.items():
            hands[seat].append(layout.parse_card(name))
    return hands, ids(nest, layout)


def complete_deal(fixed: dict[int, str], nest: str = "", layout=L):
    """A legal partnership deal (four hands, a nest of five) where seat ``s`` holds the cards named in
    ``fixed[s]`` (and the nest holds ``nest``); the remaining cards are filled in id order. Returns
    ``(hands, nest)`` as id lists."""
    return fill_deal(layout, 4, fixed, nest, 5)


def step_text(e, *actions: str) -> None:
    """Step the env with actions given as text (``"bid 85"``, ``"pass"``, ``"R14"``, ``"trump black"``)."""
    for a in actions:
        e.step(e.unwrapped.layout.parse_action(a))


def play_tricks(e, tricks: Sequence[tuple[dict[int, str], int]]) -> None:
    """Play the scripted tricks through the env: each seat plays its card of the current trick,
    and after every trick the expected winner must lead (or the hand must be over)."""
    game = e.unwrapped.game
    L_ = e.unwrapped.layout
    for k, (cards, winner) in enumerate(tricks):
        for _ in range(4):
            seat = int(e.agent_selection.split("_")[1])
            e.step(L_.parse_card(cards[seat]))
        if k < len(tricks) - 1:
            assert game.leader == winner, f"trick {k + 1}: expected player_{winner} to win"
        else:  # the hand is scored (and in a game the next one may already be dealt)
            assert game.hand_result is not None
            assert game.hand_result["last_trick_team"] == winner % 2, "last trick: wrong winner"


# ---------------------------------------------------------------------------------------------
# Designed deals for the worked scoring examples of RULES.md. Dealer 3, so player_0 bids first and
# leads trick one; player_0 bids, the others pass; the nest holds no counter (R6 R7 Y6 Y7 G6) and
# player_0 lays the same five cards down again; trump is black. Every trick but the last is all of
# one colour (everyone follows), the last is one card each, so every scripted card is legal.
# Counters per trick are noted as team0 / team1.
NEST = "R6 R7 Y6 Y7 G6"

_RED = [
    ({0: "R14", 1: "R5", 2: "R10", 3: "R8"}, 0),  # 25 / -
    ({0: "R9", 1: "R11", 2: "R13", 3: "R12"}, 2),  # 0 / -
]
_BLACK = [
    ({2: "B14", 3: "B5", 0: "B10", 1: "B8"}, 2),  # 25 / -
    ({2: "B9", 3: "B11", 0: "B13", 1: "B12"}, 0),  # 0 / -
]

# Bid 85: team 0 captures 90, team 1 30.
DEAL_90_30 = _RED + _BLACK + [
    ({0: "G5", 1: "G8", 2: "G9", 3: "G11"}, 3),  # - / 5
    ({3: "Y14", 0: "Y5", 1: "Y10", 2: "Y8"}, 3),  # - / 25
    ({3: "Y9", 0: "Y11", 1: "Y12", 2: "Y13"}, 2),  # 0 / -
    ({2: "G14", 3: "G10", 0: "G12", 1: "G13"}, 2),  # 20 / -
    ({2: "G7", 3: "B6", 0: "Rook", 1: "B7"}, 0),  # 20 (+ nest 0) / -
]
# Bid 85: team 0 captures 80, team 1 40 (G9 and G10 swapped).
DEAL_80_40 = _RED + _BLACK + [
    ({0: "G5", 1: "G8", 2: "G10", 3: "G11"}, 3),  # - / 15
    ({3: "Y14", 0: "Y5", 1: "Y10", 2: "Y8"}, 3),  # - / 25
    ({3: "Y9", 0: "Y11", 1: "Y12", 2: "Y13"}, 2),  # 0 / -
    ({2: "G14", 3: "G9", 0: "G12", 1: "G13"}, 2),  # 10 / -
    ({2: "G7", 3: "B6", 0: "Rook", 1: "B7"}, 0),  # 20 / -
]
# Bid 90: team 0 captures 105, team 1 15.
DEAL_105_15 = _RED + _BLACK + [
    ({0: "G5", 1: "G8", 2: "G9", 3: "G11"}, 3),  # - / 5
    ({3: "Y14", 0: "Y8", 1: "Y9", 2: "Y11"}, 3),  # - / 10
    ({3: "Y12", 0: "Y5", 1: "Y10", 2: "Y13"}, 2),  # 15 / -
    ({2: "G14", 3: "G10", 0: "G12", 1: "G13"}, 2),  # 20 / -
    ({2: "G7", 3: "B6", 0: "Rook", 1: "B7"}, 0),  # 20 / -
]
# Bid 95: team 0 captures 75, team 1 45 (the Rook falls to player_3 in the last trick).
DEAL_75_45 = _RED + _BLACK + [
    ({0: "G5", 1: "G8", 2: "G10", 3: "G11"}, 3),  # - / 15
    ({3: "Y14", 0: "Y8", 1: "Y9", 2: "Y11"}, 3),  # - / 10
    ({3: "Y12", 0: "Y5", 1: "Y10", 2: "Y13"}, 2),  # 15 / -
    ({2: "G14", 3: "G9", 0: "G12", 1: "G13"}, 2),  # 10 / -
    ({2: "G7", 3: "Rook", 0: "B6", 1: "B7"}, 3),  # - / 20
]
# Bid 100: team 0 captures exactly 100, team 1 20.
DEAL_100_20 = _RED + _BLACK + [
    ({0: "G8", 1: "G9", 2: "G10", 3: "G11"}, 3),  # - / 10
    ({3: "Y14", 0: "Y8", 1: "Y9", 2: "Y11"}, 3),  # - / 10
    ({3: "Y12", 0: "Y5", 1: "Y10", 2: "Y13"}, 2),  # 15 / -
    ({2: "G14", 3: "G5", 0: "G12", 1: "G13"}, 2),  # 15 / -
    ({2: "G7", 3: "B6", 0: "Rook", 1: "B7"}, 0),  # 20 / -
]


def play_designed_hand(e, tricks, bid: int, scores=None, nest: str = NEST) -> None:
    """Reset ``e`` with a designed deal (dealer 3), player_0 bids ``bid``, the others pass,
    player_0 lays the nest down again, names black, and the scripted tricks are played."""
    hands, nest_ids = deal_from_tricks(tricks, nest)
    options = {"hands": hands, "nest": nest_ids, "dealer": 3}
    if scores is not None:
        options["scores"] = list(scores)
    e.reset(seed=0, options=options)
    step_text(e, f"bid {bid}", "pass", "pass", "pass")
    game = e.unwrapped.game
    if game.config.nest_discard == "no_counters_unless_forced":
        step_text(e, "trump black", *nest.split())
    else:
        step_text(e, *nest.split(), "trump black")
    assert game.trump == 3 and game.bidder == 0
    play_tricks(e, tricks)


def state_in_play(fixed: dict[int, str], trump: str, nest: str = "", config: RookConfig | None = None,
                  dealer: int = 3) -> RookState:
    """A RookState driven legally into the first trick: ``fixed`` cards dealt (the rest filled),
    the seat left of the dealer bids the minimum, the others pass, the bidder lays the nest down
    again and names ``trump`` (a colour name)."""
    cfg = config or RookConfig()
    Lc = rook_env.layout_for(cfg)
    hands, nest_ids = complete_deal(fixed, nest, Lc)
    st = RookState(cfg)
    st.new_game(dealer=dealer, hands=hands, nest=nest_ids)
    st.apply(Lc.BID0)
    for _ in range(3):
        st.apply(Lc.PASS)
    setup = [Lc.parse_action(f"trump {trump}")]
    if cfg.nest_discard == "no_counters_unless_forced":
        setup = setup + nest_ids
    else:
        setup = nest_ids + setup
    for a in setup:
        st.apply(a)
    assert st.phase == PLAY
    return st


# ---------------------------------------------------------------- hidden-card shuffles (agent information tests)
def hidden_from(st: RookState, me: int) -> tuple[list[int], int]:
    """Seats (other than ``me``) whose cards are hidden, and whether the nest is hidden."""
    nest_hidden = not (st.bidder == me and st.phase != BID)
    return [s for s in range(4) if s != me], nest_hidden


def shuffle_hidden(st: RookState, me: int, rng: random.Random) -> RookState:
    """A copy of ``st`` with the cards ``me`` cannot see permuted among their holders."""
    new = st.clone()
    others, nest_hidden = hidden_from(st, me)
    if st.phase == BID:
        # during the auction the nest lies face down
        pool_holders = [("hand", s) for s in others] + [("nest", None)]
    elif st.phase in (DISCARD, TRUMP) and st.bidder != me:
        pool_holders = [("hand", s) for s in others if s != st.bidder]
    else:
        pool_holders = [("hand", s) for s in others]
        if nest_hidden and st.phase == PLAY:
            pool_holders.append(("discards", None))
    masks = []
    for kind, s in pool_holders:
        masks.append(st.hands[s] if kind == "hand" else (st.nest if kind == "nest" else st.discards))
    cards = [c for m in masks for c in bits(m)]
    rng.shuffle(cards)
    i = 0
    for (kind, s), m in zip(pool_holders, masks):
        k = m.bit_count()
        new_mask = sum(1 << c for c in cards[i:i + k])
        i += k
        if kind == "hand":
            new.hands[s] = new_mask
        elif kind == "nest":
            new.nest = new_mask
        else:
            new.discards = new_mask
    return new


def legal_mask_array(st: RookState) -> np.ndarray:
    m = st.legal_mask()
    return np.array([(m >> a) & 1 for a in range(st.L.n_actions)], np.int8)


def seat_observation(st: RookState, me: int) -> dict:
    """Seat ``me``'s observation dict of ``st`` (as the environment gives it): its vector and action mask."""
    from rook_env.games.partnership.observation import encode

    return {"observation": encode(st, me), "action_mask": legal_mask_array(st)}


def actions_of(agents, hands: int = 2) -> list[int]:
    """The actions ``agents`` (one a seat of the partnership game, reset before each hand) play in the hands dealt
    from seeds ``0 .. hands - 1``: a determinism test compares two such lists."""
    e = rook_env.raw_env()
    out = []
    for h in range(hands):
        e.reset(seed=h)
        for agent in agents:
            agent.reset()
        while not e.game.is_over:
            action = agents[e.game.current].act(e.observe(e.agent_selection))
            out.append(action)
            e.step(action)
    return out


def play_with_hidden_twins(config: RookConfig, agents, deals: int, rng: random.Random, share: float, check,
                           phase: int | None = None) -> None:
    """Hands of the partnership game dealt by ``RookState(config, seed=d)`` for ``d < deals`` and played by
    ``agents`` (one a seat, reset at each deal): the shared walk of the agent information tests.

    At a ``share`` of the decisions (drawn from ``rng``; only in ``phase`` if given) ``check(state, seat, obs,
    twin, twin_obs)`` decides the move, ``twin`` a copy of the state with the cards the seat cannot see permuted
    (:func:`shuffle_hidden`) and ``obs`` / ``twin_obs`` the seat's observations of both; the seat's agent
    decides the other moves.
    """
    for d in range(deals):
        st = RookState(config, seed=d)
        st.new_game()
        for agent in agents:
            agent.reset()
        while not st.is_over:
            me = st.current
            obs = seat_observation(st, me)
            if (phase is None or st.phase == phase) and rng.random() < share:
                twin = shuffle_hidden(st, me, rng)
                action = check(st, me, obs, twin, seat_observation(twin, me))
            else:
                action = agents[me].act(obs)
            st.apply(action)


def strict_search(seed: int = 0, samples: int = 4, **kw):
    """A SearchAgent whose internal errors raise instead of falling back (its heuristic's too)."""
    from rook_env.agents.search import SearchAgent

    ag = SearchAgent(seed=seed, samples=samples, **kw)
    ag.strict = True
    ag.heuristic.strict = True
    return ag


# ---------------------------------------------------------------------------------------------
# Call-your-partner Rook: fixed deals by card name, a scripted set-up.
def cp_ids(text: str, layout) -> list[int]:
    return ids(text, layout)


def cp_deal(config: CallPartnerConfig, fixed: dict[int, str] | None = None, nest: str = ""):
    """A legal call-your-partner deal where seat ``s`` holds the cards named in ``fixed[s]`` and the nest holds
    ``nest``; the rest is filled in id order. Returns ``(hands, nest)`` as id lists."""
    L = cp_layout_for(config)
    return fill_deal(L, config.players, fixed or {}, nest, L.nest_size)


def scripted_setup(st, bid: int | None = None, discards: Iterable[int] | None = None,
                   trump: int = 0, rook: str = "high", called: Iterable[int] | None = None,
                   stop_at_call: bool = False) -> None:
    """From a fresh deal: the seat left of the dealer bids (the minimum by default), the others
    pass; the bidder discards ``discards`` (default: the nest as dealt, as far as the discard rule
    allows, then the lowest legal cards), names ``trump``, the
    Rook's rank and calls ``called`` (default: the lowest legal card(s)); ``stop_at_call``: stop
    in the call phase."""
    L = st.L
    assert st.phase == cp_rules.BID and not st.bid_history
    st.apply(L.bid_action(bid or L.bids[0]))
    for _ in range(st.n - 1):
        st.apply(L.PASS)
    for _ in range(4):
        if st.phase == cp_rules.DISCARD:
            if discards is not None:
                for c in discards:
                    st.apply(c)
                continue
            nest = bits_of(st.nest)
            while st.phase == cp_rules.DISCARD:
                legal = st.legal_actions()
                st.apply(next((c for c in nest if c in legal), legal[0]))
        elif st.phase == cp_rules.TRUMP:
            st.apply(L.TRUMP0 + trump)
        elif st.phase == cp_rules.ROOK:
            st.apply(L.ROOK_HIGH if rook == "high" else L.ROOK_LOW)
        elif st.phase == cp_rules.CALL:
            if stop_at_call:
                return
            for c in (called if called is not None else [None] * st.config.n_called):
                st.apply(st.legal_actions()[0] if c is None else c)
    assert st.phase == cp_rules.PLAY


def api_conformance(env, num_cycles: int) -> None:
    """PettingZoo's ``api_test``. It resets with ``options={"options": 1}`` to see that ``reset`` takes the
    keyword; the environment warns that it ignores that unknown option (nothing is silently dropped), and that
    one warning is expected here, any other one is not caught."""
    from pettingzoo.test import api_test

    with pytest.warns(UserWarning, match=r"ignoring unknown reset option\(s\) 'options'"):
        api_test(env, num_cycles=num_cycles)
