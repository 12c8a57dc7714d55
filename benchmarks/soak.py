"""Soak test: random hands under every flag combination, every invariant checked at every step.

Not a unit test: a script that plays ``--hands`` finished hands in all, split evenly over the drivers
and, within a driver, over the flag combinations, and prints what it checked, hands per second and a
verdict. Exit status 1 on FAIL.

Flag combinations (``flag_combinations``; ``--combinations K`` keeps a seeded sample of K of them):
- every combination of the Kentucky Discard flags F1-F12 of RULES.md (864: ``all_pass``,
  ``no_counter_redeal``, ``nest_discard``, ``first_lead``, ``rook_rank``, ``deck``, ``episode``,
  ``reward``) with the other games' flags F13-F20 at their defaults;
- every valid combination of the other games' flags F13-F20 (``rook_bird``, ``nest``, ``ones``,
  ``card_names``, ``black_two_trump``, ``red_two_little_rook``, ``trump_calls``, ``circus_rook``, with
  ``deck``; 86 besides the default game), each crossed with ``BASE_PER_GAME`` F1-F12 combinations
  drawn (seeded) from those valid with it, so that F13-F20 meet every F1-F12 value without the
  product (about 75,000) swamping the soak;
- every preset (F21) crossed the same way with drawn F1-F12 combinations (the preset's own flags kept).
Each combination also draws its bonuses (F9, F10), target score and, in game episodes, ``max_hands``.

Checked at every step, for every seat (the expected values come from RULES.md, written out here
independently of the package: deck and nest sizes, counters per card, bid ranges, action ids,
trump contracts):
- the configuration: deck size, nest size (none with ``nest="off"``), hand size, counter points per
  card and in all (2s, low 1s and the black 2 worth 0), the default bid range (F2, F13, F15), the
  number of contracts (4, or 10 with ``trump_calls="extended"``) and the action ids;
- legal masks: only the seat to act has a non-zero mask (none once the episode is over), equal to
  the legal set recomputed here from the position: bids above the high bid, the forced dealer, the
  no-counter redeal; the German discard rule; the contracts and ``circus``; following the led
  card's effective suit under colour, low and no-trump contracts (the Rook Bird, the little rook),
  with the high Rook Bird playable at any time;
- card conservation: hands, nest, discards, played cards and the circus cards set aside
  partition the deck; at a deal every hand and the nest have their sizes;
- observation bounds: finite and inside the observation space's Box; the phase entry is the phase;
- hidden information: a seat's hand section is exactly its hand; the nest and discards appear only
  for the bidder after the auction (and then exactly); the trick and played sections show exactly
  the cards on the table and played; no section shows a card of another seat's hand; with Circus
  Rook, a passed card appears only in its giver's ``passed`` and (after delivery) its receiver's
  ``received`` section, and ``circus`` is public.
Checked at every hand end: counters (deck total) and tricks (hand size) sum up; bonuses; the bid is
in the bid range; the score change follows the bid (made: what was taken, bonuses included; set:
minus the bid); the result's trump is the named contract's (-1 in no trump); game scores add up;
rewards follow the ``reward`` flag (``score_diff`` and ``win_loss`` zero-sum, partners equal); a
game episode ends terminated (a winner) or truncated (``max_hands``).
From time to time an illegal action is tried: ``raw_env`` must raise and change nothing; ``env()``
(on a copy) must end the episode with the penalty; the batched engine with ``illegal_action="raise"``
must raise and change nothing at any table, and (on a copy) with ``"terminate"`` end that table's
episode with the penalty. Memory: process RSS after a warm-up and at the end (``--tracemalloc``
adds the Python heap), flat within ``--memory-slack-mib``.

Drivers (``DRIVERS``): ``raw_env`` and ``env()`` play through the AEC API; ``vector`` plays up to
``VECTOR_TABLES`` tables of :class:`rook_env.vector.RookVectorEnv` at once and yields the same
records for each table (all four seats through ``observe(seat)``). A driver is a function
``(flags, n_hands, rng) -> Iterator[Position | HandEnd | Note | Skip]``. A combination the batched
engine refuses as not supported (``ValueError`` at construction) is skipped and counted, so that a
flag the engine learns is soaked with no change here. A long soak prints a progress line every
tenth of the combinations.

Usage::

    python benchmarks/soak.py --hands 30000                  # 10,000 hands per driver
    python benchmarks/soak.py --hands 200000 --json soak.json
    python benchmarks/soak.py --drivers vector --hands 5000  # one driver
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import math
import os
import platform
import random
import resource
import sys
import time
import tracemalloc
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

import rook_env
from rook_env.games.partnership.cards import N_SEATS, bits, layout_for
from rook_env.games.partnership.config import CHOICES, PRESETS, RookConfig, make_config
from rook_env.games.partnership.observation import obs_layout
from rook_env.games.partnership.rules import BID, CIRCUS, DISCARD, OVER, PHASE_NAMES, PLAY, TRUMP
from rook_env.vector import RookVectorEnv

# The Kentucky Discard flags (RULES.md F1-F12): every combination (864).
BASE_FLAGS = ("all_pass", "no_counter_redeal", "nest_discard", "first_lead", "rook_rank", "deck", "episode", "reward")
# The other games' flags (F13-F20); with ``deck`` they make a "game". ``ones`` exists with the full deck only.
GAME_FLAGS = ("rook_bird", "nest", "card_names", "black_two_trump", "red_two_little_rook", "trump_calls",
              "circus_rook")
ONES_BY_DECK = {"tournament": (None,), "full": ("high", "low")}
BASE_PER_GAME = 8  # F1-F12 combinations drawn for each other game and each preset
VECTOR_TABLES = 16  # tables of the batched engine per combination (at most)
ILLEGAL_TRY_RATE = 0.01  # share of steps (per table) at which an illegal action is tried as well
MAX_VIOLATIONS_SHOWN = 20
UNSUPPORTED_HINT = "not supported"  # RookVectorEnv's refusal of a flag it does not implement yet

# ------------------------------------------------------------------------------ RULES.md facts
# Written out from RULES.md (R2, F8, F13, F15, D18), not taken from the package: per (deck, ones, rook_bird)
# the number of cards, the counter points in all and the default (min_bid, max_bid).
DECK_FACTS = {
    ("tournament", None, "on"): (41, 120, (70, 120)),
    ("tournament", None, "off"): (40, 100, (65, 100)),
    ("full", "high", "on"): (57, 180, (100, 180)),
    ("full", "high", "off"): (56, 160, (90, 160)),
    ("full", "low", "on"): (57, 120, (70, 120)),
    ("full", "low", "off"): (56, 100, (65, 100)),
}
DECK_RANKS = {"tournament": tuple(range(5, 15)), "full": tuple(range(1, 15))}
NEST_WITH_ROOK, NEST_WITHOUT_ROOK = 5, 4
N_COLOURS, RED, BLACK = 4, 0, 3
ROOK_POINTS = 20
N_CONTRACTS = {"colour": 4, "extended": 10}  # colours high; + the same low, no trump high, no trump low


class Reference:
    """What RULES.md says a configuration's deck, counters, bids, actions and contracts are."""

    def __init__(self, cfg: RookConfig, flags: dict[str, Any]) -> None:
        """``flags``: the flags the table was made with (a preset's included): bids not among them follow the deck."""
        self.cfg = cfg
        flags = {**PRESETS.get(flags.get("preset"), {}), **flags}
        rook = cfg.rook_bird == "on"
        ranks = DECK_RANKS[cfg.deck]
        self.n_ranks = len(ranks)
        self.n, total, default_bids = DECK_FACTS[(cfg.deck, cfg.ones, cfg.rook_bird)]
        self.total = total
        self.rook = self.n - 1 if rook else -1
        self.nest_size = 0 if cfg.nest == "off" else (NEST_WITH_ROOK if rook else NEST_WITHOUT_ROOK)
        self.hand_size = (self.n - self.nest_size) // N_SEATS
        rank_points = {5: 5, 10: 10, 14: 10, 1: 15 if cfg.ones == "high" else 0}
        self.points = tuple(rank_points.get(ranks[c % self.n_ranks], 0) for c in range(N_COLOURS * self.n_ranks))
        self.points += (ROOK_POINTS,) if rook else ()
        self.counter_mask = sum(1 << c for c, p in enumerate(self.points) if p)
        self.all_cards = (1 << self.n) - 1
        self.colour = tuple(c // self.n_ranks for c in range(N_COLOURS * self.n_ranks)) + ((-1,) if rook else ())
        low, high = flags.get("min_bid", default_bids[0]), flags.get("max_bid", default_bids[1])
        self.bids = tuple(range(low, high + 1, flags.get("bid_step", 5)))
        self.n_contracts = N_CONTRACTS[cfg.trump_calls]
        # Action ids in the order of RULES.md "Actions": cards, pass, bids, contracts, redeal, circus.
        self.PASS = self.n
        self.BID0 = self.n + 1
        self.TRUMP0 = self.BID0 + len(self.bids)
        self.REDEAL = self.TRUMP0 + self.n_contracts
        self.CIRCUS = self.REDEAL + 1 if cfg.circus_rook == "on" else -1
        self.n_actions = self.REDEAL + (2 if cfg.circus_rook == "on" else 1)
        self.bid_bits = ((1 << len(self.bids)) - 1) << self.BID0
        self.trump_bits = ((1 << self.n_contracts) - 1) << self.TRUMP0
        red_two = RED * self.n_ranks + ranks.index(2) if 2 in ranks else -1
        self.red_two = red_two if cfg.red_two_little_rook == "on" else -1
        # Per contract: the trump colour (-1: no trump), whether it is called low, each card's effective suit.
        self.trump, self.low, self.follow, self.trumps, self.any_time = [], [], [], [], []
        for k in range(self.n_contracts):
            t = k % N_COLOURS if k < 2 * N_COLOURS else -1
            low_call = N_COLOURS <= k < 2 * N_COLOURS or k == 2 * N_COLOURS + 1
            eff = [self._effective_suit(c, t) for c in range(self.n)]
            suit = [sum(1 << c for c in range(self.n) if eff[c] == s) for s in range(N_COLOURS)]
            self.trump.append(t)
            self.low.append(low_call)
            self.follow.append(tuple(suit[e] for e in eff))
            self.trumps.append(suit[t] if t >= 0 else 0)
            # F7, F19: only the Rook Bird of a colour contract called high, ranked high, may be played any time.
            self.any_time.append(1 << self.rook if rook and t >= 0 and not low_call and cfg.rook_rank == "high" else 0)

    def _effective_suit(self, card: int, trump: int) -> int:
        if card == self.rook:  # a trump; the "10.5 of red" in no trump (F19)
            return trump if trump >= 0 else RED
        if card == self.red_two and trump >= 0:  # the little rook follows trump (F18)
            return trump
        return self.colour[card]

    def legal(self, p: Position) -> int:
        """The legal actions of the seat to act, from the position alone."""
        cfg, phase = self.cfg, p.phase
        if phase == BID:
            hand = p.hands[p.current]
            redeal = 1 << self.REDEAL if cfg.no_counter_redeal == "on" and not hand & self.counter_mask else 0
            if p.n_passed == 3 and p.high_bid < 0:  # the forced dealer (all_pass="dealer_forced")
                return 1 << self.BID0 | redeal
            above = self.bid_bits & ~((1 << (self.BID0 + p.high_bid + 1)) - 1)
            return 1 << self.PASS | above | redeal
        if phase == DISCARD:
            hand = p.hands[p.bidder]
            if cfg.nest_discard == "any":
                return hand
            free = hand & ~self.counter_mask  # German rule: counters only when all left are counters or trumps
            return free if free & ~self.trumps[p.call] else hand
        if phase == TRUMP:
            return self.trump_bits | (1 << self.CIRCUS if self.CIRCUS >= 0 and not p.circus else 0)
        if phase == CIRCUS:
            return p.hands[p.current]
        if phase == PLAY:
            hand = p.hands[p.current]
            if not p.trick:
                return hand
            follow = hand & self.follow[p.call][p.trick[0]]
            return follow | (hand & self.any_time[p.call]) if follow else hand
        return 0


# ------------------------------------------------------------------------------ records
@dataclass
class Position:
    """The table before a step (ground truth) and what every seat observes of it."""

    config: RookConfig
    phase: int
    current: int
    bidder: int
    hands: tuple[int, ...]
    nest: int  # as dealt
    discards: int
    played: int
    high_bid: int  # level index, -1: none
    n_passed: int
    call: int  # contract index, -1: not named yet
    trick: tuple[int, ...]  # cards of the current trick in play order
    circus: bool  # circus called
    passing: tuple[int, ...]  # circus: the card each seat passed (-1: none yet), () outside a circus
    legal: int  # the engine's legal-action bitmask of the seat to act
    obs: np.ndarray  # (4, obs size): seat i's observation vector
    masks: np.ndarray  # (4, n_actions): seat i's action mask


@dataclass
class HandEnd:
    """A finished hand: the rules' result and the rewards the four seats were given for it."""

    config: RookConfig
    result: dict[str, Any]
    scores_before: tuple[int, int]
    rewards: tuple[float, float, float, float]
    episode_over: bool
    terminated: bool
    truncated: bool
    call: int  # the contract the hand was played under
    circus: bool


@dataclass
class Note:
    """The outcome of a driver's own check (an illegal-action try, ...): ``problem`` None when fine."""

    problem: str | None
    illegal_try: bool = True


@dataclass
class Skip:
    """The driver's engine refuses this combination (a flag it does not implement yet)."""

    reason: str


@dataclass
class Tally:
    hands: int = 0
    steps: int = 0
    illegal_tries: int = 0
    seconds: float = 0.0
    combinations: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> combinations skipped
    violations: list[str] = field(default_factory=list)
    n_violations: int = 0

    def fail(self, where: str, what: str) -> None:
        self.n_violations += 1
        if len(self.violations) < MAX_VIOLATIONS_SHOWN:
            self.violations.append(f"{where}: {what}")


# ------------------------------------------------------------------------------ invariants
def _masks_of(rows: np.ndarray) -> list[int]:
    """Each row of a (k, m) 0/1 array as a bitmask (bit i = element i)."""
    packed = np.packbits(rows > 0.5, axis=1, bitorder="little")
    return [int.from_bytes(r.tobytes(), "little") for r in packed]


def _section(row: int, start: int, size: int) -> int:
    return (row >> start) & ((1 << size) - 1)


def _rel_union(row: int, start: int, n: int) -> int:
    """The union of the four ``n``-card blocks of a [rel][card] section as one card set (two folds)."""
    x = (row >> start) & ((1 << (4 * n)) - 1)
    x |= x >> (2 * n)
    return (x | x >> n) & ((1 << n) - 1)


def _cards(cards: Any) -> int:
    out = 0
    for c in cards:
        if c >= 0:
            out |= 1 << c
    return out


def check_config(ref: Reference, tally: Tally, where: str) -> None:
    """The engine's layout against RULES.md's deck, nest, counters, bids and actions."""
    L = layout_for(ref.cfg)
    got = (L.n_cards, L.nest_size, L.hand_size, L.n_tricks, tuple(L.card_points), L.total_points, tuple(L.bids),
           L.n_contracts, L.PASS, L.BID0, L.TRUMP0, L.REDEAL, L.CIRCUS, L.n_actions, L.rook)
    want = (ref.n, ref.nest_size, ref.hand_size, ref.hand_size, ref.points, ref.total, ref.bids, ref.n_contracts,
            ref.PASS, ref.BID0, ref.TRUMP0, ref.REDEAL, ref.CIRCUS, ref.n_actions, ref.rook)
    names = ("n_cards", "nest_size", "hand_size", "n_tricks", "card_points", "total_points", "bids", "n_contracts",
             "PASS", "BID0", "TRUMP0", "REDEAL", "CIRCUS", "n_actions", "rook")
    for name, g, w in zip(names, got, want):
        if g != w:
            tally.fail(where, f"layout {name} = {g}, RULES.md says {w}")
    if ref.total != sum(ref.points):
        tally.fail(where, f"the soak's own tables disagree: points per card sum to {sum(ref.points)}, not {ref.total}")


def check_position(p: Position, ref: Reference, tally: Tally, where: str) -> None:
    ol = obs_layout(p.config)
    n = ref.n
    live = p.phase != OVER
    # Legal masks.
    want_legal = ref.legal(p)
    if p.legal != want_legal:
        tally.fail(where, f"legal actions {bits(p.legal)} != {bits(want_legal)} (RULES.md) in {PHASE_NAMES[p.phase]}")
    for seat, got in enumerate(_masks_of(p.masks)):
        want = p.legal if (live and seat == p.current) else 0
        if got != want:
            tally.fail(where, f"seat {seat} mask {bits(got)} != legal {bits(want)} in {PHASE_NAMES[p.phase]}")
    if live and not p.legal:
        tally.fail(where, f"no legal action for the seat to act in {PHASE_NAMES[p.phase]}")
    # Card conservation; at a deal, the hand and nest sizes.
    aside = _cards(p.passing) if p.phase == CIRCUS else 0
    sets = list(p.hands) + [p.discards, p.played, aside] + ([p.nest] if p.phase == BID else [])
    union = 0
    for s in sets:
        union |= s
    if union != ref.all_cards or sum(s.bit_count() for s in sets) != n:
        tally.fail(where, "hands, nest, discards, played and passed cards do not partition the deck")
    if p.phase == BID and (p.nest.bit_count() != ref.nest_size or any(h.bit_count() != ref.hand_size for h in p.hands)):
        tally.fail(where, f"dealt {[h.bit_count() for h in p.hands]} cards and a nest of {p.nest.bit_count()}, "
                          f"RULES.md says {ref.hand_size} each and {ref.nest_size}")
    # Observation bounds (a NaN fails both comparisons).
    obs = p.obs
    if not ((obs >= ol.low) & (obs <= ol.high)).all():
        tally.fail(where, "an observation is outside its Box")
    # Hidden information, from each seat's 0/1 entries packed into one integer.
    rows = _masks_of(obs)
    n_phases = ol.HAND - ol.PHASE
    everyone = 0
    for h in p.hands:
        everyone |= h
    on_table = _cards(p.trick)
    bidder_sees = p.bidder >= 0 and p.phase != BID
    circus_layout = ref.CIRCUS >= 0
    delivered = p.circus and len(p.passing) == N_SEATS and min(p.passing) >= 0 and p.phase != CIRCUS
    for seat, row in enumerate(rows):
        if _section(row, ol.PHASE, n_phases) != 1 << p.phase:
            tally.fail(where, f"seat {seat}'s phase entry is not {PHASE_NAMES[p.phase]}")
        hand = _section(row, ol.HAND, n)
        nest, disc = _section(row, ol.NEST, n), _section(row, ol.DISCARDS, n)
        trick, played = _rel_union(row, ol.TRICK, n), _rel_union(row, ol.PLAYED, n)
        if hand != p.hands[seat]:
            tally.fail(where, f"seat {seat}'s hand section {bits(hand)} != its hand {bits(p.hands[seat])}")
        if seat == p.bidder and bidder_sees:
            if nest != p.nest or disc != p.discards:
                tally.fail(where, f"the bidder's nest/discards sections {bits(nest)}/{bits(disc)} != "
                                  f"{bits(p.nest)}/{bits(p.discards)}")
        elif nest or disc:
            tally.fail(where, f"seat {seat} sees the nest or discards without being the bidder")
        if trick != on_table or played != p.played:
            tally.fail(where, f"seat {seat} sees {bits(trick)} in the trick and {bits(played)} played, not "
                              f"{bits(on_table)} and {bits(p.played)}")
        leak = hand | nest | disc | trick | played
        if circus_layout:
            if _section(row, ol.CIRCUS, 1) != p.circus:
                tally.fail(where, f"seat {seat}'s circus entry != {p.circus}")
            passed, received = _section(row, ol.PASSED, n), _section(row, ol.RECEIVED, n)
            gave = p.passing[seat] if p.passing else -1
            want_passed = 1 << gave if gave >= 0 else 0
            want_received = 1 << p.passing[(seat - 1) % N_SEATS] if delivered else 0
            if passed != want_passed or received != want_received:
                tally.fail(where, f"seat {seat}'s passed/received sections {bits(passed)}/{bits(received)} != "
                                  f"{bits(want_passed)}/{bits(want_received)}")
            leak |= passed | received
            # the giver knows where its passed card went (its left neighbour's hand), in any of its sections
            if want_passed & p.hands[(seat + 1) % N_SEATS]:
                leak &= ~want_passed
        leak &= everyone & ~p.hands[seat]
        if leak:
            tally.fail(where, f"seat {seat} sees cards of another seat's hand: {bits(leak)}")


def check_hand_end(h: HandEnd, ref: Reference, tally: Tally, where: str) -> None:
    cfg = h.config
    r = h.result
    counters, bonus, delta = r["counters"], r["bonus"], r["hand_scores"]
    if sum(counters) != ref.total:
        tally.fail(where, f"counters {counters} do not sum to {ref.total}")
    if sum(r["tricks_won"]) != ref.hand_size:
        tally.fail(where, f"tricks {r['tricks_won']} do not sum to {ref.hand_size}")
    if r["bid"] not in ref.bids:
        tally.fail(where, f"bid {r['bid']} outside the bid range {ref.bids[0]}..{ref.bids[-1]}")
    if r["trump"] != ref.trump[h.call]:
        tally.fail(where, f"result trump {r['trump']} != {ref.trump[h.call]} of contract {h.call}")
    if "call" in r and r["call"] != layout_for(cfg).contract_name(h.call):
        tally.fail(where, f"result call {r['call']!r} is not contract {h.call}")
    if "circus" in r and r["circus"] != h.circus:
        tally.fail(where, f"result circus {r['circus']} != {h.circus}")
    want_bonus = [0, 0]
    tw = r["tricks_won"]
    if cfg.majority_tricks_bonus and tw[0] != tw[1]:
        want_bonus[0 if tw[0] > tw[1] else 1] += cfg.majority_tricks_bonus
    if cfg.last_trick_bonus:
        want_bonus[r["last_trick_team"]] += cfg.last_trick_bonus
    if list(bonus) != want_bonus:
        tally.fail(where, f"bonus {bonus} != {want_bonus}")
    bt = r["bidder"] & 1
    total = [counters[0] + bonus[0], counters[1] + bonus[1]]
    made = total[bt] >= r["bid"]
    want = [0, 0]
    want[bt] = total[bt] if made else -r["bid"]
    want[1 - bt] = total[1 - bt]
    if list(delta) != want or r["made"] != made:
        tally.fail(where, f"hand scores {delta} (made={r['made']}) != {want} (made={made}) for bid {r['bid']}")
    if [h.scores_before[0] + delta[0], h.scores_before[1] + delta[1]] != list(r["scores"]):
        tally.fail(where, f"scores {h.scores_before} + {delta} != {r['scores']}")
    rew = h.rewards
    if rew[0] != rew[2] or rew[1] != rew[3]:
        tally.fail(where, f"partners got different rewards {rew}")
    d = delta[0] - delta[1]
    if cfg.reward == "score_diff":
        want_r = (d, -d)
    elif cfg.reward == "team_score":
        want_r = (delta[0], delta[1])
    elif cfg.episode == "game":
        w = r["game_winner"]
        want_r = (0, 0) if w < 0 else ((1, -1) if w == 0 else (-1, 1))
    else:
        s = (d > 0) - (d < 0)
        want_r = (s, -s)
    if (rew[0], rew[1]) != want_r:
        tally.fail(where, f"rewards {rew} != {want_r} under reward={cfg.reward}")
    if cfg.reward != "team_score" and sum(rew) != 0:
        tally.fail(where, f"rewards {rew} are not zero-sum under reward={cfg.reward}")
    if h.episode_over:
        winner = r["game_winner"]
        want_trunc = cfg.episode == "game" and winner < 0
        if h.truncated != want_trunc or h.terminated == want_trunc:
            tally.fail(where, f"episode end: terminated={h.terminated} truncated={h.truncated}, winner {winner}")


# ------------------------------------------------------------------------------ drivers
def _aec_position(e: Any) -> Position:
    u = e.unwrapped
    g = u.game
    obs = [e.observe(a) for a in e.possible_agents]
    return Position(
        u.config, g.phase, g.current, g.bidder, tuple(g.hands), g.nest, g.discards, g.played, g.high_bid, g.n_passed,
        g.call, tuple(g.trick), g.circus, tuple(g.passing), g.legal_mask(),
        np.stack([o["observation"] for o in obs]), np.stack([o["action_mask"] for o in obs]),
    )


def drive_aec(make: Callable[..., Any], flags: dict[str, Any], n_hands: int, rng: random.Random) -> Iterator[Any]:
    """Play ``n_hands`` finished hands through an AEC environment (``raw_env`` or ``env()``)."""
    e = make(**flags)
    u = e.unwrapped
    agents = e.possible_agents
    played_hands = 0
    while played_hands < n_hands:
        e.reset(seed=rng.randrange(1 << 31))
        while not all(u.terminations.values()) and not all(u.truncations.values()):
            if played_hands >= n_hands:  # a long game episode: leave it once the quota is played
                return
            g = u.game
            yield _aec_position(e)
            legal = bits(g.legal_mask())
            if rng.random() < ILLEGAL_TRY_RATE:
                yield _try_illegal_aec(e, rng)
            scores_before, hands_before, call, circus = tuple(g.scores), g.hands_played, g.call, g.circus
            e.step(legal[rng.randrange(len(legal))])
            if g.hands_played != hands_before:
                played_hands += 1
                over = all(u.terminations.values()) or all(u.truncations.values())
                yield HandEnd(
                    u.config, dict(g.hand_result), scores_before, tuple(u.rewards[a] for a in agents), over,
                    all(u.terminations.values()), all(u.truncations.values()), call, circus,
                )
        # The episode is over: every mask is zero, the final position still conserves the cards.
        yield _aec_position(e)
        for _ in e.agent_iter():
            e.step(None)


def _try_illegal_aec(e: Any, rng: random.Random) -> Note:
    u = e.unwrapped
    legal = u.game.legal_mask()
    illegal = [a for a in range(u.layout.n_actions) if not (legal >> a) & 1]
    a = illegal[rng.randrange(len(illegal))]
    if isinstance(u, rook_env.CheckedRookEnv):
        c = copy.deepcopy(e)
        agent = c.agent_selection
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rook_env.IllegalActionWarning)
            c.step(a)
        ok = all(c.terminations.values()) and c.rewards[agent] == c.illegal_reward
        ok = ok and all(r == 0 for x, r in c.rewards.items() if x != agent)
        return Note(None if ok else f"env() did not end the episode with the penalty for action {a}")
    before = (u.game.to_dict(), u.agent_selection, u._enc.obs.tobytes())
    try:
        e.step(a)
    except ValueError:
        after = (u.game.to_dict(), u.agent_selection, u._enc.obs.tobytes())
        return Note(None if after == before else f"a rejected illegal action {a} changed the state")
    return Note(f"raw_env accepted the illegal action {a}")


