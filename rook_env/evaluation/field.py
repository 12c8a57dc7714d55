"""Field evaluation: one agent against a field of opponents, each a duplicate match on the same deals, and the
rule that says whether a candidate may replace the current agent (:func:`ship_rule`).

**Why a field.** A policy tuned against one opponent can look strong against it and much less so against anyone
else, so one opponent's verdict flatters whatever was selected against it. The default field
(:data:`DEFAULT_FIELD`, :func:`default_field`) therefore puts the heuristic beside players of other styles, so that
no single style dominates the verdict:

- ``heuristic``: the rule-based player;
- ``search``: determinised search over uniform worlds, on the heuristic's auction;
- ``search-learned``: the same search over worlds drawn from the learned model of the hidden cards
  (``search[worlds=learned]``);
- ``best``: the strongest player the project ships (search over learned worlds on a network's auction);
- ``ppo``: the shipped network (a candidate network's head-to-head against it);
- ``ppo_v5``: a past network, ``networks/ppo_v5.pt`` (the base of today's ``ppo``);
- ``best_response_v5``: a best response trained against that past network, ``networks/best_response_v5.pt``;
- ``pimc``: a search player built apart from the heuristic (its own rollouts, bidding from simulated hand values,
  its own discards and trump: :mod:`rook_env.agents.independent`).

``random`` is left out (every agent beats it; add it with ``opponents``). A member is played only where it can be:
the search members where the agent registry offers search, the two ``networks/`` files where they exist (a
checkout has them; an installed wheel does not), and never the candidate itself (a member whose spec, or
network file, is the candidate's: a match against itself scores exactly 0). :func:`skipped_members` says which
members were left out and why.

**What is reported.** :func:`play_field` plays the candidate against every member with
:func:`~rook_env.games.partnership.match.play_match` on the **same deals** (one ``seed`` for all; the agents at
each seat seeded alike): per member, the mean points per deal (candidate minus member, the duplicate mean) with its
bootstrap interval and the games won; the **field's mean**, the members' per-deal values averaged with equal
weight, deal by deal, with its bootstrap interval over deals (the deals are shared, so the interval accounts for
their correlation); and the **minimum over the field**, the member the candidate does worst against.

**The shipping rule** (:func:`ship_rule`): a candidate may replace the current agent when, measured against the
same members on the same held-out deals (a seed used neither for training nor for selection),

1. it is **at least level with the current agent against every member**: for each member the paired difference
   per deal (the candidate's value minus the current agent's) has a bootstrap interval whose low end is not below
   ``-margin`` (``margin=0``, the default: the interval lies wholly at or above zero, so the data show the candidate
   losing nothing against that member); and
2. it is **ahead on the field's mean**: the interval of the paired difference of the field means lies wholly
   above zero.

A positive ``margin`` turns condition 1 into a non-inferiority test (a loss of up to ``margin`` points a deal
against one member is tolerated). :func:`ship_check` plays both agents against one field and applies the rule.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rook_env.agents import registry
from rook_env.agents.registry import TeamSpec, check_team, parse_team, split_game
from rook_env.games import get_game
from rook_env.games.partnership.match import play_match

from .deals import check_flags
from .results import MatchResult, to_json_safe
from .stats import bootstrap_mean_ci

__all__ = ["DEFAULT_FIELD", "FIELD_MEMBERS", "NETWORKS_DIR", "FieldMember", "FieldResult", "ShipDecision",
           "default_field", "field_teams", "play_field", "ship_check", "ship_rule", "skipped_members"]

# networks/ of a checkout: the past networks the default field plays by path (not in the wheel)
NETWORKS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "networks")


@dataclass(frozen=True)
class FieldMember:
    """A member of the default field: its display ``name``, its agent ``spec`` (a network of ``networks/`` is given
    by its file name, played by its path there) and what it stands for."""

    name: str
    spec: str
    role: str

    @property
    def path(self) -> str | None:
        """The network file of a ``.pt`` member (in :data:`NETWORKS_DIR`), None for other members."""
        return os.path.join(NETWORKS_DIR, self.spec) if self.spec.endswith(".pt") else None

    def available(self) -> str | None:
        """None when the member can be played here, else why not."""
        if self.path is not None:
            return None if os.path.isfile(self.path) else f"{self.path} not found (networks/ is in a checkout only)"
        family = registry.family_of(self.spec)
        if family is None or not family.plays("partnership"):
            return f"the agent registry offers no {self.spec!r}"
        return None

    def team(self) -> TeamSpec:
        return parse_team(self.path or self.spec, self.name)


# The default field (see the module docstring), in order of play.
FIELD_MEMBERS = (
    FieldMember("heuristic", "heuristic", "the rule-based player"),
    FieldMember("search", "search", "search over uniform worlds on the heuristic's auction"),
    FieldMember("search-learned", "search[worlds=learned]", "search over learned worlds on the heuristic's auction"),
    FieldMember("best", "best", "the strongest player shipped"),
    FieldMember("ppo", "ppo", "the shipped network"),
    FieldMember("ppo_v5", "ppo_v5.pt", "a past network (networks/ppo_v5.pt)"),
    FieldMember("best_response_v5", "best_response_v5.pt", "a best response to ppo_v5 (networks/best_response_v5.pt)"),
    FieldMember("pimc", "pimc", "search built apart from the heuristic (its own bidding, discards, rollouts)"),
)
DEFAULT_FIELD = tuple(m.name for m in FIELD_MEMBERS)


def _is_candidate(member: FieldMember, candidate: Any) -> bool:
    """Whether ``candidate`` (a spec string) is this member: the same spec, name or network file."""
    if not isinstance(candidate, str):
        return False
    if candidate in (member.spec, member.name):
        return True
    path = candidate.removeprefix("ppo:")
    return member.path is not None and path.endswith(".pt") and os.path.isfile(path) \
        and os.path.samefile(path, member.path)


def default_field(candidate: Any = None) -> tuple[TeamSpec, ...]:
    """The default field now: the members of :data:`FIELD_MEMBERS` that can be played here (checked at each call)
    less the candidate itself (a spec string naming a member), each a named team."""
    return tuple(m.team() for m in FIELD_MEMBERS if m.available() is None and not _is_candidate(m, candidate))


def skipped_members(candidate: Any = None) -> list[tuple[str, str]]:
    """The members of the default field :func:`default_field` leaves out, each with why: (name, reason)."""
    out = []
    for m in FIELD_MEMBERS:
        why = "it is the candidate" if _is_candidate(m, candidate) else m.available()
        if why:
            out.append((m.name, why))
    return out


def field_teams(
    candidate: Any,
    opponents: Sequence[Any] | None = None,
    flags: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
    names: Sequence[str | None] | None = None,
    check: bool = True,
) -> tuple[TeamSpec, list[TeamSpec]]:
    """The candidate's team and the opponents' teams (``opponents=None``: :func:`default_field`).
    Raises ValueError for an empty field, opponents sharing a name, or (``check``) a spec that does
    not build, before any deal is played."""
    if opponents is None:
        opponents = default_field(candidate)
    elif isinstance(opponents, (str, TeamSpec)) or callable(opponents):
        opponents = [opponents]  # one opponent given bare
    opponents = list(opponents)
    if not opponents:
        raise ValueError("a field needs at least one opponent")
    names = list(names) if names is not None else [None] * len(opponents)
    if len(names) != len(opponents):
        raise ValueError(f"names must match the opponents one to one: {len(names)} names, {len(opponents)} opponents")
    team = parse_team(candidate, name)
    teams = [parse_team(s, n) for s, n in zip(opponents, names)]
    seen: set[str] = set()
    for t in teams:
        if t.name in seen:
            raise ValueError(f"opponent {t.name!r} is listed twice; a field's opponents need distinct names "
                             f"(give a factory a `name` attribute, or pass names=...)")
        seen.add(t.name)
    game, rules = split_game(check_flags(flags))
    spec = get_game(game)
    if spec.extra.get("match") is None or spec.load("match") is not play_match:  # a field is play_match's matches
        raise ValueError(f"a field evaluation plays duplicate matches of two teams of two (the partnership game's), "
                         f"not game={game!r} ({spec.title})")
    if check:
        for t in [team, *teams]:
            check_team(t, rules)
    return team, teams


@dataclass
class FieldResult:
    """The candidate's duplicate matches against each opponent, all on the same deals (``matches[i]``:
    candidate = team A, ``opponents[i]`` = team B)."""

    candidate: str
    opponents: list[str]
    matches: list[MatchResult]
    deals: int
    seed: int
    flags: dict[str, Any]
    confidence: float
    n_boot: int = 2000
    skipped: list[tuple[str, str]] = field(default_factory=list)  # default members not played, and why

    @property
    def field_values(self) -> np.ndarray:
        """The field's value of each deal: the members' per-deal values (candidate minus member) averaged with
        equal weight."""
        return np.mean([m.pair_values for m in self.matches], axis=0)

    @property
    def field_mean(self) -> float:
        """The field's mean: mean points per deal against the field, every member weighted alike."""
        return float(self.field_values.mean())

    @property
    def field_ci(self) -> tuple[float, float]:
        """The bootstrap interval of :attr:`field_mean` over deals (each deal's members' values resampled
        together)."""
        return bootstrap_mean_ci(self.field_values, confidence=self.confidence, n_boot=self.n_boot,
                                 seed=self.seed % 2**32)

    @property
    def means(self) -> np.ndarray:
        """Mean points per deal (candidate minus opponent), per opponent."""
        return np.array([m.mean for m in self.matches])

    @property
    def worst(self) -> int:
        """Index of the opponent the candidate does worst against (lowest mean points per deal; the
        first such opponent on a tie)."""
        return int(np.argmin(self.means))

    @property
    def worst_match(self) -> MatchResult:
        return self.matches[self.worst]

    @property
    def minimum(self) -> float:
        """The minimum over the field: the lowest mean points per deal."""
        return float(self.means[self.worst])

    @property
    def minimum_ci(self) -> tuple[float, float]:
        """The interval of the minimum: the bootstrap interval of the worst opponent's match."""
        return self.worst_match.ci

    @property
    def illegal_total(self) -> int:
        return sum(m.illegal_total for m in self.matches)

    def rows(self) -> list[dict[str, Any]]:
        """One summary per opponent: mean points per deal and interval, deal pairs won, games won."""
        return [{
            "opponent": name,
            "mean_points_per_deal": m.mean,
            "ci": list(m.ci),
            "pair_wins": dict(m.pair_wins),
            "games": dict(m.games),
            "illegal_actions": dict(m.illegal),
        } for name, m in zip(self.opponents, self.matches)]

    def to_dict(self, per_deal: bool = False, timing: bool = True) -> dict[str, Any]:
        """JSON-ready: the summary rows, the minimum, and every match in full (``per_deal``: with the
        per-deal values)."""
        w = self.worst
        return to_json_safe({
            "candidate": self.candidate,
            "opponents": self.opponents,
            "deals": self.deals,
            "seed": self.seed,
            "same_deals": True,
            "flags": dict(self.flags),
            "confidence": self.confidence,
            "minimum": {"opponent": self.opponents[w], "mean_points_per_deal": self.minimum,
                        "ci": list(self.minimum_ci), "games": dict(self.matches[w].games)},
            "field_mean": {"mean_points_per_deal": self.field_mean, "ci": list(self.field_ci),
                           "weights": "every member alike"},
            "skipped": [{"member": n, "why": why} for n, why in self.skipped],
            "field": self.rows(),
            "matches": [m.to_dict(per_deal=per_deal, timing=timing) for m in self.matches],
        })

    def summary(self) -> str:
        lo, hi = self.minimum_ci
        flo, fhi = self.field_ci
        return (f"{self.candidate} vs field ({', '.join(self.opponents)}), {self.deals} deals each: field mean "
                f"{self.field_mean:+.2f} [{flo:+.2f}, {fhi:+.2f}], minimum {self.minimum:+.2f} [{lo:+.2f}, {hi:+.2f}] "
                f"against {self.opponents[self.worst]}; illegal {self.illegal_total}")


