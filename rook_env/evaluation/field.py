"""Field evaluation: one agent against a list of opponents, each a duplicate match on the same deals.

A policy that beats the one bot it was trained against may still lose to others; the field measures
general strength. :func:`play_field` plays the candidate against every opponent with
:func:`~rook_env.games.partnership.match.play_match` (one engine for every match) and reports, per opponent,
the mean points per deal with its bootstrap interval and the games-to-``target_score`` win rate with
its Wilson interval, and the **minimum over the field**: the opponent the candidate does worst against
(lowest mean points per deal), with that match's interval.

Every opponent plays the **same deals** (one ``seed`` for all matches; the agents at each seat are
seeded alike too), so the per-opponent numbers are comparable: a difference between two rows comes from
the opponents, not from the cards dealt.

The default field (:func:`default_field`, resolved at call time) is ``random``, ``heuristic``,
``search`` and ``ppo`` (the shipped checkpoint), with ``search`` only when the agent registry offers it
(it is listed in ``GAME_SPECS["partnership"]``), and without the candidate itself (a spec string equal
to the candidate's: a match against itself scores exactly 0 and says nothing). An explicit list of
opponents is played as given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from rook_env.agents import registry
from rook_env.agents.registry import TeamSpec, check_team, parse_team, split_game
from rook_env.games import get_game
from rook_env.games.partnership.match import play_match

from .deals import check_flags
from .results import MatchResult, to_json_safe

__all__ = ["DEFAULT_FIELD", "FieldResult", "default_field", "field_teams", "play_field"]

# The default opponents, strongest last; "search" is dropped when the registry does not offer it.
DEFAULT_FIELD = ("random", "heuristic", "search", "ppo")
OPTIONAL_FIELD = ("search",)  # members of DEFAULT_FIELD played only when the registry knows them


def default_field(candidate: Any = None) -> tuple[str, ...]:
    """The default opponents now: :data:`DEFAULT_FIELD` less the optional members the registry does
    not offer (checked at each call, so a newly registered agent joins) and less ``candidate`` when it
    is one of them (a spec string)."""
    known = set(registry.GAME_SPECS["partnership"])
    return tuple(s for s in DEFAULT_FIELD
                 if (s not in OPTIONAL_FIELD or s in known) and not (isinstance(candidate, str) and s == candidate))


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
            "field": self.rows(),
            "matches": [m.to_dict(per_deal=per_deal, timing=timing) for m in self.matches],
        })

    def summary(self) -> str:
        lo, hi = self.minimum_ci
        return (f"{self.candidate} vs field ({', '.join(self.opponents)}), {self.deals} deals each: minimum "
                f"{self.minimum:+.2f} [{lo:+.2f}, {hi:+.2f}] against {self.opponents[self.worst]}; "
                f"illegal {self.illegal_total}")


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
    return FieldResult(team.name, [t.name for t in teams], matches, first.deals, first.seed, dict(first.flags),
                       confidence)
