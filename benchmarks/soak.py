"""Soak test: random hands under every flag combination, every invariant checked at every step.

Not a unit test: a script that plays ``--hands`` finished hands per driver, spread evenly over all
combinations of the enumerated rule flags (with bonuses, target score and ``max_hands`` drawn per
combination), and prints what it checked, hands per second and a verdict. Exit status 1 on FAIL.

Checked at every step, for every seat:
- legal masks: only the seat to act has a non-zero mask (none once the episode is over), equal to
  the rules' legal set, and inside what the phase allows (own hand, higher bids, the four trumps);
- card conservation: hands, nest, discards and played cards partition the deck;
- observation bounds: finite and inside the observation space's Box;
- hidden information: a seat's observation shows no card of another seat's hand, its hand section is
  exactly its hand, and the nest and discards appear only for the bidder after the auction.
Checked at every hand end: counters and tricks sum to the deck's totals; the score change follows
the bid (made: what was taken, bonuses included; set: minus the bid); game scores add up; rewards
follow the ``reward`` flag (``score_diff`` and ``win_loss`` zero-sum, partners equal); a game episode
ends terminated (a winner) or truncated (``max_hands``). From time to time an illegal action is
tried: ``raw_env`` must raise and change nothing; ``env()`` (on a copy) must end the episode with
the penalty. Memory: process RSS after a warm-up and at the end (``--tracemalloc`` adds the Python
heap), flat within ``--memory-slack-mib``.

Drivers: ``raw_env`` and ``env()`` play through the AEC API. A driver is a function
``(flags, n_hands, rng) -> Iterator[Position | HandEnd]`` listed in ``DRIVERS``; a batched engine is
added as one more entry that yields the same records for each of its environments.

Usage::

    python benchmarks/soak.py --hands 10000            # hands per driver (20,000 in all)
    python benchmarks/soak.py --hands 200000 --json soak.json
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
from rook_env.cards import N_SEATS, Layout, bits, layout_for
from rook_env.config import CHOICES, RookConfig
from rook_env.observation import ObsLayout, obs_layout
from rook_env.rules import BID, DISCARD, OVER, PHASE_NAMES, PLAY, TRUMP

# The Kentucky Discard flags (RULES.md F1-F12): 864 combinations. The other games' flags (F13-F21) change
# deck, nest and trump structure that these invariants assume; they are covered by tests/test_variants.py.
ENUMERATED_FLAGS = ("all_pass", "no_counter_redeal", "nest_discard", "first_lead", "rook_rank", "deck",
                    "episode", "reward")
ILLEGAL_TRY_RATE = 0.01  # share of steps at which an illegal action is tried as well
MAX_VIOLATIONS_SHOWN = 20


# ------------------------------------------------------------------------------ records
@dataclass
class Position:
    """The table before a step (ground truth) and what every seat observes of it."""

    config: RookConfig
    phase: int
    current: int
    bidder: int
    hands: tuple[int, ...]
    nest: int
    discards: int
    played: int
    high_bid: int  # level index, -1: none
    legal: int  # the rules' legal-action bitmask of the seat to act
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


@dataclass
class Tally:
    hands: int = 0
    steps: int = 0
    illegal_tries: int = 0
    seconds: float = 0.0
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


def check_position(p: Position, tally: Tally, where: str) -> None:
    L: Layout = layout_for(p.config)
    ol: ObsLayout = obs_layout(p.config)
    n = L.n_cards
    live = p.phase != OVER
    # Legal masks.
    for seat, got in enumerate(_masks_of(p.masks)):
        want = p.legal if (live and seat == p.current) else 0
        if got != want:
            tally.fail(where, f"seat {seat} mask {bits(got)} != legal {bits(want)} in {PHASE_NAMES[p.phase]}")
    if live:
        if not p.legal:
            tally.fail(where, f"no legal action for the seat to act in {PHASE_NAMES[p.phase]}")
        allowed = {
            BID: (1 << L.PASS) | L.bid_mask & ~((1 << (L.BID0 + p.high_bid + 1)) - 1) | (1 << L.REDEAL),
            DISCARD: p.hands[p.bidder] if p.bidder >= 0 else 0,
            TRUMP: L.trump_mask,
            PLAY: p.hands[p.current],
        }[p.phase]
        if p.legal & ~allowed:
            tally.fail(where, f"legal actions {bits(p.legal & ~allowed)} outside what {PHASE_NAMES[p.phase]} allows")
    # Card conservation.
    sets = list(p.hands) + [p.discards, p.played] + ([p.nest] if p.phase == BID else [])
    union = 0
    for s in sets:
        union |= s
    if union != L.all_cards or sum(s.bit_count() for s in sets) != n:
        tally.fail(where, "hands, nest, discards and played cards do not partition the deck")
    # Observation bounds (a NaN fails both comparisons).
    if not ((p.obs >= ol.low) & (p.obs <= ol.high)).all():
        tally.fail(where, "an observation is outside its Box")
    # Hidden information. trick (4 x n) and played (4 x n) are adjacent: what lies on the table.
    obs = p.obs
    hands = _masks_of(obs[:, ol.HAND:ol.HAND + n])
    nests = _masks_of(obs[:, ol.NEST:ol.NEST + n])
    discards = _masks_of(obs[:, ol.DISCARDS:ol.DISCARDS + n])
    tables = _masks_of(obs[:, ol.TRICK:ol.TRICK + 8 * n].reshape(N_SEATS, 8, n).max(1))
    everyone = 0
    for h in p.hands:
        everyone |= h
    for seat in range(N_SEATS):
        hand, nest, disc, table = hands[seat], nests[seat], discards[seat], tables[seat]
        if hand != p.hands[seat]:
            tally.fail(where, f"seat {seat}'s hand section {bits(hand)} != its hand {bits(p.hands[seat])}")
        if (nest or disc) and not (seat == p.bidder and p.phase != BID):
            tally.fail(where, f"seat {seat} sees the nest or discards without being the bidder")
        if table & ~p.played:
            tally.fail(where, f"seat {seat} sees unplayed cards {bits(table & ~p.played)} on the table")
        leak = (hand | nest | disc | table) & everyone & ~p.hands[seat]
        if leak:
            tally.fail(where, f"seat {seat} sees cards of another seat's hand: {bits(leak)}")


def check_hand_end(h: HandEnd, tally: Tally, where: str) -> None:
    cfg = h.config
    L = layout_for(cfg)
    r = h.result
    counters, bonus, delta = r["counters"], r["bonus"], r["hand_scores"]
    if sum(counters) != L.total_points:
        tally.fail(where, f"counters {counters} do not sum to {L.total_points}")
    if sum(r["tricks_won"]) != L.n_tricks:
        tally.fail(where, f"tricks {r['tricks_won']} do not sum to {L.n_tricks}")
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
def drive_aec(make: Callable[..., Any], flags: dict[str, Any], n_hands: int, rng: random.Random) -> Iterator[Any]:
    """Play ``n_hands`` finished hands through an AEC environment (``raw_env`` or ``env()``)."""
    env_flags = dict(flags)
    e = make(**env_flags)
    u = e.unwrapped
    agents = e.possible_agents
    played_hands = 0
    while played_hands < n_hands:
        e.reset(seed=rng.randrange(1 << 31))
        while not all(u.terminations.values()) and not all(u.truncations.values()):
            if played_hands >= n_hands:  # a long game episode: leave it once the quota is played
                return
            g = u.game
            obs = [e.observe(a) for a in agents]
            yield Position(
                u.config, g.phase, g.current, g.bidder, tuple(g.hands), g.nest, g.discards, g.played, g.high_bid,
                g.legal_mask(), np.stack([o["observation"] for o in obs]), np.stack([o["action_mask"] for o in obs]),
            )
            legal = bits(g.legal_mask())
            if rng.random() < ILLEGAL_TRY_RATE:
                yield from _try_illegal(e, rng)
            scores_before, hands_before = tuple(g.scores), g.hands_played
            e.step(legal[rng.randrange(len(legal))])
            if g.hands_played != hands_before:
                played_hands += 1
                over = all(u.terminations.values()) or all(u.truncations.values())
                yield HandEnd(
                    u.config, dict(g.hand_result), scores_before, tuple(u.rewards[a] for a in agents), over,
                    all(u.terminations.values()), all(u.truncations.values()),
                )
        # The episode is over: every mask is zero, the final position still conserves the cards.
        g = u.game
        obs = [e.observe(a) for a in agents]
        yield Position(
            u.config, g.phase, g.current, g.bidder, tuple(g.hands), g.nest, g.discards, g.played, g.high_bid,
            g.legal_mask(), np.stack([o["observation"] for o in obs]), np.stack([o["action_mask"] for o in obs]),
        )
        for _ in e.agent_iter():
            e.step(None)


class IllegalOutcome:
    """The result of an illegal-action try: ``ok`` or what went wrong."""

    def __init__(self, problem: str | None) -> None:
        self.problem = problem


def _try_illegal(e: Any, rng: random.Random) -> Iterator[IllegalOutcome]:
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
        yield IllegalOutcome(None if ok else f"env() did not end the episode with the penalty for action {a}")
        return
    before = (u.game.to_dict(), u.agent_selection, u._enc.obs.tobytes())
    try:
        e.step(a)
    except ValueError:
        after = (u.game.to_dict(), u.agent_selection, u._enc.obs.tobytes())
        yield IllegalOutcome(None if after == before else f"a rejected illegal action {a} changed the state")
    else:
        yield IllegalOutcome(f"raw_env accepted the illegal action {a}")


DRIVERS: dict[str, Callable[[dict[str, Any], int, random.Random], Iterator[Any]]] = {
    "raw_env": lambda flags, n, rng: drive_aec(rook_env.raw_env, flags, n, rng),
    "env()": lambda flags, n, rng: drive_aec(rook_env.env, flags, n, rng),
}


# ------------------------------------------------------------------------------ the soak
def flag_combinations(rng: random.Random) -> list[dict[str, Any]]:
    """Every combination of the enumerated flags, each with drawn bonuses, target and max_hands."""
    out = []
    for values in itertools.product(*(CHOICES[f] for f in ENUMERATED_FLAGS)):
        flags = dict(zip(ENUMERATED_FLAGS, values))
        flags["majority_tricks_bonus"] = rng.choice((0, 20))
        flags["last_trick_bonus"] = rng.choice((0, 20))
        flags["target_score"] = rng.choice((300, 150, 60))
        if flags["episode"] == "game":
            flags["max_hands"] = rng.choice((None, 2, 5))
        out.append(flags)
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
    for k, flags in enumerate(combos):
        if "after_warmup" not in mem and k >= warmup * len(combos):
            mem["after_warmup"] = rss_mib()
            if heap_on:
                mem["heap_after_warmup"] = tracemalloc.get_traced_memory()[0] / 2**20
        env_flags = {f: v for f, v in flags.items() if v is not None}
        label = ", ".join(f"{f}={v}" for f, v in env_flags.items())
        for record in drive(env_flags, per_combo, rng):
            where = f"[{driver}; {label}; hand {tally.hands + 1}]"
            if isinstance(record, Position):
                tally.steps += 1
                check_position(record, tally, where)
            elif isinstance(record, HandEnd):
                tally.hands += 1
                check_hand_end(record, tally, where)
            else:
                tally.illegal_tries += 1
                if record.problem:
                    tally.fail(where, record.problem)
    tally.seconds = time.perf_counter() - start
    mem["end"] = rss_mib()
    if heap_on:
        mem["heap_end"] = tracemalloc.get_traced_memory()[0] / 2**20
    return tally, mem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20_000, help="finished hands per driver, over all combinations")
    parser.add_argument("--drivers", nargs="+", default=list(DRIVERS), choices=list(DRIVERS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=float, default=0.1, help="share of combinations before the memory baseline")
    parser.add_argument("--memory-slack-mib", type=float, default=16.0, help="allowed RSS growth after the warm-up")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace the Python heap (slower)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    if args.hands <= 0 or not 0 <= args.warmup < 1 or args.memory_slack_mib < 0:
        parser.error("--hands must be positive, --warmup in [0, 1), --memory-slack-mib >= 0")
    if args.tracemalloc:
        tracemalloc.start()
    combos = flag_combinations(random.Random(args.seed))
    per_combo = max(1, math.ceil(args.hands / len(combos)))
    print(f"soak: {len(combos)} flag combinations x {per_combo} hands per driver; drivers: {', '.join(args.drivers)}")
    results = {}
    total_hands = total_violations = 0
    memory_ok = True
    for d, driver in enumerate(args.drivers):
        tally, mem = soak(driver, combos, args.hands, args.seed + d, args.warmup)
        growth = mem["end"] - mem.get("after_warmup", mem["end"])
        memory_ok &= growth <= args.memory_slack_mib
        heap = ""
        if "heap_end" in mem:
            heap = f", Python heap {mem['heap_after_warmup']:.1f} -> {mem['heap_end']:.1f} MiB"
        print(
            f"  {driver:8s} {tally.hands:8,d} hands {tally.steps:10,d} steps {tally.seconds:8.1f} s "
            f"{tally.hands / tally.seconds:8,.0f} hands/s  illegal tries {tally.illegal_tries:,d}  "
            f"violations {tally.n_violations}  RSS {mem.get('after_warmup', 0):.1f} -> {mem['end']:.1f} MiB{heap}"
        )
        for v in tally.violations:
            print(f"    {v}")
        total_hands += tally.hands
        total_violations += tally.n_violations
        results[driver] = {
            "hands": tally.hands, "steps": tally.steps, "seconds": tally.seconds, "illegal_tries": tally.illegal_tries,
            "violations": tally.n_violations, "examples": tally.violations, "memory_mib": mem,
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
                {"hands_per_driver": args.hands, "seed": args.seed, "combinations": len(combos), "verdict": verdict,
                 "machine": platform.platform(), "python": platform.python_version(), "drivers": results},
                f,
                indent=2,
            )
    sys.exit(0 if verdict == "PASS" else 1)


if __name__ == "__main__":
    main()