def play_field(
    candidate: Any,
    opponents: Sequence[Any] | None = None,
    deals: int = 2000,
    seed: int = 0,
    flags: Mapping[str, Any] | None = None,
    workers: int = 1,
    progress: bool = False,
    *,
    confidence: float = 0.95,
    name: str | None = None,
    names: Sequence[str | None] | None = None,
    check: bool = True,
    **match_kwargs: Any,
) -> FieldResult:
    """Play ``candidate`` (any team spec) against each of ``opponents`` (team specs; None: the default
    field, :func:`default_field`) in duplicate matches on the same ``deals`` deals (one ``seed`` for all).

    ``name`` / ``names``: display names of the candidate / the opponents; ``check``: build every agent
    once first, so a bad spec fails before any deal is played; other keywords (``duplicate``,
    ``n_boot``, ``strict``, ``block_size``, ``common_seeds``) go to :func:`play_match` unchanged.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    team, teams = field_teams(candidate, opponents, flags, name=name, names=names, check=check)
    matches = [play_match(team, t, deals=deals, seed=seed, flags=flags, workers=workers, progress=progress,
                          confidence=confidence, check=False, **match_kwargs) for t in teams]
    first = matches[0]
    skipped = skipped_members(candidate) if opponents is None else []
    return FieldResult(team.name, [t.name for t in teams], matches, first.deals, first.seed, dict(first.flags),
                       confidence, int(match_kwargs.get("n_boot", 2000)), skipped)


# ============================================================================ the shipping rule
@dataclass
class ShipDecision:
    """What :func:`ship_rule` found: whether the candidate may replace the current agent, each member's paired
    difference (candidate minus current agent, points per deal) with its interval and whether the candidate is
    level there, the field mean's paired difference and whether the candidate is ahead, and the reasons."""

    ships: bool
    candidate: str
    current: str
    deals: int
    margin: float
    confidence: float
    members: list[dict[str, Any]]  # {"member", "mean_diff", "ci", "level"}
    field: dict[str, Any]  # {"mean_diff", "ci", "ahead"}
    reasons: list[str]

    def to_dict(self) -> dict[str, Any]:
        return to_json_safe({k: getattr(self, k) for k in self.__dataclass_fields__})

    def summary(self) -> str:
        lo, hi = self.field["ci"]
        verdict = "ships" if self.ships else "does not ship"
        return (f"{self.candidate} {verdict} in place of {self.current}: field mean {self.field['mean_diff']:+.2f} "
                f"[{lo:+.2f}, {hi:+.2f}] points a deal over it on {self.deals} deals"
                + ("" if self.ships else "; " + "; ".join(self.reasons)))


