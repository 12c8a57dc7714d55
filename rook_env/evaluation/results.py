"""Results of evaluation matches: the per-hand record layout, per-team statistics, :class:`MatchResult`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .replay import json_ready as to_json_safe  # one JSON-ready conversion for results and replays

__all__ = ["DEFAULT_BLOCK_SIZE", "FIELD", "REC_FIELDS", "MatchResult", "Speed", "TeamStats", "mean_or_nan", "team_stats",
           "to_json_safe"]

DEFAULT_BLOCK_SIZE = 50  # deals per block: agents are rebuilt, freshly seeded, at each block

# One hand's record, from team A's point of view (plain ints: cheap to pickle between processes).
REC_FIELDS = (
    "deal", "seating", "a_bid", "bid", "made", "score_a", "score_b", "counters_a", "counters_b",
    "illegal_a", "illegal_b", "fallbacks_a", "fallbacks_b", "redeals", "steps",
)
FIELD = {name: i for i, name in enumerate(REC_FIELDS)}


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


def mean_or_nan(x: np.ndarray) -> float:
    """The mean of ``x``; NaN when it is empty (a statistic with no hand to count)."""
    return float(x.mean()) if x.size else math.nan


class Speed:
    """How fast a match ran, for the results of every match scheme (``deals``, ``hands``,
    ``elapsed_s`` and ``workers`` are the result's fields)."""

    deals: int
    hands: int
    elapsed_s: float
    workers: int

    @property
    def deals_per_s(self) -> float:
        return self.deals / self.elapsed_s if self.elapsed_s > 0 else math.inf

    @property
    def hands_per_s(self) -> float:
        return self.hands / self.elapsed_s if self.elapsed_s > 0 else math.inf

    def timing(self) -> dict[str, Any]:
        """The timing entries of ``to_dict``."""
        return {"elapsed_s": self.elapsed_s, "deals_per_s": self.deals_per_s, "hands_per_s": self.hands_per_s,
                "workers": self.workers}


def team_stats(rec: np.ndarray, team: int) -> TeamStats:
    own_bid = rec[:, FIELD["a_bid"]] == (1 if team == 0 else 0)
    score = rec[:, FIELD["score_a" if team == 0 else "score_b"]]
    counters = rec[:, FIELD["counters_a" if team == 0 else "counters_b"]]
    made = rec[:, FIELD["made"]] == 1
    return TeamStats(
        hands=int(rec.shape[0]),
        contracts=int(own_bid.sum()),
        made=int((own_bid & made).sum()),
        sets=int((own_bid & ~made).sum()),
        mean_bid=mean_or_nan(rec[own_bid, FIELD["bid"]]),
        points_as_bidder=mean_or_nan(score[own_bid]),
        points_as_defender=mean_or_nan(score[~own_bid]),
        mean_points=mean_or_nan(score),
        mean_counters=mean_or_nan(counters),
    )



@dataclass
class MatchResult(Speed):
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
    illegal: dict[str, int]  # illegal actions per team (counted, replaced by the lowest legal action)
    fallbacks: dict[str, int]  # per team: decisions where an agent's own rules found no move (agents that count them)
    hands: int
    redeals: int
    steps: int
    elapsed_s: float
    workers: int
    records: np.ndarray = field(repr=False)  # one row per hand, columns REC_FIELDS
    common_seeds: bool = True
    block_size: int = DEFAULT_BLOCK_SIZE
    game_scores: bool = False  # hands dealt with their game's running score (play_match(game_scores=True))

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
            "game_scores": self.game_scores,
            "flags": dict(self.flags),
            "confidence": self.confidence,
            "mean_points_per_deal": self.mean,
            "ci": list(self.ci),
            "pair_wins": dict(self.pair_wins),
            "games": dict(self.games),
            "teams": {k: v.to_dict() for k, v in self.teams.items()},
            "illegal_actions": dict(self.illegal),
            "fallbacks": dict(self.fallbacks),
            "redeals": self.redeals,
            "steps": self.steps,
        }
        if timing:
            d.update(self.timing())
        if per_deal:
            d["per_deal"] = [float(v) for v in self.pair_values]
        return to_json_safe(d)

    def summary(self) -> str:
        lo, hi = self.ci
        g = self.games
        return (
            f"{self.team_a} vs {self.team_b}: {self.mean:+.2f} points/deal "
            f"[{lo:+.2f}, {hi:+.2f}] over {self.deals} deals; games won by A {g['won_a']}/{g['played']}"
            f"; illegal {self.illegal_total}; fallbacks {self.fallbacks['A']}/{self.fallbacks['B']}"
        )