def _vector_state(v: RookVectorEnv) -> tuple[dict[str, np.ndarray], Any]:
    """Every array of the batched engine's state (and its RNG's), copied: to compare before/after."""
    arrays = {k: x.copy() for k, x in vars(v).items() if isinstance(x, np.ndarray)}
    rng = getattr(v, "_rng", None)
    return arrays, (rng.bit_generator.state if rng is not None else None)


def _same_state(a: tuple[dict[str, np.ndarray], Any], b: tuple[dict[str, np.ndarray], Any]) -> bool:
    return a[1] == b[1] and a[0].keys() == b[0].keys() and all(np.array_equal(a[0][k], b[0][k]) for k in a[0])


def drive_vector(flags: dict[str, Any], n_hands: int, rng: random.Random) -> Iterator[Any]:
    """Play ``n_hands`` finished hands on ``VECTOR_TABLES`` tables of the batched engine, yielding each table's
    records. The played cards, circus passes, contract and circus call are tracked from the actions sent."""
    env_flags = dict(flags)
    max_hands = env_flags.pop("max_hands", None)
    try:
        # fewer tables for a small quota: the hands still unfinished when it is reached are steps wasted
        v = RookVectorEnv(min(VECTOR_TABLES, max(1, n_hands // 4)), max_hands=max_hands, **env_flags)
    except ValueError as e:
        if UNSUPPORTED_HINT in str(e):
            yield Skip(str(e).split(";")[0])
        else:
            yield Note(f"RookVectorEnv refused a combination raw_env plays: {e}", illegal_try=False)
        return
    N, A, cfg, L = v.num_envs, v.n_actions, v.config, v.layout
    tables = np.arange(N)
    obs, info = v.reset(seed=rng.randrange(1 << 31))
    played, call, circus = [0] * N, [-1] * N, [False] * N
    passing: list[list[int]] = [[] for _ in range(N)]
    done = 0
    try_rate = min(1.0, ILLEGAL_TRY_RATE * N)
    while done < n_hands:
        phase, cur, mask = v.phase, v.current_player, info["action_mask"]
        seat_obs = np.stack([v.observe(s) for s in range(N_SEATS)], axis=1)  # (N, 4, D)
        if not np.array_equal(seat_obs[tables, cur], obs):
            yield Note("the observation returned by step/reset is not observe(seat to act)", illegal_try=False)
        masks = np.zeros((N, N_SEATS, A), np.int8)
        masks[tables, cur] = mask
        legal = _masks_of(mask)
        hands = v.hands.tolist()
        nest, discards, trick, trick_len = v.nest.tolist(), v.discards.tolist(), v.trick.tolist(), v.trick_len.tolist()
        bidder, high_bid, n_passed = v.bidder.tolist(), v.high_bid.tolist(), v.n_passed.tolist()
        for i in range(N):
            yield Position(
                cfg, int(phase[i]), int(cur[i]), bidder[i], tuple(hands[i]), nest[i], discards[i], played[i],
                high_bid[i], n_passed[i], call[i], tuple(trick[i][:trick_len[i]]) if phase[i] == PLAY else (),
                circus[i], tuple(passing[i]), legal[i], seat_obs[i], masks[i],
            )
        actions = np.array([rng.choice(bits(m)) for m in legal], np.int64)
        if rng.random() < try_rate:
            yield from _try_illegal_vector(v, actions, legal, rng)
        scores_before = v.scores.tolist()
        obs, rewards, terminated, truncated, info = v.step(actions)
        new_phase = v.phase
        for i in np.flatnonzero(info["hand_over"] | (phase == TRUMP) | (phase == CIRCUS)).tolist():
            a = int(actions[i])
            if phase[i] == TRUMP:
                if a == L.CIRCUS:
                    circus[i] = True
                else:
                    call[i] = a - L.TRUMP0
            elif phase[i] == CIRCUS:
                if not passing[i]:
                    passing[i] = [-1] * N_SEATS
                passing[i][cur[i]] = a
            if info["hand_over"][i]:
                done += 1
                result = {k: (x[i].tolist()) for k, x in info["hand"].items()}
                if "call" in result:  # the engine gives the contract's index, raw_env its name
                    result["call"] = L.contract_name(result["call"])
                yield HandEnd(cfg, result, tuple(scores_before[i]), tuple(rewards[i].tolist()),
                              bool(terminated[i] or truncated[i]), bool(terminated[i]), bool(truncated[i]),
                              call[i], circus[i])
        for i in np.flatnonzero(phase == PLAY).tolist():
            played[i] |= 1 << int(actions[i])
        for i in np.flatnonzero(new_phase == BID).tolist():  # a new deal
            played[i], call[i], circus[i], passing[i] = 0, -1, False, []


def _try_illegal_vector(v: RookVectorEnv, actions: np.ndarray, legal: list[int], rng: random.Random) -> Iterator[Note]:
    """An illegal action at one table: "raise" must change nothing anywhere; "terminate" (on a copy) must
    end that table's episode with the penalty and leave the other tables' episodes running."""
    i = rng.randrange(v.num_envs)
    illegal = [a for a in range(v.n_actions) if not (legal[i] >> a) & 1]
    bad = actions.copy()
    bad[i] = illegal[rng.randrange(len(illegal))]
    before = _vector_state(v)
    try:
        v.step(bad)
    except ValueError:
        yield Note(None if _same_state(before, _vector_state(v)) else
                   f"a rejected illegal action {bad[i]} at table {i} changed the state")
    else:
        yield Note(f"RookVectorEnv accepted the illegal action {bad[i]} at table {i}")
        return
    # the same try under "terminate", on a copy (one try, two checks: counted once)
    # the rules config, layouts and spaces are immutable: shared with the copy (deepcopy would walk every table)
    shared = (v.config, v.layout, v.obs_layout, v.single_observation_space, v.single_action_space)
    c = copy.deepcopy(v, memo={id(x): x for x in shared})
    c.illegal_action = "terminate"
    seat = int(c.current_player[i])
    _, rewards, terminated, _, info = c.step(bad)
    want_rewards = np.zeros(N_SEATS, np.float32)
    want_rewards[seat] = c.illegal_reward
    flagged = np.zeros(v.num_envs, bool)
    flagged[i] = True
    ok = bool(terminated[i]) and np.array_equal(rewards[i], want_rewards) and np.array_equal(info["illegal"], flagged)
    yield Note(None if ok else f"illegal_action='terminate' did not end table {i}'s episode with the penalty "
                               f"for action {bad[i]} (rewards {rewards[i].tolist()})", illegal_try=False)


DRIVERS: dict[str, Callable[[dict[str, Any], int, random.Random], Iterator[Any]]] = {
    "raw_env": lambda flags, n, rng: drive_aec(rook_env.raw_env, flags, n, rng),
    "env()": lambda flags, n, rng: drive_aec(rook_env.env, flags, n, rng),
    "vector": drive_vector,
}


# ------------------------------------------------------------------------------ the soak
def _valid(flags: dict[str, Any]) -> bool:
    try:
        make_config(**flags)
    except ValueError:
        return False
    return True


def _draw_extras(flags: dict[str, Any], rng: random.Random, fixed: dict[str, Any]) -> dict[str, Any]:
    """Bonuses, target score and (game episodes) max_hands drawn for one combination; a preset's own kept."""
    for name, choices in (("majority_tricks_bonus", (0, 20)), ("last_trick_bonus", (0, 20)),
                          ("target_score", (300, 150, 60))):
        value = rng.choice(choices)
        if name not in fixed:
            flags[name] = value
    if flags["episode"] == "game":
        flags["max_hands"] = rng.choice((None, 2, 5))
    return flags


def flag_combinations(rng: random.Random, base_per_game: int = BASE_PER_GAME) -> list[dict[str, Any]]:
    """The combinations of the module docstring, in a fixed order for a given ``rng``."""
    bases = [dict(zip(BASE_FLAGS, values)) for values in itertools.product(*(CHOICES[f] for f in BASE_FLAGS))]
    out = [_draw_extras(dict(b), rng, {}) for b in bases]  # the default game: every F1-F12 combination
    defaults = {f: CHOICES[f][0] for f in GAME_FLAGS}
    for deck in CHOICES["deck"]:
        for ones in ONES_BY_DECK[deck]:
            for values in itertools.product(*(CHOICES[f] for f in GAME_FLAGS)):
                game = dict(zip(GAME_FLAGS, values))
                if game == defaults and ones in (None, "high"):
                    continue  # the default game, enumerated above
                if ones is not None:
                    game["ones"] = ones
                # of F1-F12 only nest_discard meets F13-F20's conditions (besides the deck): one check per value
                fits = {nd: _valid({"deck": deck, "nest_discard": nd, **game}) for nd in CHOICES["nest_discard"]}
                candidates = [b for b in bases if b["deck"] == deck and fits[b["nest_discard"]]]
                for b in rng.sample(candidates, min(base_per_game, len(candidates))) if candidates else []:
                    out.append(_draw_extras({**b, **game}, rng, {}))
    for preset, preset_flags in PRESETS.items():
        candidates = []
        for b in bases:
            rest = {f: v for f, v in b.items() if f not in preset_flags}
            if rest not in candidates and _valid({"preset": preset, **rest}):
                candidates.append(rest)
        for rest in rng.sample(candidates, min(base_per_game, len(candidates))):
            out.append(_draw_extras({"preset": preset, **rest}, rng, preset_flags))
    return out


def rss_mib() -> float:
    """Resident memory of this process (Linux: current; elsewhere: the peak)."""
    try:
        with open(f"/proc/{os.getpid()}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def soak(driver: str, combos: list[dict[str, Any]], hands: int, seed: int, warmup: float) -> tuple[Tally, dict]:
    tally = Tally()
    per_combo = max(1, math.ceil(hands / len(combos)))
    rng = random.Random(seed)
    drive = DRIVERS[driver]
    mem: dict[str, float] = {}
    heap_on = tracemalloc.is_tracing()
    start = time.perf_counter()
    progress_every = max(1, len(combos) // 10)
    for k, flags in enumerate(combos):
        if k and k % progress_every == 0:  # a long soak says how far it is
            print(f"    {driver}: {k}/{len(combos)} combinations, {tally.hands:,d} hands, {tally.n_violations} "
                  f"violation(s), {time.perf_counter() - start:.0f} s", flush=True)
        if "after_warmup" not in mem and k >= warmup * len(combos):
            mem["after_warmup"] = rss_mib()
            if heap_on:
                mem["heap_after_warmup"] = tracemalloc.get_traced_memory()[0] / 2**20
        env_flags = {f: v for f, v in flags.items() if v is not None}
        label = ", ".join(f"{f}={v}" for f, v in env_flags.items())
        ref: Reference | None = None
        skipped = False
        for record in drive(env_flags, per_combo, rng):
            where = f"[{driver}; {label}; hand {tally.hands + 1}]"
            if isinstance(record, Skip):
                tally.skipped[record.reason] = tally.skipped.get(record.reason, 0) + 1
                skipped = True
                continue
            if isinstance(record, Note):
                tally.illegal_tries += record.illegal_try
                if record.problem:
                    tally.fail(where, record.problem)
                continue
            if ref is None:
                ref = Reference(record.config, env_flags)
                check_config(ref, tally, where)
            if isinstance(record, Position):
                tally.steps += 1
                check_position(record, ref, tally, where)
            else:
                tally.hands += 1
                check_hand_end(record, ref, tally, where)
        tally.combinations += not skipped
    tally.seconds = time.perf_counter() - start
    mem["end"] = rss_mib()
    if heap_on:
        mem["heap_end"] = tracemalloc.get_traced_memory()[0] / 2**20
    return tally, mem


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=30_000,
                        help="finished hands in all, split evenly over the drivers and their combinations")
    parser.add_argument("--drivers", nargs="+", default=list(DRIVERS), choices=list(DRIVERS))
    parser.add_argument("--combinations", type=int, default=None,
                        help="soak a seeded sample of this many flag combinations (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=float, default=0.1, help="share of combinations before the memory baseline")
    parser.add_argument("--memory-slack-mib", type=float, default=16.0, help="allowed RSS growth after the warm-up")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace the Python heap (slower)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    if args.hands <= 0 or not 0 <= args.warmup < 1 or args.memory_slack_mib < 0:
        parser.error("--hands must be positive, --warmup in [0, 1), --memory-slack-mib >= 0")
    if args.combinations is not None and args.combinations <= 0:
        parser.error("--combinations must be positive")
    if args.tracemalloc:
        tracemalloc.start()
    rng = random.Random(args.seed)
    combos = flag_combinations(rng)
    if args.combinations is not None and args.combinations < len(combos):
        combos = [combos[i] for i in sorted(rng.sample(range(len(combos)), args.combinations))]
    per_driver = math.ceil(args.hands / len(args.drivers))
    per_combo = max(1, math.ceil(per_driver / len(combos)))
    print(f"soak: {len(combos)} flag combinations x {per_combo} hands per driver; drivers: {', '.join(args.drivers)}",
          flush=True)
    results = {}
    total_hands = total_violations = 0
    memory_ok = True
    for d, driver in enumerate(args.drivers):
        tally, mem = soak(driver, combos, per_driver, args.seed + d, args.warmup)
        growth = mem["end"] - mem.get("after_warmup", mem["end"])
        memory_ok &= growth <= args.memory_slack_mib
        heap = ""
        if "heap_end" in mem:
            heap = f", Python heap {mem['heap_after_warmup']:.1f} -> {mem['heap_end']:.1f} MiB"
        print(
            f"  {driver:8s} {tally.hands:8,d} hands {tally.steps:10,d} steps {tally.seconds:8.1f} s "
            f"{tally.hands / max(tally.seconds, 1e-9):8,.0f} hands/s  combinations {tally.combinations:,d}  "
            f"illegal tries {tally.illegal_tries:,d}  violations {tally.n_violations}  "
            f"RSS {mem.get('after_warmup', 0):.1f} -> {mem['end']:.1f} MiB{heap}",
            flush=True,
        )
        for reason, count in tally.skipped.items():
            print(f"    skipped {count} combination(s) the engine refuses: {reason}")
        for v in tally.violations:
            print(f"    {v}")
        total_hands += tally.hands
        total_violations += tally.n_violations
        results[driver] = {
            "hands": tally.hands, "steps": tally.steps, "seconds": tally.seconds, "illegal_tries": tally.illegal_tries,
            "combinations": tally.combinations, "skipped": tally.skipped, "violations": tally.n_violations,
            "examples": tally.violations, "memory_mib": mem,
        }
    verdict = "PASS" if total_violations == 0 and memory_ok else "FAIL"
    print(
        f"soak summary: {total_hands:,d} hands over {len(args.drivers)} driver(s) x {len(combos)} flag combinations, "
        f"{total_violations} violation(s), memory {'flat' if memory_ok else 'GROWING'} "
        f"(slack {args.memory_slack_mib:g} MiB): {verdict}"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"hands": args.hands, "hands_per_driver": per_driver, "seed": args.seed, "combinations": len(combos),
                 "verdict": verdict, "machine": platform.platform(), "python": platform.python_version(),
                 "drivers": results},
                f,
                indent=2,
            )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
