"""Statistics of evaluation: bootstrap and Wilson intervals, Bradley-Terry / Elo ratings, games from a
stream of hand scores (pure functions of their inputs; no Rook rules besides the game-end rule)."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Iterable, Sequence

import numpy as np

__all__ = [
    "bootstrap_mean_ci", "bradley_terry", "elo_from_strengths", "elo_ratings", "game_winner", "games_from_stream",
    "normal_quantile",
    "wilson_interval",
]


def normal_quantile(confidence: float) -> float:
    """The two-sided standard normal quantile of a confidence level (1.96 for 0.95)."""
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
    z = normal_quantile(confidence)
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
        w = game_winner(a, b, target)
        if w >= 0:
            winners.append(w)
            a, b = start
            pending = 0
    return winners, pending


def game_winner(a: int, b: int, target: int = 300) -> int:
    """RULES.md "Game end" after a hand with totals ``a`` (team A) and ``b``: 0 (A won), 1 (B won), -1 (play on)."""
    if max(a, b) >= target and a != b:
        return 0 if a > b else 1
    return -1