def _per_deal(result: Any, what: str) -> tuple[str, dict[str, np.ndarray], tuple | None]:
    """(name, member -> per-deal values, (deals, seed, flags) or None) of a FieldResult or of a mapping of
    per-deal values."""
    if isinstance(result, FieldResult):
        return (result.candidate, {n: np.asarray(m.pair_values, np.float64) for n, m in zip(result.opponents,
                result.matches)}, (result.deals, result.seed, dict(result.flags)))
    if isinstance(result, Mapping):
        values = {str(k): np.asarray(v, np.float64).ravel() for k, v in result.items()}
        if not values:
            raise ValueError(f"{what}: no member's values")
        return what, values, None
    raise TypeError(f"{what} must be a FieldResult or a mapping member -> per-deal values, got {type(result).__name__}")


def ship_rule(candidate: Any, current: Any, *, margin: float = 0.0, confidence: float = 0.95, n_boot: int = 2000,
              seed: int = 0) -> ShipDecision:
    """Whether ``candidate`` may replace ``current`` (the module docstring's rule): at least level against every
    member (the low end of each member's paired-difference interval at least ``-margin``) and ahead on the field's
    mean (its paired-difference interval wholly above 0).

    ``candidate`` / ``current``: each a :class:`FieldResult` (the two played against the same members on the same
    deals: same deals, seed and flags) or a mapping member name -> per-deal values (the agent's points per deal
    minus the member's, deal ``i`` the same deal in both). Intervals: percentile bootstrap over deals (``n_boot``
    resamples seeded by ``seed``). ValueError names members or deals that do not match."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < float("inf"):
        raise ValueError(f"margin must be a finite number >= 0 (points per deal), got {margin!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    cand_name, cand, cand_setup = _per_deal(candidate, "candidate")
    curr_name, curr, curr_setup = _per_deal(current, "current")
    if cand_setup and curr_setup and cand_setup != curr_setup:
        raise ValueError(f"the two fields were not played on the same deals: candidate (deals, seed, flags) "
                         f"{cand_setup}, current {curr_setup}")
    if set(cand) != set(curr):
        raise ValueError(f"the two fields have different members: only the candidate's {sorted(set(cand) - set(curr))},"
                         f" only the current agent's {sorted(set(curr) - set(cand))}")
    names = list(cand)
    sizes = {n: (cand[n].size, curr[n].size) for n in names}
    n = cand[names[0]].size
    if n == 0 or any(a != n or b != n for a, b in sizes.values()):
        raise ValueError(f"every member needs one value per deal, the same deals for both agents: sizes {sizes}")
    diffs = {m: cand[m] - curr[m] for m in names}
    members, reasons = [], []
    for m in names:
        lo, hi = bootstrap_mean_ci(diffs[m], confidence=confidence, n_boot=n_boot, seed=seed)
        level = lo >= -margin
        members.append({"member": m, "mean_diff": float(diffs[m].mean()), "ci": [lo, hi], "level": level})
        if not level:
            reasons.append(f"not level against {m}: {diffs[m].mean():+.2f} [{lo:+.2f}, {hi:+.2f}] "
                           f"(the low end must be >= {-margin:+.2f})")
    field_diff = np.mean([diffs[m] for m in names], axis=0)
    lo, hi = bootstrap_mean_ci(field_diff, confidence=confidence, n_boot=n_boot, seed=seed)
    ahead = lo > 0
    if not ahead:
        reasons.append(f"not ahead on the field's mean: {field_diff.mean():+.2f} [{lo:+.2f}, {hi:+.2f}] "
                       "(the low end must be > 0)")
    return ShipDecision(ships=not reasons, candidate=cand_name, current=curr_name, deals=n, margin=float(margin),
                        confidence=confidence, members=members,
                        field={"mean_diff": float(field_diff.mean()), "ci": [lo, hi], "ahead": ahead}, reasons=reasons)


def ship_check(candidate: Any, current: Any, opponents: Sequence[Any] | None = None, deals: int = 2000,
               seed: int = 0, *, margin: float = 0.0, confidence: float = 0.95, **kwargs: Any
               ) -> tuple[ShipDecision, FieldResult, FieldResult]:
    """Play ``candidate`` and ``current`` (team specs) against one field on the same deals and apply
    :func:`ship_rule`; returns (decision, candidate's field, current agent's field).

    ``opponents=None``: every member of the default field that can be played here, the two agents included where
    they are members (an agent's match against itself scores exactly 0, so the other's row there is the head to
    head). ``seed``: use held-out deals (a seed used neither for training nor for selection). Other keywords go to
    :func:`play_field`."""
    if opponents is None:
        opponents = default_field()
    a = play_field(candidate, opponents, deals=deals, seed=seed, confidence=confidence, **kwargs)
    b = play_field(current, opponents, deals=deals, seed=seed, confidence=confidence, **kwargs)
    decision = ship_rule(a, b, margin=margin, confidence=confidence, n_boot=int(kwargs.get("n_boot", 2000)),
                         seed=seed % 2**32)
    return decision, a, b
