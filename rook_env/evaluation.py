"""Evaluate Rook agents: duplicate matches, games to 300, round-robin ratings.

Command line (``evaluate.py`` in the repository)::

    python evaluate.py heuristic random --deals 2000 --seed 0 --json out.json --plot out.png
    python evaluate.py heuristic+random random --flag deck=full --workers 2
    python evaluate.py --round-robin random heuristic ppo --deals 1000

Function API (used by train.py for periodic evaluation)::

    from rook_env import evaluation
    res = evaluation.play_match("heuristic", "random", deals=2000, seed=0)
    res.mean, res.ci, res.games["win_rate"], res.to_dict()
    rr = evaluation.round_robin(["random", "heuristic", my_factory], deals=500)

A *team spec* is an agent spec (``"random"``, ``"heuristic"``, ``"ppo"``, ``"path/to.pt"``),
two specs joined by ``+`` for a mixed partnership (``"heuristic+random"``: the first seat of the
pair plays ``heuristic``, its partner ``random``), a callable ``factory(seed) -> agent``, or a
2-tuple of those. The callable form lets a trainer pass its in-memory policy.

Duplicate play (the default): deal ``i`` is generated from ``(seed, i)`` (hands, nest; the
dealer rotates ``i % 4``) and played twice through ``raw_env.reset(options=...)``, once with
team A in seats {0, 2} and once with A in seats {1, 3}; every seat keeps its cards, so each
hand is played by the same member role of the other team. Redeals inside a deal draw from an
environment RNG seeded per deal, identical in both seatings. The agent at seat ``s`` is seeded
from ``(seed, block, s)`` in *both* seatings (common random numbers): two identical teams
therefore produce exactly opposite results in the two seatings, and swapping the teams
negates every deal pair exactly.

Deals are processed in fixed blocks (``block_size`` deals; agents are built once per block),
so ``workers=N`` gives results identical to ``workers=1`` for the same seed.

Statistics: mean points per deal (team A's hand score minus team B's, averaged over the two
seatings of a deal) with a percentile bootstrap interval over deal pairs; games to
``target_score`` built from the deal stream (hand scores accumulated deal by deal, RULES.md's
end rule, one stream per seating) with a Wilson interval; contracts, sets, mean winning bid,
points as bidders / defenders; illegal actions (they must be zero: an illegal action raises in
``raw_env``; it is counted, replaced by the lowest legal action, and reported); speed.
Hands are played with the game score at 0-0 (agents do not see the running game score).
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing as mp
import random
import re
import sys
import time
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

__all__ = [
    "IllegalActionError", "MatchResult", "RoundRobinResult", "TeamSpec", "TeamStats",
    "bootstrap_mean_ci", "bradley_terry", "elo_from_strengths", "elo_ratings", "games_from_stream",
    "make_deal", "parse_flags", "parse_team", "play_match", "round_robin", "wilson_interval",
]

DEFAULT_BLOCK_SIZE = 50


# =============================================================================================
# Statistics
# =============================================================================================
def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (resampled with replacement,
    ``n_boot`` times, from a NumPy generator seeded with ``seed``). Empty input gives NaNs;
    one value or constant values give a zero-width interval."""
    x = np.asarray(values, dtype=np.float64).ravel()
    n = x.size
    if n == 0:
        return (math.nan, math.nan)
    if n == 1 or np.all(x == x[0]):
        return (float(x[0]), float(x[0]))
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    rows = max(1, int(4_000_000 // n))  # bound the index matrix to ~32 MB
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = x[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def wilson_interval(k: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``k / n``; (nan, nan) when ``n == 0``."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return (math.nan, math.nan)
    z = _z(confidence)
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


def bradley_terry(
    wins: Sequence[Sequence[float]] | np.ndarray, prior: float = 0.0, max_iter: int = 100_000, tol: float = 1e-12
) -> np.ndarray:
    """Bradley-Terry strengths by the MM algorithm (Hunter 2004).

    ``wins[i][j]``: how often ``i`` beat ``j`` (ties counted half to each side). ``prior`` adds
    that many virtual games, split evenly, to every pair that met (it keeps strengths finite
    when a player won or lost everything). Returns strengths with geometric mean 1; P(i beats j)
    = p_i / (p_i + p_j). Players who met no one get strength 1.
    """
    w = np.array(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    if np.any(w < 0):
        raise ValueError("wins must be non-negative")
    k = w.shape[0]
    np.fill_diagonal(w, 0.0)
    n = w + w.T
    if prior:
        w = w + np.where(n > 0, prior / 2.0, 0.0)
        n = w + w.T
    total_wins = w.sum(axis=1)
    played = n.sum(axis=1) > 0
    if np.any(played & (total_wins <= 0)):
        bad = [int(i) for i in np.flatnonzero(played & (total_wins <= 0))]
        raise ValueError(f"players {bad} never won: their strength is 0 (use prior > 0)")
    p = np.ones(k)
    for _ in range(max_iter):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(played, total_wins / np.where(denom > 0, denom, 1.0), 1.0)
        new /= np.exp(np.mean(np.log(new)))
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    return p


def elo_from_strengths(strengths: Sequence[float], anchor: int | None = None, base: float = 1500.0) -> np.ndarray:
    """Elo ratings (400 * log10 of strength): mean ``base``, or player ``anchor`` at ``base``."""
    r = 400.0 * np.log10(np.asarray(strengths, dtype=np.float64))
    ref = r.mean() if anchor is None else r[anchor]
    return r - ref + base


def elo_ratings(
    wins: Sequence[Sequence[float]] | np.ndarray, prior: float = 1.0, anchor: int | None = None, base: float = 1500.0
) -> np.ndarray:
    """Elo ratings fitted (Bradley-Terry maximum likelihood) to a win matrix; see :func:`bradley_terry`."""
    return elo_from_strengths(bradley_terry(wins, prior=prior), anchor=anchor, base=base)


def games_from_stream(
    hand_scores: Iterable[tuple[int, int]], target: int = 300, start: tuple[int, int] = (0, 0)
) -> tuple[list[int], int]:
    """Cut a stream of hand scores (team A, team B) into games (RULES.md "Game end": after a
    hand, if a team has ``target`` or more and the totals differ, the higher total wins; equal
    totals: play on). Returns (winners, hands in the unfinished last game); winner 0 = A, 1 = B."""
    winners: list[int] = []
    a, b = start
    pending = 0
    for da, db in hand_scores:
        a += da
        b += db
        pending += 1
        if max(a, b) >= target and a != b:
            winners.append(0 if a > b else 1)
            a, b = start
            pending = 0
    return winners, pending


# =============================================================================================
# Specs, deals, agents
# =============================================================================================
class IllegalActionError(RuntimeError):
    """An agent chose an illegal action and ``strict=True``."""


def _spec_label(member: Any) -> str:
    if isinstance(member, str):
        return member
    name = getattr(member, "name", None)
    if isinstance(name, str) and name:
        return name
    label = getattr(member, "__name__", None) or type(member).__name__
    return "callable" if label == "<lambda>" else label


@dataclass(frozen=True)
class TeamSpec:
    """Two member specs: the first plays the lower seat of the pair (seat 0 or 1), the second
    its partner (seat 2 or 3)."""

    members: tuple[Any, Any]
    name: str

    def __str__(self) -> str:
        return self.name


def parse_team(spec: Any, name: str | None = None) -> TeamSpec:
    """A team spec: ``"random"``, ``"heuristic+random"``, a callable ``factory(seed)``, a 2-tuple
    of member specs, or a :class:`TeamSpec` (returned as is, renamed if ``name`` is given)."""
    if isinstance(spec, TeamSpec):
        return spec if name is None else TeamSpec(spec.members, name)
    if isinstance(spec, str):
        parts = [p.strip() for p in spec.split("+")]
        if len(parts) > 2 or not all(parts):
            raise ValueError(
                f"bad team spec {spec!r}: use one agent spec (e.g. 'random') or two joined by '+' "
                f"(e.g. 'heuristic+random')"
            )
        members = (parts[0], parts[-1])
    elif isinstance(spec, (tuple, list)):
        if len(spec) != 2:
            raise ValueError(f"a team given as a sequence needs exactly 2 member specs, got {len(spec)}")
        members = (spec[0], spec[1])
    elif callable(spec):
        members = (spec, spec)
    else:
        raise ValueError(f"bad team spec {spec!r}: expected a string, a callable factory(seed) or a 2-tuple")
    for m in members:
        if not (isinstance(m, str) or callable(m)):
            raise ValueError(f"bad member spec {m!r}: expected a string or a callable factory(seed)")
    if name is None:
        a, b = (_spec_label(m) for m in members)
        name = a if (a == b and members[0] == members[1]) else f"{a}+{b}"
    return TeamSpec(members, name)


def build_agent(member: Any, seed: int, flags: Mapping[str, Any]):
    """Build one agent from a member spec (string via ``agents.make_agent``, or a callable)."""
    if isinstance(member, str):
        from rook_env.agents import make_agent

        agent = make_agent(member, seed=seed, **dict(flags))
    else:
        agent = member(seed)
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"spec {_spec_label(member)!r} built {agent!r}, which has no act(observation, info) method")
    return agent


def check_team(team: TeamSpec, flags: Mapping[str, Any]) -> None:
    """Build each member once so a bad spec fails early with a clear message."""
    members = team.members if team.members[0] != team.members[1] else team.members[:1]
    for m in members:
        try:
            build_agent(m, 0, flags)
        except ModuleNotFoundError as exc:
            raise ValueError(f"agent {_spec_label(m)!r} is not available ({exc})") from exc
        except FileNotFoundError as exc:
            raise ValueError(f"agent {_spec_label(m)!r}: {exc}") from exc
        except (ValueError, TypeError) as exc:
            raise ValueError(f"agent {_spec_label(m)!r}: {exc}") from exc
        except Exception as exc:  # e.g. a checkpoint that does not load
            raise ValueError(f"agent {_spec_label(m)!r} could not be built: {type(exc).__name__}: {exc}") from exc


def _derive(*parts: Any) -> int:
    """A 63-bit seed from any parts (stable across processes and Python runs)."""
    parts = tuple(int(p) if isinstance(p, (int, np.integer)) and not isinstance(p, bool) else p for p in parts)
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def make_deal(seed: int, index: int, flags: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], int]:
    """Deal ``index`` of the stream of ``seed``: (reset options {hands, nest, dealer}, env seed).
    Cards are dealt as RULES.md says (one at a time from the dealer's left, five to the nest);
    the dealer rotates (``index % 4``); the env seed drives any redeal inside the hand."""
    from rook_env.cards import bits
    from rook_env.config import make_config
    from rook_env.rules import RookState

    seed, index = int(seed), int(index)
    config = make_config(**dict(flags or {}))
    st = RookState(config)
    st.rng = random.Random(_derive("deal", seed, index))
    st.new_game(dealer=index % 4)
    options = {"hands": [bits(h) for h in st.hands], "nest": bits(st.nest), "dealer": index % 4}
    return options, _derive("env", seed, index)


def _check_flags(flags: Mapping[str, Any] | None) -> dict[str, Any]:
    from rook_env.config import make_config

    flags = dict(flags or {})
    if flags.get("episode", "hand") != "hand":
        raise ValueError(
            "evaluation plays single hands (episode=hand); games to target_score are built from the deal "
            "stream, so do not set episode"
        )
    make_config(**flags)  # raises ValueError naming a bad flag
    return flags


# =============================================================================================
# Playing
# =============================================================================================
# One hand's record, from team A's point of view (plain ints: cheap to pickle between processes).
REC_FIELDS = (
    "deal", "seating", "a_bid", "bid", "made", "score_a", "score_b", "counters_a", "counters_b",
    "illegal_a", "illegal_b", "redeals", "steps",
)
_F = {name: i for i, name in enumerate(REC_FIELDS)}


def _seat_role(seating: int, seat: int) -> tuple[int, int]:
    """(team 0=A / 1=B, member 0/1) of ``seat``: seating 0 puts A in seats {0, 2}, seating 1 in {1, 3}."""
    team = (seat & 1) ^ seating
    return team, seat >> 1


@dataclass(frozen=True)
class _Context:
    teams: tuple[TeamSpec, TeamSpec]
    flags: dict[str, Any]
    seed: int
    duplicate: bool
    strict: bool
    block_size: int
    deals: int
    common_seeds: bool = True


_ENVS: dict[Any, Any] = {}
_WORKER_CTX: _Context | None = None


def _env_for(flags: Mapping[str, Any]):
    import rook_env

    key = tuple(sorted(flags.items()))
    env = _ENVS.get(key)
    if env is None:
        env = _ENVS[key] = rook_env.raw_env(**dict(flags))
    return env


def _play_hand(env, agents: Sequence[Any], options: dict[str, Any], env_seed: int, seating: int,
               strict: bool, ctx_text: str) -> tuple[dict[str, Any], list[int], int]:
    """Play one hand; returns (hand result, illegal actions per team [A, B], steps)."""
    from rook_env.rules import OVER

    env.reset(seed=env_seed, options=options)
    for ag in agents:
        reset = getattr(ag, "reset", None)
        if reset is not None:
            reset()
    game = env.game
    illegal = [0, 0]
    steps = 0
    infos = env.infos
    while game.phase != OVER:
        name = env.agent_selection
        seat = game.current
        obs = env.observe(name)
        action = agents[seat].act(obs, infos[name])
        try:
            env.step(action)
        except ValueError as exc:
            team = _seat_role(seating, seat)[0]
            if strict:
                raise IllegalActionError(f"{ctx_text}, seat {seat} (team {'AB'[team]}): {exc}") from exc
            illegal[team] += 1
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))  # the lowest legal action
        steps += 1
    return env.infos["player_0"]["hand"], illegal, steps


def _run_block(block: int, ctx: _Context) -> list[tuple[int, ...]]:
    """Play the deals of one block (both seatings when duplicate); deterministic in (seed, block)."""
    env = _env_for(ctx.flags)
    start = block * ctx.block_size
    stop = min(ctx.deals, start + ctx.block_size)
    seatings = (0, 1) if ctx.duplicate else None
    # agents[seating][seat]; the seat's seed is shared by both seatings (common random numbers).
    agents: dict[int, list[Any]] = {}
    for seating in (0, 1):
        row = []
        for seat in range(4):
            team, member = _seat_role(seating, seat)
            key = ("agent", ctx.seed, block, seat) if ctx.common_seeds else ("agent", ctx.seed, block, seating, seat)
            row.append(build_agent(ctx.teams[team].members[member], _derive(*key), ctx.flags))
        agents[seating] = row
    out: list[tuple[int, ...]] = []
    for deal in range(start, stop):
        options, env_seed = make_deal(ctx.seed, deal, ctx.flags)
        for seating in seatings or (deal % 2,):
            res, illegal, steps = _play_hand(
                env, agents[seating], options, env_seed, seating, ctx.strict, f"deal {deal}, seating {seating}"
            )
            ta = seating  # team index (0: seats {0,2}) of A
            hs, ct = res["hand_scores"], res["counters"]
            out.append((
                deal, seating, int((res["bidder"] & 1) == ta), int(res["bid"]), int(bool(res["made"])),
                int(hs[ta]), int(hs[1 - ta]), int(ct[ta]), int(ct[1 - ta]),
                illegal[0], illegal[1], int(env.game.deals - 1), steps,
            ))
    return out


def _init_worker(ctx: _Context) -> None:
    global _WORKER_CTX
    _WORKER_CTX = ctx
    if "torch" in sys.modules:  # one thread per worker process
        try:
            sys.modules["torch"].set_num_threads(1)
        except Exception:
            pass


def _run_block_in_worker(block: int) -> list[tuple[int, ...]]:
    assert _WORKER_CTX is not None
    return _run_block(block, _WORKER_CTX)


# =============================================================================================
# Results
# =============================================================================================
@dataclass
class TeamStats:
    """One team's auction and scoring record over all hands it played."""

    hands: int
    contracts: int  # auctions won
    made: int
    sets: int
    mean_bid: float  # mean winning bid of its contracts
    points_as_bidder: float  # mean hand score in hands it bid
    points_as_defender: float  # mean hand score in hands it defended
    mean_points: float  # mean hand score
    mean_counters: float  # mean counters captured per hand

    @property
    def make_rate(self) -> float:
        return self.made / self.contracts if self.contracts else math.nan

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["make_rate"] = self.make_rate
        return d


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else math.nan


def _team_stats(rec: np.ndarray, team: int) -> TeamStats:
    own_bid = rec[:, _F["a_bid"]] == (1 if team == 0 else 0)
    score = rec[:, _F["score_a" if team == 0 else "score_b"]]
    counters = rec[:, _F["counters_a" if team == 0 else "counters_b"]]
    made = rec[:, _F["made"]] == 1
    return TeamStats(
        hands=int(rec.shape[0]),
        contracts=int(own_bid.sum()),
        made=int((own_bid & made).sum()),
        sets=int((own_bid & ~made).sum()),
        mean_bid=_mean(rec[own_bid, _F["bid"]]),
        points_as_bidder=_mean(score[own_bid]),
        points_as_defender=_mean(score[~own_bid]),
        mean_points=_mean(score),
        mean_counters=_mean(counters),
    )


def _clean(x: Any) -> Any:
    """JSON-safe: NaN/inf -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x


@dataclass
class MatchResult:
    """Everything :func:`play_match` measured. ``pair_values[i]``: deal ``i``'s points for A minus
    B, averaged over its seatings (a single hand when not duplicate)."""

    team_a: str
    team_b: str
    deals: int
    seed: int
    duplicate: bool
    flags: dict[str, Any]
    confidence: float
    pair_values: np.ndarray
    mean: float
    ci: tuple[float, float]
    pair_wins: dict[str, int]  # deal pairs won by A / by B / tied
    games: dict[str, Any]
    teams: dict[str, TeamStats]
    illegal: dict[str, int]
    hands: int
    redeals: int
    steps: int
    elapsed_s: float
    workers: int
    records: np.ndarray = field(repr=False)  # one row per hand, columns REC_FIELDS
    common_seeds: bool = True
    block_size: int = DEFAULT_BLOCK_SIZE

    @property
    def deals_per_s(self) -> float:
        return self.deals / self.elapsed_s if self.elapsed_s > 0 else math.inf

    @property
    def hands_per_s(self) -> float:
        return self.hands / self.elapsed_s if self.elapsed_s > 0 else math.inf

    @property
    def illegal_total(self) -> int:
        return self.illegal["A"] + self.illegal["B"]

    def to_dict(self, per_deal: bool = True, timing: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "team_a": self.team_a,
            "team_b": self.team_b,
            "deals": self.deals,
            "hands": self.hands,
            "seed": self.seed,
            "duplicate": self.duplicate,
            "common_seeds": self.common_seeds,
            "block_size": self.block_size,
            "flags": dict(self.flags),
            "confidence": self.confidence,
            "mean_points_per_deal": self.mean,
            "ci": list(self.ci),
            "pair_wins": dict(self.pair_wins),
            "games": dict(self.games),
            "teams": {k: v.to_dict() for k, v in self.teams.items()},
            "illegal_actions": dict(self.illegal),
            "redeals": self.redeals,
            "steps": self.steps,
        }
        if timing:
            d.update(elapsed_s=self.elapsed_s, deals_per_s=self.deals_per_s, hands_per_s=self.hands_per_s,
                     workers=self.workers)
        if per_deal:
            d["per_deal"] = [float(v) for v in self.pair_values]
        return _clean(d)

    def summary(self) -> str:
        lo, hi = self.ci
        g = self.games
        return (
            f"{self.team_a} vs {self.team_b}: {self.mean:+.2f} points/deal "
            f"[{lo:+.2f}, {hi:+.2f}] over {self.deals} deals; games won by A {g['won_a']}/{g['played']}"
            f"; illegal {self.illegal_total}"
        )


def _summarise(records: np.ndarray, ctx: _Context, confidence: float, n_boot: int, elapsed: float,
               workers: int) -> MatchResult:
    deal = records[:, _F["deal"]]
    diff = (records[:, _F["score_a"]] - records[:, _F["score_b"]]).astype(np.float64)
    per_deal = np.bincount(deal, weights=diff, minlength=ctx.deals) / np.bincount(deal, minlength=ctx.deals)
    mean = float(per_deal.mean())
    ci = bootstrap_mean_ci(per_deal, confidence=confidence, n_boot=n_boot, seed=_derive("bootstrap", ctx.seed) % 2**32)
    target = int(ctx.flags.get("target_score", 300))
    winners: list[int] = []
    unfinished = 0
    for seating in sorted(set(records[:, _F["seating"]].tolist())) if ctx.duplicate else [None]:
        rows = records if seating is None else records[records[:, _F["seating"]] == seating]
        w, pend = games_from_stream(zip(rows[:, _F["score_a"]].tolist(), rows[:, _F["score_b"]].tolist()), target)
        winners += w
        unfinished += pend
    won_a = sum(1 for w in winners if w == 0)
    played = len(winners)
    g_lo, g_hi = wilson_interval(won_a, played, confidence)
    games = {
        "target_score": target,
        "played": played,
        "won_a": won_a,
        "won_b": played - won_a,
        "win_rate": won_a / played if played else math.nan,
        "ci": [g_lo, g_hi],
        "hands_in_unfinished": unfinished,
    }
    return MatchResult(
        team_a=ctx.teams[0].name, team_b=ctx.teams[1].name, deals=ctx.deals, seed=ctx.seed,
        duplicate=ctx.duplicate, flags=dict(ctx.flags), confidence=confidence,
        pair_values=per_deal, mean=mean, ci=ci,
        pair_wins={"A": int((per_deal > 0).sum()), "B": int((per_deal < 0).sum()), "tied": int((per_deal == 0).sum())},
        games=games,
        teams={"A": _team_stats(records, 0), "B": _team_stats(records, 1)},
        illegal={"A": int(records[:, _F["illegal_a"]].sum()), "B": int(records[:, _F["illegal_b"]].sum())},
        hands=int(records.shape[0]), redeals=int(records[:, _F["redeals"]].sum()),
        steps=int(records[:, _F["steps"]].sum()), elapsed_s=elapsed, workers=workers, records=records,
        common_seeds=ctx.common_seeds, block_size=ctx.block_size,
    )


def play_match(
    spec_a: Any,
    spec_b: Any,
    deals: int = 2000,
    seed: int = 0,
    flags: Mapping[str, Any] | None = None,
    duplicate: bool = True,
    workers: int = 1,
    progress: bool = False,
    *,
    names: tuple[str | None, str | None] = (None, None),
    confidence: float = 0.95,
    n_boot: int = 2000,
    strict: bool = False,
    block_size: int = DEFAULT_BLOCK_SIZE,
    check: bool = True,
    common_seeds: bool = True,
) -> MatchResult:
    """Play team A against team B over ``deals`` seeded deals (each twice when ``duplicate``).

    ``spec_a`` / ``spec_b``: team specs (see :func:`parse_team`); ``flags``: the environment's
    rule flags; ``workers``: processes (results are identical for any value); ``strict``: raise
    :class:`IllegalActionError` on an illegal action instead of counting it; ``block_size``:
    deals per block (agents are rebuilt, freshly seeded, at each block; part of the seed's
    definition); ``check``: build every member once up front to fail early on a bad spec;
    ``common_seeds``: seed the agent at seat ``s`` identically in both seatings (common random
    numbers: identical teams cancel exactly, swapping A and B negates every deal pair); False
    seeds all eight seat-agents of a deal independently.
    """
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer (results are reproducible per seed), got {seed!r}")
    flags = _check_flags(flags)
    teams = (parse_team(spec_a, names[0]), parse_team(spec_b, names[1]))
    if check:
        for t in teams:
            check_team(t, flags)
    ctx = _Context(teams, flags, int(seed), bool(duplicate), bool(strict), int(block_size), deals, bool(common_seeds))
    n_blocks = (deals + block_size - 1) // block_size
    blocks = range(n_blocks)
    workers = min(workers, n_blocks)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=deals, unit="deal", desc=f"{teams[0].name} vs {teams[1].name}", file=sys.stderr,
                   dynamic_ncols=True, leave=False)
    t0 = time.perf_counter()
    chunks: list[list[tuple[int, ...]]] = []
    try:
        if workers == 1:
            for b in blocks:
                chunks.append(_run_block(b, ctx))
                if bar is not None:
                    bar.update(len(chunks[-1]) // (2 if duplicate else 1))
        else:
            methods = mp.get_all_start_methods()
            mpctx = mp.get_context("fork" if "fork" in methods else None)
            with mpctx.Pool(workers, initializer=_init_worker, initargs=(ctx,)) as pool:
                for chunk in pool.imap(_run_block_in_worker, blocks, chunksize=1):
                    chunks.append(chunk)
                    if bar is not None:
                        bar.update(len(chunk) // (2 if duplicate else 1))
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - t0
    records = np.array([r for c in chunks for r in c], dtype=np.int64).reshape(-1, len(REC_FIELDS))
    return _summarise(records, ctx, confidence, n_boot, elapsed, workers)


# =============================================================================================
# Round robin
# =============================================================================================
@dataclass
class RoundRobinResult:
    """Pairwise duplicate matches and ratings. ``wins[i][j]``: deal pairs ``i`` won against ``j``
    (ties half); ``points[i][j]``: ``i``'s mean points per deal against ``j``; ``elo``: Bradley-Terry
    fit of ``wins`` on the Elo scale (mean 1500)."""

    names: list[str]
    matches: dict[tuple[int, int], MatchResult]
    wins: np.ndarray
    points: np.ndarray
    elo: np.ndarray
    prior: float

    def ranking(self) -> list[int]:
        return sorted(range(len(self.names)), key=lambda i: -self.elo[i])

    def rows(self) -> list[dict[str, Any]]:
        out = []
        k = len(self.names)
        for rank, i in enumerate(self.ranking(), 1):
            others = [j for j in range(k) if j != i]
            won = sum(self.wins[i, j] for j in others)
            total = sum(self.wins[i, j] + self.wins[j, i] for j in others)
            out.append({
                "rank": rank,
                "name": self.names[i],
                "elo": float(self.elo[i]),
                "mean_points": float(np.mean([self.points[i, j] for j in others])) if others else math.nan,
                "deal_pair_score": won / total if total else math.nan,
                "deal_pairs": int(total),
            })
        return out

    def to_dict(self, per_deal: bool = False) -> dict[str, Any]:
        return _clean({
            "names": self.names,
            "ratings": self.rows(),
            "rating_model": f"Bradley-Terry on deal-pair outcomes (ties half), prior {self.prior} virtual games per pair, Elo scale, mean 1500",
            "wins": self.wins,
            "points": self.points,
            "matches": [
                {"a": self.names[i], "b": self.names[j], **m.to_dict(per_deal=per_deal)}
                for (i, j), m in sorted(self.matches.items())
            ],
        })


def round_robin(
    specs: Sequence[Any],
    deals: int = 1000,
    seed: int = 0,
    flags: Mapping[str, Any] | None = None,
    duplicate: bool = True,
    workers: int = 1,
    progress: bool = False,
    *,
    names: Sequence[str | None] | None = None,
    prior: float = 1.0,
    **match_kwargs: Any,
) -> RoundRobinResult:
    """Every pair of team specs plays a duplicate match on the same deals (same ``seed``); the
    deal-pair outcomes are fitted with Bradley-Terry and reported on the Elo scale."""
    specs = list(specs)
    if len(specs) < 2:
        raise ValueError("a round robin needs at least two team specs")
    names = list(names) if names is not None else [None] * len(specs)
    if len(names) != len(specs):
        raise ValueError("names must match specs one to one")
    teams = [parse_team(s, n) for s, n in zip(specs, names)]
    seen: dict[str, int] = {}
    for i, t in enumerate(teams):  # unique display names
        if t.name in seen:
            seen[t.name] += 1
            teams[i] = TeamSpec(t.members, f"{t.name}#{seen[t.name]}")
        else:
            seen[t.name] = 1
    k = len(teams)
    wins = np.zeros((k, k))
    points = np.zeros((k, k))
    matches: dict[tuple[int, int], MatchResult] = {}
    for i in range(k):
        for j in range(i + 1, k):
            m = play_match(teams[i], teams[j], deals=deals, seed=seed, flags=flags, duplicate=duplicate,
                           workers=workers, progress=progress, **match_kwargs)
            matches[(i, j)] = m
            wins[i, j] = m.pair_wins["A"] + m.pair_wins["tied"] / 2
            wins[j, i] = m.pair_wins["B"] + m.pair_wins["tied"] / 2
            points[i, j] = m.mean
            points[j, i] = -m.mean
    elo = elo_ratings(wins, prior=prior)
    return RoundRobinResult([t.name for t in teams], matches, wins, points, elo, prior)


# =============================================================================================
# Output: tables and plots
# =============================================================================================
def _fmt(x: float, spec: str = "+.2f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def match_tables(res: MatchResult) -> list[Any]:
    """Rich tables of a match result."""
    from rich.table import Table

    pct = f"{res.confidence:.0%}"
    head = Table(title=f"Rook {'duplicate ' if res.duplicate else ''}match: A = {res.team_a}  vs  B = {res.team_b}",
                 show_header=True, header_style="bold")
    head.add_column("measure")
    head.add_column("value", justify="right")
    lo, hi = res.ci
    head.add_row(f"mean points per deal (A - B), {pct} bootstrap CI",
                 f"[bold]{_fmt(res.mean)}[/bold]  [{_fmt(lo)}, {_fmt(hi)}]")
    pw = res.pair_wins
    head.add_row("deals won by A / B / tied" if not res.duplicate else "deal pairs won by A / B / tied",
                 f"{pw['A']} / {pw['B']} / {pw['tied']}")
    g = res.games
    glo, ghi = g["ci"]
    head.add_row(f"games to {g['target_score']} won by A, {pct} Wilson CI",
                 f"{g['won_a']}/{g['played']} = {_fmt(g['win_rate'], '.1%')}  [{_fmt(glo, '.1%')}, {_fmt(ghi, '.1%')}]")
    ill = res.illegal_total
    head.add_row("illegal actions (A / B)",
                 f"{'[red]' if ill else '[green]'}{res.illegal['A']} / {res.illegal['B']}{'[/red]' if ill else '[/green]'}")
    head.add_row("deals / hands / redeals", f"{res.deals} / {res.hands} / {res.redeals}")
    head.add_row("speed", f"{res.deals_per_s:,.0f} deals/s, {res.hands_per_s:,.0f} hands/s ({res.workers}w)")
    flags = ", ".join(f"{k}={v}" for k, v in sorted(res.flags.items())) or "defaults"
    head.add_row("seed / flags", f"{res.seed} / {flags}")

    teams = Table(title="per team", show_header=True, header_style="bold")
    teams.add_column("")
    teams.add_column(f"A: {res.team_a}", justify="right")
    teams.add_column(f"B: {res.team_b}", justify="right")
    a, b = res.teams["A"], res.teams["B"]
    rows = [
        ("contracts (auctions won)", lambda t: f"{t.contracts} ({t.contracts / t.hands:.0%})" if t.hands else "-"),
        ("made / set", lambda t: f"{t.made} / {t.sets}"),
        ("make rate", lambda t: _fmt(t.make_rate, ".1%")),
        ("mean winning bid", lambda t: _fmt(t.mean_bid, ".1f")),
        ("points per hand as bidders", lambda t: _fmt(t.points_as_bidder, "+.1f")),
        ("points per hand as defenders", lambda t: _fmt(t.points_as_defender, "+.1f")),
        ("points per hand", lambda t: _fmt(t.mean_points, "+.1f")),
        ("counters per hand", lambda t: _fmt(t.mean_counters, ".1f")),
    ]
    for label, f in rows:
        teams.add_row(label, f(a), f(b))
    return [head, teams]


def round_robin_table(rr: RoundRobinResult) -> Any:
    from rich.table import Table

    t = Table(title="Round robin (Bradley-Terry on duplicate deal pairs, Elo scale)", header_style="bold")
    for col, just in [("#", "right"), ("team", "left"), ("Elo", "right"), ("mean pts/deal vs field", "right"),
                      ("deal-pair score", "right"), ("deal pairs", "right")]:
        t.add_column(col, justify=just)
    for r in rr.rows():
        t.add_row(str(r["rank"]), r["name"], f"{r['elo']:.0f}", _fmt(r["mean_points"]),
                  _fmt(r["deal_pair_score"], ".1%"), str(r["deal_pairs"]))
    m = Table(title="mean points per deal (row team vs column team)", header_style="bold")
    m.add_column("")
    for n in rr.names:
        m.add_column(n, justify="right")
    for i, n in enumerate(rr.names):
        m.add_row(n, *["·" if i == j else _fmt(rr.points[i, j]) for j in range(len(rr.names))])
    return [t, m]


def plot_match(res: MatchResult, path: str) -> None:
    """PNG: running mean of the per-deal values with a running normal-approximation band, and the
    final bootstrap interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    v = np.asarray(res.pair_values, dtype=np.float64)
    n = np.arange(1, v.size + 1)
    mean = np.cumsum(v) / n
    sq = np.cumsum(v * v) / n
    var = np.maximum(sq - mean * mean, 0.0) * n / np.maximum(n - 1, 1)
    half = _z(res.confidence) * np.sqrt(var / n)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot(n, mean, color="C0", lw=1.5, label="running mean")
    ax.fill_between(n, mean - half, mean + half, color="C0", alpha=0.2,
                    label=f"running {res.confidence:.0%} interval (normal approx.)")
    ax.axhline(0.0, color="grey", lw=0.8)
    lo, hi = res.ci
    skip = min(v.size - 1, max(10, v.size // 20))  # the first few deals would dominate the scale
    if v.size > 20:
        band = np.concatenate([(mean - half)[skip:], (mean + half)[skip:], [0.0]])
        pad = 0.1 * (band.max() - band.min()) or 1.0
        ax.set_ylim(band.min() - pad, band.max() + pad)
    if math.isfinite(lo):
        ax.errorbar([v.size], [res.mean], yerr=[[res.mean - lo], [hi - res.mean]], fmt="o", color="C3",
                    capsize=4, label=f"final mean, {res.confidence:.0%} bootstrap CI")
    ax.set_xlabel("deals" + (" (each played in both seatings)" if res.duplicate else ""))
    ax.set_ylabel(f"points per deal, {res.team_a} - {res.team_b}")
    ax.set_title(f"{res.team_a} vs {res.team_b}: {res.mean:+.2f} [{lo:+.2f}, {hi:+.2f}] (seed {res.seed})")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def plot_round_robin(rr: RoundRobinResult, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = rr.ranking()
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(order)), 4), dpi=100)
    ax.bar([rr.names[i] for i in order], [rr.elo[i] - 1500 for i in order], bottom=1500, color="C0")
    ax.axhline(1500, color="grey", lw=0.8)
    ax.set_ylabel("Elo (Bradley-Terry, mean 1500)")
    ax.set_title("Round robin ratings")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


# =============================================================================================


def parse_flags(items: Iterable[str] | None) -> dict[str, Any]:
    """``["deck=full", "target_score=500"]`` -> ``{"deck": "full", "target_score": 500}`` (validated)."""
    from rook_env.config import make_config

    flags: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"--flag {item!r}: expected NAME=VALUE, e.g. --flag deck=full")
        k, v = (s.strip() for s in item.split("=", 1))
        if not k or not v:
            raise ValueError(f"--flag {item!r}: expected NAME=VALUE, e.g. --flag deck=full")
        flags[k] = int(v) if re.fullmatch(r"[+-]?\d+", v) else v
    make_config(**flags)
    return flags
