"""Round robin: every pair of teams plays a duplicate match on the same deals; the deal-pair outcomes
are fitted with Bradley-Terry and reported on the Elo scale, with bootstrap intervals over deals."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from rook_env.agents.registry import TeamSpec, parse_team

from .deals import derive_seed
from rook_env.games.partnership.match import play_match
from .results import MatchResult, to_json_safe
from .stats import bradley_terry, elo_from_strengths, elo_ratings

__all__ = ["RoundRobinResult", "rating_intervals", "round_robin"]

DEFAULT_RATING_BOOT = 1000  # bootstrap resamples of the deals for the rating intervals


@dataclass
class RoundRobinResult:
    """Pairwise duplicate matches and ratings. ``wins[i][j]``: deal pairs ``i`` won against ``j``
    (ties half); ``points[i][j]``: ``i``'s mean points per deal against ``j``; ``elo``: Bradley-Terry
    fit of ``wins`` on the Elo scale (mean 1500); ``elo_ci[i]``: its percentile bootstrap interval
    (deals resampled, the same resample for every match, ratings refitted)."""

    names: list[str]
    matches: dict[tuple[int, int], MatchResult]
    wins: np.ndarray
    points: np.ndarray
    elo: np.ndarray
    prior: float
    elo_ci: np.ndarray  # shape (k, 2)
    confidence: float = 0.95
    rating_boot: int = DEFAULT_RATING_BOOT

    def ranking(self) -> list[int]:
        return sorted(range(len(self.names)), key=lambda i: -self.elo[i])

    def mean_points(self, i: int) -> float:
        """Team ``i``'s mean points per deal against the field (the mean over its opponents)."""
        others = [j for j in range(len(self.names)) if j != i]
        return float(np.mean([self.points[i, j] for j in others])) if others else math.nan

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
                "elo_ci": [float(self.elo_ci[i, 0]), float(self.elo_ci[i, 1])],
                "mean_points": self.mean_points(i),
                "deal_pair_score": won / total if total else math.nan,
                "deal_pairs": int(total),
            })
        return out

    def order_note(self) -> str | None:
        """A sentence explaining why the Elo order differs from the mean-points order, or None
        when both orders agree."""
        order = self.ranking()
        swapped = [(a, b) for x, a in enumerate(order) for b in order[x + 1:]
                   if self.mean_points(b) > self.mean_points(a)]
        if not swapped:
            return None
        a, b = (self.names[i] for i in swapped[0])
        more = f" (and {len(swapped) - 1} more pair(s))" if len(swapped) > 1 else ""
        return (f"Elo ranks {a} above {b}, mean points rank {b} above {a}{more}: Elo counts deal pairs won "
                f"(ties half) and ignores margins, mean points weigh every deal by its margin, so {a} wins more "
                f"deal pairs and {b} wins by larger margins.")

    def to_dict(self, per_deal: bool = False) -> dict[str, Any]:
        return to_json_safe({
            "names": self.names,
            "ratings": self.rows(),
            "rating_model": f"Bradley-Terry on deal-pair outcomes (ties half), prior {self.prior} virtual games "
                            f"per pair, Elo scale, mean 1500; {self.confidence:.0%} percentile bootstrap intervals "
                            f"over deals ({self.rating_boot} resamples)",
            "order_note": self.order_note(),
            "wins": self.wins,
            "points": self.points,
            "matches": [
                {"a": self.names[i], "b": self.names[j], **m.to_dict(per_deal=per_deal)}
                for (i, j), m in sorted(self.matches.items())
            ],
        })


def rating_intervals(
    matches: Mapping[tuple[int, int], MatchResult], k: int, prior: float = 1.0, confidence: float = 0.95,
    n_boot: int = DEFAULT_RATING_BOOT, seed: int = 0,
) -> np.ndarray:
    """Percentile bootstrap intervals (shape (k, 2)) of the Elo ratings: the deals, common to all
    matches, are resampled with replacement, the deal-pair wins of every match recounted on the same
    resample, and the ratings refitted. Reproducible for a seed."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    pairs = sorted(matches)
    values = [np.asarray(matches[p].pair_values, dtype=np.float64) for p in pairs]
    n = values[0].size
    if any(v.size != n for v in values):
        raise ValueError("rating intervals need every match played on the same deals")
    # per deal and match: a win for the pair's first team counts 1, a tie 1/2 (and the same for the second)
    first = np.stack([(v > 0) + 0.5 * (v == 0) for v in values], axis=1)  # (deals, matches)
    second = np.stack([(v < 0) + 0.5 * (v == 0) for v in values], axis=1)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)  # (n_boot, deals)
    won_first, won_second = counts @ first, counts @ second
    rows, cols = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    elo = np.empty((n_boot, k))
    wins = np.zeros((k, k))
    for b in range(n_boot):
        wins[rows, cols] = won_first[b]
        wins[cols, rows] = won_second[b]
        try:
            elo[b] = elo_from_strengths(bradley_terry(wins, prior=prior, tol=1e-9))
        except ValueError:  # prior 0 and a team won nothing in this resample: no finite rating, dropped
            elo[b] = np.nan
    alpha = (1.0 - confidence) / 2.0
    return np.nanquantile(elo, [alpha, 1.0 - alpha], axis=0).T


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
    confidence: float = 0.95,
    rating_boot: int = DEFAULT_RATING_BOOT,
    **match_kwargs: Any,
) -> RoundRobinResult:
    """Every pair of team specs plays a duplicate match on the same deals (same ``seed``); the
    deal-pair outcomes are fitted with Bradley-Terry and reported on the Elo scale, with
    ``confidence`` intervals from ``rating_boot`` bootstrap resamples of the deals."""
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
                           workers=workers, progress=progress, confidence=confidence, **match_kwargs)
            matches[(i, j)] = m
            wins[i, j] = m.pair_wins["A"] + m.pair_wins["tied"] / 2
            wins[j, i] = m.pair_wins["B"] + m.pair_wins["tied"] / 2
            points[i, j] = m.mean
            points[j, i] = -m.mean
    elo = elo_ratings(wins, prior=prior)
    ci = rating_intervals(matches, k, prior=prior, confidence=confidence, n_boot=rating_boot,
                          seed=derive_seed("rating-bootstrap", seed) % 2**32)
    return RoundRobinResult([t.name for t in teams], matches, wins, points, elo, prior, ci, confidence, rating_boot)
