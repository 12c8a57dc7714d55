"""Compiled kernels every batched engine may use, and the one place that imports numba (optional).

numba is imported (about 0.3 s) and a kernel compiled only when first asked for (:func:`jit`); compiled
code is cached on disk (numba's ``cache=True``), so later processes start at once. Without numba
(``AVAILABLE`` False) the engines run their numpy reference code; ``pip install "rook_env[fast]"`` adds it.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .optional import available, install_hint, require

__all__ = ["AVAILABLE", "INSTALL_HINT", "compiled_pick_legal", "jit", "pick_legal"]

AVAILABLE = available("numba")
INSTALL_HINT = install_hint("fast")
_pick_legal: Callable | None = None


def jit(fn: Callable, **options: Any) -> Any:
    """``fn`` compiled by numba (no Python objects, the GIL released, cached on disk; ``options``: ``numba.njit``'s
    keywords over those, e.g. ``inline="always", cache=False``); needs numba."""
    return require("numba").njit(**{"cache": True, "nogil": True, **options})(fn)


def compiled_pick_legal() -> Callable:
    """:func:`pick_legal` compiled (once per process)."""
    global _pick_legal
    if _pick_legal is None:
        _pick_legal = jit(pick_legal)
    return _pick_legal


def pick_legal(mask, u, out):
    """For each row the k-th legal action, k = floor(u * number of legal actions)
    (:func:`rook_env.vector.sample_legal`'s choice)."""
    A = mask.shape[1]
    for i in range(mask.shape[0]):
        count = 0
        for a in range(A):
            if mask[i, a] != 0:
                count += 1
        k = np.int64(u[i] * count)
        for a in range(A):
            if mask[i, a] != 0:
                if k == 0:
                    out[i] = a
                    break
                k -= 1
    return out
