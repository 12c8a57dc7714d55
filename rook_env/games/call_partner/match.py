"""Rotation matches of call-your-partner Rook: every agent plays every seat of the same deal.

Call-your-partner scores are individual and the partnerships change every hand, so the
two-seating duplicate of :mod:`.match` does not apply. Its counterpart here is the *rotation*:

- A *field* of ``n`` agents sits at an ``n``-player table (``n = players``, 4 to 6): either ``n``
  member specs, or two, a candidate and a baseline that fills the other ``n - 1`` chairs
  (``play_rotation_match(["call_partner_heuristic", "random"])``: one heuristic among four
  random players).
- Deal ``i`` is generated from ``(seed, i)`` (hands, nest; the dealer rotates ``i % n``; an
  environment seed for any redeal) and played ``n`` times through ``reset(options=...)``. In
  rotation ``r`` seat ``s`` is taken by agent ``(s + r) % n``, i.e. agent ``j`` plays seat
  ``(j - r) % n``: over the ``n`` rotations every agent holds every seat's cards, in every
  position relative to the dealer, against the same cards in the other seats.
- The agent at seat ``s`` is seeded from ``(seed, block, s)`` in *every* rotation (common random
  numbers), so a field of identical agents plays the ``n`` rotations identically: every agent
  then scores the mean of the seats' hand scores and every difference is exactly 0.

Statistics, per agent ``j`` and deal ``d``: ``score[j, d]``, its individual hand score (RULES.md
C8) averaged over the ``n`` rotations, and ``diff[j, d] = score[j, d] - mean over k != j of
score[k, d]`` (its score minus the field's: the mean of the ``score_diff`` reward it received).
Reported: the mean over deals of each with a percentile bootstrap interval over deals (a deal
and its ``n`` rotations are one unit: the rotations share the cards, so they are not independent),
reproducible for a seed. The headline :attr:`RotationResult.mean` / ``.ci`` is agent 0's ``diff``
(the candidate minus the field); the ``diff`` of all agents sums to 0 on every deal. Besides:
contracts won, made and set, the mean winning bid, times a called card's holder (secret partner),
times alone, mean score as bidder / partner / defender, illegal actions (counted, replaced by the
lowest legal action, reported; they must be zero) and fallbacks per agent, speed. Hands are
played at 0 points each (agents do not see a running game score); games to 500 are not built.

Deals are processed in fixed blocks (agents built once per block), so ``workers=N`` gives results
identical to ``workers=1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rook_env.agents.registry import build_agent, check_team, parse_team, spec_label, split_game
from rook_env.core.registry import get_game

from rook_env.evaluation.blocks import cached_env, check_match_args, fallbacks, play_hand, run_match
from rook_env.evaluation.deals import check_flags, derive_seed, make_deal
from rook_env.evaluation.results import DEFAULT_BLOCK_SIZE, Speed, mean_or_nan, to_json_safe
from rook_env.evaluation.stats import bootstrap_mean_ci

__all__ = ["AgentStats", "RotationContext", "RotationResult", "ROT_FIELDS", "field_specs", "labels",
           "play_rotation_hand", "play_rotation_match", "rotation_agents", "train_match"]

# One row per (deal, rotation, seat): plain ints, cheap to pickle between processes.
ROT_FIELDS = (
    "deal", "rotation", "seat", "agent", "score", "bidder", "partner", "alone", "made", "bid", "points",
    "illegal", "fallbacks", "redeals", "steps",
)
RF = {name: i for i, name in enumerate(ROT_FIELDS)}


def field_specs(specs: Sequence[Any], players: int) -> list[Any]:
    """The ``players`` member specs of a field: ``specs`` itself when it has one per seat, or
    ``[candidate] + [baseline] * (players - 1)`` for two specs ``(candidate, baseline)``."""
    specs = list(specs)
    if len(specs) == players:
        return specs
    if len(specs) == 2:
        return [specs[0]] + [specs[1]] * (players - 1)
    raise ValueError(f"a rotation match at a {players}-player table needs {players} agent specs (one per chair) "
                     f"or 2 (a candidate and the baseline filling the other chairs), got {len(specs)}")


@dataclass(frozen=True)
class RotationContext:
    """What every block of a rotation match needs: the field, the rule flags, the seed."""

    specs: tuple[Any, ...]  # member spec per agent of the field
    flags: dict[str, Any]  # call-your-partner rule flags (without "game")
    seed: int
    strict: bool
    block_size: int
    deals: int

    @property
    def n(self) -> int:
        return len(self.specs)

    @property
    def deal_flags(self) -> dict[str, Any]:
        return {**self.flags, "game": "call_partner"}


def rotation_agents(ctx: RotationContext, block: int, rotation: int) -> list[Any]:
    """The agents of one block's hands in ``rotation``, by seat: seat ``s`` is taken by agent
    ``(s + rotation) % n``, seeded by the seat alone (common random numbers)."""
    n = ctx.n
    return [build_agent(ctx.specs[(s + rotation) % n], derive_seed("agent", ctx.seed, block, s), ctx.deal_flags)
            for s in range(n)]


def play_rotation_hand(env: Any, row: Sequence[Any], ctx: RotationContext, deal: int, rotation: int,
                       options: Mapping[str, Any], env_seed: int) -> tuple[list[int], int]:
    """Play deal ``deal`` in ``rotation`` with the agents ``row`` (by seat); returns (illegal actions
    per seat, steps). An illegal action raises with ``ctx.strict``, else is counted and replaced by
    the lowest legal action."""
    n = ctx.n

    def describe(seat: int) -> str:
        j = (seat + rotation) % n
        return f"deal {deal}, rotation {rotation}, seat {seat} (agent {j}: {spec_label(ctx.specs[j])})"

    return play_hand(env, row, options, env_seed, ctx.strict, describe)


def _run_block(block: int, ctx: RotationContext) -> list[tuple[int, ...]]:
    """Play the deals of one block, each in every rotation; deterministic in (seed, block)."""
    n, env = ctx.n, cached_env(get_game("call_partner").load("raw_env"), ctx.flags)
    agents = [rotation_agents(ctx, block, r) for r in range(n)]  # agents[r][s]: seat s in rotation r
    out: list[tuple[int, ...]] = []
    for deal in range(block * ctx.block_size, min(ctx.deals, (block + 1) * ctx.block_size)):
        options, env_seed = make_deal(ctx.seed, deal, ctx.deal_flags)
        for r in range(n):
            row = agents[r]
            before = [fallbacks(a) for a in row]
            illegal, steps = play_rotation_hand(env, row, ctx, deal, r, options, env_seed)
            res = env.infos["player_0"]["hand"]
            redeals = int(env.game.deals - 1)
            for s in range(n):
                fell_back = fallbacks(row[s]) - before[s]
                out.append((
                    deal, r, s, (s + r) % n, int(res["hand_scores"][s]), int(s == res["bidder"]),
                    int(s in res["partners"]), int(s == res["bidder"] and res["alone"]), int(bool(res["made"])),
                    int(res["bid"]), int(res["points"][s]), illegal[s], fell_back, redeals, steps,
                ))
    return out


@dataclass
class AgentStats:
    """One agent of the field over all its hands (``n`` per deal)."""

    name: str
    spec: str
    mean_score: float  # individual hand score per hand
    score_ci: tuple[float, float]
    diff: float  # mean score minus the mean of the other agents' (per deal), i.e. its mean score_diff
    diff_ci: tuple[float, float]
    hands: int
    contracts: int  # auctions won
    made: int
    sets: int
    alone: int  # contracts played alone (the called card in the nest)
    partner: int  # hands as the holder of a called card (a secret partner)
    mean_bid: float
    score_as_bidder: float
    score_as_partner: float
    score_as_defender: float
    illegal: int
    fallbacks: int

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class RotationResult(Speed):
    """Everything :func:`play_rotation_match` measured. ``deal_scores[j, d]``: agent ``j``'s hand
    score on deal ``d`` averaged over the rotations; ``deal_diffs[j, d]``: minus the field's."""

    players: int
    deals: int
    seed: int
    flags: dict[str, Any]
    confidence: float
    agents: list[AgentStats]
    mean: float  # agent 0's diff: the candidate minus the field
    ci: tuple[float, float]
    deal_scores: np.ndarray = field(repr=False)
    deal_diffs: np.ndarray = field(repr=False)
    hands: int = 0
    redeals: int = 0
    steps: int = 0
    elapsed_s: float = 0.0
    workers: int = 1
    block_size: int = DEFAULT_BLOCK_SIZE
    records: np.ndarray = field(default=None, repr=False)  # one row per (deal, rotation, seat), ROT_FIELDS

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.agents]

    @property
    def illegal_total(self) -> int:
        return sum(a.illegal for a in self.agents)

    def to_dict(self, per_deal: bool = True, timing: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "game": "call_partner",
            "scheme": "rotation",
            "players": self.players,
            "deals": self.deals,
            "hands": self.hands,
            "seed": self.seed,
            "block_size": self.block_size,
            "flags": dict(self.flags),
            "confidence": self.confidence,
            "candidate_minus_field": self.mean,
            "ci": list(self.ci),
            "agents": [a.to_dict() for a in self.agents],
            "illegal_actions": self.illegal_total,
            "redeals": self.redeals,
            "steps": self.steps,
        }
        if timing:
            d.update(self.timing())
        if per_deal:
            d["per_deal_scores"] = self.deal_scores.tolist()
        return to_json_safe(d)

    def summary(self) -> str:
        lo, hi = self.ci
        field_names = sorted({a.spec for a in self.agents[1:]})
        return (
            f"{self.agents[0].name} vs {'/'.join(field_names)} ({self.players} players): "
            f"{self.mean:+.2f} points/hand over the field [{lo:+.2f}, {hi:+.2f}] over {self.deals} deals "
            f"x {self.players} rotations; illegal {self.illegal_total}"
        )


