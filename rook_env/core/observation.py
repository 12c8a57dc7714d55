"""Observation pieces every game shares: the action mask as a vector, seat-relative positions."""

from __future__ import annotations

import numpy as np

__all__ = ["relative_seats", "unpack_mask"]


def unpack_mask(mask: int, n: int) -> np.ndarray:
    """Bitmask -> fresh int8 0/1 array of length ``n`` (bit i -> element i)."""
    raw = np.frombuffer(mask.to_bytes((n + 7) // 8, "little"), np.uint8)
    return np.unpackbits(raw, count=n, bitorder="little").view(np.int8)


def relative_seats(n: int) -> tuple[tuple[int, ...], ...]:
    """``REL[me][seat]``: where ``seat`` sits as seen from ``me`` (0 = me, 1 = my left, ...)."""
    return tuple(tuple((s - me) % n for s in range(n)) for me in range(n))