def labels(specs: Sequence[Any]) -> list[str]:
    """Display names, numbered when a spec repeats (``random #2``)."""
    base = [spec_label(s) for s in specs]
    out = []
    for j, b in enumerate(base):
        out.append(b if base.count(b) == 1 else f"{b} #{base[:j + 1].count(b)}")
    return out


def _summarise(records: np.ndarray, ctx: RotationContext, confidence: float, n_boot: int, elapsed: float,
               workers: int) -> RotationResult:
    n, deals = ctx.n, ctx.deals
    agent, deal = records[:, RF["agent"]], records[:, RF["deal"]]
    score = records[:, RF["score"]].astype(np.float64)
    # Each (agent, deal) has exactly n rows (one per rotation).
    deal_scores = np.zeros((n, deals))
    np.add.at(deal_scores, (agent, deal), score)
    deal_scores /= n
    others = (deal_scores.sum(axis=0, keepdims=True) - deal_scores) / (n - 1)
    deal_diffs = deal_scores - others
    names = labels(ctx.specs)
    stats = []
    for j in range(n):
        rows = records[agent == j]
        sc = rows[:, RF["score"]].astype(np.float64)
        bid = rows[:, RF["bidder"]] == 1
        partner = rows[:, RF["partner"]] == 1
        made = rows[:, RF["made"]] == 1
        boot = derive_seed("bootstrap", ctx.seed, j) % 2**32
        stats.append(AgentStats(
            name=names[j], spec=spec_label(ctx.specs[j]),
            mean_score=float(deal_scores[j].mean()),
            score_ci=bootstrap_mean_ci(deal_scores[j], confidence, n_boot, seed=boot),
            diff=float(deal_diffs[j].mean()),
            diff_ci=bootstrap_mean_ci(deal_diffs[j], confidence, n_boot, seed=boot),
            hands=int(rows.shape[0]), contracts=int(bid.sum()), made=int((bid & made).sum()),
            sets=int((bid & ~made).sum()), alone=int(rows[:, RF["alone"]].sum()), partner=int(partner.sum()),
            mean_bid=mean_or_nan(rows[bid, RF["bid"]]), score_as_bidder=mean_or_nan(sc[bid]), score_as_partner=mean_or_nan(sc[partner]),
            score_as_defender=mean_or_nan(sc[~bid & ~partner]), illegal=int(rows[:, RF["illegal"]].sum()),
            fallbacks=int(rows[:, RF["fallbacks"]].sum()),
        ))
    first_seat = records[records[:, RF["seat"]] == 0]  # one row per hand
    return RotationResult(
        players=n, deals=deals, seed=ctx.seed, flags={**ctx.flags, "game": "call_partner"}, confidence=confidence,
        agents=stats, mean=stats[0].diff, ci=stats[0].diff_ci, deal_scores=deal_scores, deal_diffs=deal_diffs,
        hands=int(first_seat.shape[0]), redeals=int(first_seat[:, RF["redeals"]].sum()),
        steps=int(first_seat[:, RF["steps"]].sum()), elapsed_s=elapsed, workers=workers,
        block_size=ctx.block_size, records=records,
    )


def play_rotation_match(
    specs: Sequence[Any],
    deals: int = 1000,
    seed: int = 0,
    flags: Mapping[str, Any] | None = None,
    workers: int = 1,
    progress: bool = False,
    *,
    players: int | None = None,
    confidence: float = 0.95,
    n_boot: int = 2000,
    strict: bool = False,
    block_size: int = DEFAULT_BLOCK_SIZE,
    check: bool = True,
) -> RotationResult:
    """Play a field of agents at a call-your-partner table over ``deals`` seeded deals, each in
    all ``n`` rotations (module docstring).

    ``specs``: ``n`` member specs (agent spec strings such as ``"call_partner_heuristic"`` or
    ``"random"``, or callables ``factory(seed) -> agent``), or two: a candidate and the baseline
    that fills the other chairs. ``flags``: call-your-partner rule flags (``game="call_partner"``
    may be included; ``players`` sets ``n``, as does the ``players`` argument); ``workers``:
    processes (results are identical for any value); ``strict``: raise on an illegal action
    instead of counting it; ``block_size``: deals per block (agents are rebuilt, freshly seeded,
    at each block; part of the seed's definition); ``check``: build every spec once up front.
    """
    check_match_args(deals, workers, block_size, seed)
    flags = dict(flags or {})
    if flags.setdefault("game", "call_partner") != "call_partner":
        raise ValueError(f"play_rotation_match plays call-your-partner Rook, not game={flags['game']!r}; "
                         f"the partnership game is evaluated by play_match")
    if players is not None:
        if flags.get("players", players) != players:
            raise ValueError(f"players={players} contradicts the flag players={flags['players']}")
        flags["players"] = players
    flags = check_flags(flags)
    _, rules = split_game(flags)
    n = int(rules.setdefault("players", 5))
    members = field_specs(specs, n)
    if check:
        for m in {spec_label(m) if isinstance(m, str) else id(m): m for m in members}.values():
            check_team(parse_team((m, m)), flags)
    ctx = RotationContext(tuple(members), rules, int(seed), bool(strict), int(block_size), deals)
    records, elapsed, workers = run_match(_run_block, ctx, deals, block_size, workers,
                                          f"{spec_label(members[0])} vs the field" if progress else None,
                                          len(ROT_FIELDS))
    return _summarise(records, ctx, confidence, n_boot, elapsed, workers)


def train_match(factory: Callable, opponent: str, deals: int, seed: int,
                flags: dict) -> tuple[float, tuple[float, float]]:
    """A training run's match: the policy in one chair, ``opponent`` in the others, each deal played in every
    rotation, in this process; the policy's hand score minus the mean of the others' (its mean score_diff) and
    its 95% interval."""
    res = play_rotation_match([factory, opponent], deals=deals, seed=seed, flags=flags, workers=1, check=False)
    return float(res.mean), (float(res.ci[0]), float(res.ci[1]))
