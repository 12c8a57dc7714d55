"""Learned inference of the hidden cards: where each unseen card lies, from the seat's own information.

A :class:`HolderModel` maps what one seat knows at a card-play decision to, for every card, a
distribution over its four possible holders (relative seats 1, 2, 3 and the nest, i.e. the bidder's
discards). Its input (:func:`features`) is the seat's observation vector (hand, auction, contract,
trump, nest and discards where the seat saw them, the cards played by each seat, the current
trick, counters and tricks won) and the voids that seat remembers from failures to follow suit
(:func:`rook_env.agents.heuristic.play.known_voids`); nothing else, so no hidden card can leak in.
It is a small multilayer perceptron trained on logged self-play with the true deal as its label
(``tools/fit_inference.py``, which needs torch); the shipped weights are a NumPy ``.npz`` and the
forward pass is NumPy, so search with learned worlds needs no torch.

:class:`WeightedWorldSampler` draws deals of the unseen cards with probability proportional to
``prod_c w[c, holder(c)]`` *among the deals that keep every hard constraint* of
:class:`~rook_env.agents.search.worlds.WorldSampler` (hand sizes, voids, the nest's counter rule):
an exact backward dynamic programme over the cards, on the remaining capacity of every holder (and
whether the nest's counter need is met), gives the weight of every completion; a world then deals
the cards one at a time, each to a holder with probability proportional to its weight times the
completions left. With all weights equal it is the uniform sampler (same distribution, same count).
:meth:`WeightedWorldSampler.log_prob` is the exact log-probability of a deal, used to compare the
model with uniform sampling on the true deals of held-out games.
"""

from __future__ import annotations

import json
import math
import random
import types
from pathlib import Path
from typing import Sequence

import numpy as np

from rook_env.core.kernels import jit
from rook_env.games.partnership import kernels
from rook_env.games.partnership.cards import bits

from ..checkpoints import HAND_MODEL
from .worlds import NEST, Holder

_compiled = None  # weighted_layers and draw_weighted compiled (numba), made on first use


def _jit():
    global _compiled
    if _compiled is None:
        _compiled = types.SimpleNamespace(weighted_layers=jit(weighted_layers), draw_weighted=jit(draw_weighted))
    return _compiled

__all__ = ["DEFAULT_MODEL", "HolderModel", "WeightedWorldSampler", "features", "holder_column", "learned_sampler",
           "load_model"]

DEFAULT_MODEL = Path(HAND_MODEL)  # the shipped model (rook_env.agents.checkpoints)
N_COLS = 4  # holder columns: relative seats 1, 2, 3, then the nest (the bidder's discards)
N_VOID_FEATURES = 12  # voids of relative seats 1..3 by effective suit (4)


def holder_column(who: int) -> int:
    """The model's output column of a :class:`Holder` (``who`` 1..3 or :data:`NEST`)."""
    return N_COLS - 1 if who == NEST else who - 1


def features(vec: np.ndarray, voids: Sequence[int]) -> np.ndarray:
    """The model input of one decision: the seat's observation vector and its remembered voids
    (``voids``: effective-suit bits by relative seat, as :func:`known_voids` gives them)."""
    v = np.zeros(N_VOID_FEATURES, dtype=np.float32)
    for r in (1, 2, 3):
        for s in range(4):
            if voids[r] >> s & 1:
                v[(r - 1) * 4 + s] = 1.0
    return np.concatenate([np.asarray(vec, dtype=np.float32), v])


class HolderModel:
    """A NumPy multilayer perceptron (ReLU hidden layers) from :func:`features` to holder logits
    ``[n_cards, 4]``. ``weights``/``biases``: one array per layer; ``mix``: the share of a uniform
    distribution mixed into each card's holder probabilities (guards against overconfidence)."""

    def __init__(self, weights: Sequence[np.ndarray], biases: Sequence[np.ndarray], n_cards: int, obs_size: int,
                 mix: float = 0.0, meta: dict | None = None) -> None:
        if len(weights) != len(biases) or not weights:
            raise ValueError("a holder model needs as many bias vectors as weight matrices (at least one)")
        if weights[0].shape[0] != obs_size + N_VOID_FEATURES or weights[-1].shape[1] != n_cards * N_COLS:
            raise ValueError(f"holder model shapes {[w.shape for w in weights]} do not fit observations of size "
                             f"{obs_size} and {n_cards} cards")
        if not 0.0 <= mix <= 1.0:
            raise ValueError(f"mix must be in [0, 1], got {mix!r}")
        self.weights = [np.asarray(w, dtype=np.float32) for w in weights]
        self.biases = [np.asarray(b, dtype=np.float32) for b in biases]
        self.n_cards = n_cards
        self.obs_size = obs_size
        self.mix = float(mix)
        self.meta = dict(meta or {})

    def probs(self, x: np.ndarray) -> np.ndarray:
        """Holder probabilities ``[n_cards, 4]`` (rows sum to 1) of one input, or ``[B, n_cards, 4]``."""
        h = np.asarray(x, dtype=np.float32)
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ w + b
            if i < len(self.weights) - 1:
                np.maximum(h, 0.0, out=h)
        logits = h.reshape(h.shape[:-1] + (self.n_cards, N_COLS))
        logits = logits - logits.max(axis=-1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=-1, keepdims=True)
        if self.mix:
            p = (1.0 - self.mix) * p + self.mix / N_COLS
        return p

    def save(self, path: str | Path, meta: dict | None = None) -> None:
        """Write ``path`` (``.npz``, the arrays) and ``path`` with ``.json`` (sizes, mix, how it was made)."""
        path = Path(path)
        arrays = {f"w{i}": w for i, w in enumerate(self.weights)} | {f"b{i}": b for i, b in enumerate(self.biases)}
        np.savez_compressed(path, **arrays)
        info = {"n_cards": self.n_cards, "obs_size": self.obs_size, "mix": self.mix, "layers": len(self.weights)}
        info |= self.meta | dict(meta or {})
        path.with_suffix(".json").write_text(json.dumps(info, indent=2) + "\n")


def load_model(path: str | Path | None = None) -> HolderModel:
    """Load a holder model written by :meth:`HolderModel.save` (default: the shipped one). Raises
    ``FileNotFoundError`` / ``ValueError`` naming the file when it is missing or corrupt."""
    path = Path(path) if path is not None else DEFAULT_MODEL
    meta_path = path.with_suffix(".json")
    if not path.is_file():
        raise FileNotFoundError(f"no holder model at {path}")
    if not meta_path.is_file():
        raise FileNotFoundError(f"holder model {path} has no {meta_path.name} beside it (sizes and mix)")
    try:
        meta = json.loads(meta_path.read_text())
        with np.load(path, allow_pickle=False) as z:
            n = int(meta["layers"])
            weights = [z[f"w{i}"] for i in range(n)]
            biases = [z[f"b{i}"] for i in range(n)]
        return HolderModel(weights, biases, int(meta["n_cards"]), int(meta["obs_size"]), float(meta.get("mix", 0.0)),
                           meta)
    except (KeyError, ValueError, OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"holder model {path} is corrupt or incomplete: {exc}") from exc


class WeightedWorldSampler:
    """Exact sampler of the deals of ``unseen`` among ``holders`` with probability proportional to
    ``prod_c weights[c, holder_column(holder)]`` within the hard constraints (see the module docstring).

    ``weights``: ``[n_cards, 4]`` non-negative (None: all 1, i.e. uniform); a weight below ``floor``
    is raised to it, so a card the model thinks impossible stays possible where the constraints allow
    it. Raises ``ValueError`` when the sizes do not add up or no deal satisfies the constraints.
    """

    def __init__(self, unseen: int, holders: Sequence[Holder], counter_mask: int = 0,
                 weights: np.ndarray | None = None, floor: float = 1e-4) -> None:
        self.holders = list(holders)
        sizes = tuple(h.size for h in self.holders)
        self.cards = bits(unseen)
        if any(s < 0 for s in sizes) or sum(sizes) != len(self.cards):
            raise ValueError(f"holder sizes {sizes} do not add up to the {len(self.cards)} unseen cards")
        n_h = len(self.holders)
        need = -1
        for i, h in enumerate(self.holders):
            if h.needs_counter:
                need = i
        cols = [holder_column(h.who) for h in self.holders]
        m = len(self.cards)
        w = np.ones((m, n_h))
        if weights is not None:
            w = np.maximum(np.asarray(weights, dtype=np.float64)[self.cards][:, cols], floor)
        for i, h in enumerate(self.holders):
            for k, c in enumerate(self.cards):
                if h.forbidden >> c & 1:
                    w[k, i] = 0.0
        self.w = w
        self.is_counter = [need >= 0 and bool(counter_mask >> c & 1) for c in self.cards]
        self.need = need
        self.sizes = sizes
        # z[k][caps..., got]: weight of the completions of cards k.. with remaining capacities caps;
        # got = 1 when the nest's counter need is met (or there is none). Each layer is scaled to
        # max 1 (log_scale[k] keeps the scale) so that products of small weights never underflow.
        shape = tuple(s + 1 for s in sizes) + (2,)
        self.strides = np.array([math.prod(shape[i + 1:]) for i in range(len(shape))], np.int64)
        if kernels.AVAILABLE:  # compiled: the same sums in the same order as the numpy below
            flat, tops = _jit().weighted_layers(np.ascontiguousarray(w), self.strides, np.array(sizes, np.int64),
                                                need, np.array(self.is_counter, np.bool_))
            log_scale = [0.0] * (m + 1)
            for k in range(m - 1, -1, -1):
                top = float(tops[k])
                log_scale[k] = log_scale[k + 1] + (math.log(top) if top > 0 else 0.0)
            layers = [flat[k].reshape(shape) for k in range(m + 1)]
        else:
            z = np.zeros(shape)
            z[(0,) * n_h + (1,)] = 1.0
            layers = [z]
            log_scale = [0.0]
            for k in range(m - 1, -1, -1):
                nxt = layers[-1]
                cur = np.zeros(shape)
                for i in range(n_h):
                    if w[k, i] == 0.0 or sizes[i] == 0:
                        continue
                    dst = [slice(None)] * (n_h + 1)
                    src = [slice(None)] * (n_h + 1)
                    dst[i], src[i] = slice(1, None), slice(0, -1)
                    if i == need and self.is_counter[k]:
                        # this card meets the need: both "got" states continue as "got"
                        d0, d1 = tuple(dst[:-1]) + (0,), tuple(dst[:-1]) + (1,)
                        s1 = tuple(src[:-1]) + (1,)
                        cur[d0] += w[k, i] * nxt[s1]
                        cur[d1] += w[k, i] * nxt[s1]
                    else:
                        cur[tuple(dst)] += w[k, i] * nxt[tuple(src)]
                top = cur.max()
                if top > 0:
                    cur /= top
                layers.append(cur)
                log_scale.append(log_scale[-1] + (math.log(top) if top > 0 else 0.0))
            layers.reverse()
            log_scale.reverse()
            flat = np.stack(layers).reshape(m + 1, -1)
        self.layers = layers  # layers[k]: completions of cards k..m-1
        self._flat = flat  # the same, [m + 1, cells] (the compiled draws read it)
        self.log_scale = log_scale
        root = layers[0][sizes + (0 if need >= 0 else 1,)]
        if root <= 0.0:
            raise ValueError("no deal of the unseen cards satisfies the constraints (sizes, voids, nest)")
        self.log_z = math.log(root) + log_scale[0]  # log of the total weight of the consistent deals

    def sample(self, rng: random.Random) -> list[int]:
        """One deal: the card mask of each holder, in ``holders`` order."""
        caps = list(self.sizes)
        got = 0 if self.need >= 0 else 1
        out = [0] * len(self.holders)
        w, layers = self.w, self.layers
        for k, c in enumerate(self.cards):
            nxt = layers[k + 1]
            probs = []
            total = 0.0
            for i in range(len(caps)):
                p = 0.0
                if caps[i] and w[k, i] > 0.0:
                    g = 1 if got or (i == self.need and self.is_counter[k]) else 0
                    caps[i] -= 1
                    p = w[k, i] * nxt[tuple(caps) + (g,)]
                    caps[i] += 1
                probs.append(p)
                total += p
            x = rng.random() * total
            i = 0
            while i < len(probs) - 1 and (x >= probs[i] or probs[i] == 0.0):
                x -= probs[i]
                i += 1
            while probs[i] == 0.0:  # rounding at the top end: the last holder with weight
                i -= 1
            out[i] |= 1 << c
            caps[i] -= 1
            if i == self.need and self.is_counter[k]:
                got = 1
        return out

    def sample_many(self, rng: random.Random, n: int) -> np.ndarray:
        """``n`` deals, ``[n, len(holders)]`` card masks (uint64): exactly ``[self.sample(rng) for _ in
        range(n)]`` (the same draws of ``rng``, the same arithmetic in the same order), in compiled code where
        numba is installed (a 96-world decision: some 60x faster than the Python loop)."""
        if not kernels.AVAILABLE:
            return np.array([self.sample(rng) for _ in range(n)], np.uint64).reshape(n, len(self.holders))
        m = len(self.cards)
        # sample()'s n * m draws of rng.random(), in order, at once: CPython's random() is two 32-bit words of the
        # Mersenne Twister, (a >> 5) * 2**26 + (b >> 6) over 2**53, and getrandbits(64 j) the next 2 j words, least
        # significant first (tests check the deals and the stream's state against the loop)
        words = np.frombuffer(rng.getrandbits(64 * n * m).to_bytes(8 * n * m, "little"), np.uint32).astype(np.float64)
        u = ((words[0::2] // 32) * 67108864.0 + words[1::2] // 64) * (1.0 / 9007199254740992.0)
        u = u.reshape(n, m)
        out = np.zeros((n, len(self.holders)), np.uint64)
        _jit().draw_weighted(np.array(self.cards, np.int64), np.ascontiguousarray(self.w), self._flat, self.strides,
                             np.array(self.sizes, np.int64), self.need, np.array(self.is_counter, np.bool_), u, out)
        return out

    def log_prob(self, deal: Sequence[int]) -> float:
        """Exact log-probability of ``deal`` (one mask per holder); ``-inf`` if it breaks a constraint."""
        total = 0.0
        for k, c in enumerate(self.cards):
            i = next((j for j, m in enumerate(deal) if m >> c & 1), -1)
            if i < 0 or self.w[k, i] == 0.0:
                return -math.inf
            total += math.log(self.w[k, i])
        for i, h in enumerate(self.holders):
            if deal[i].bit_count() != h.size:
                return -math.inf
        if self.need >= 0 and not any(self.is_counter[k] and deal[self.need] >> c & 1 for k, c in enumerate(self.cards)):
            return -math.inf
        return total - self.log_z


def weighted_layers(w, strides, sizes, need, is_counter):  # pragma: no cover (compiled)
    """:class:`WeightedWorldSampler`'s backward dynamic programme as plain loops for numba, every cell's sum taken
    over the holders in the order the numpy version adds them: ``[m + 1, cells]`` layers (C order of ``(caps...,
    got)``), each scaled to max 1, and each layer's scale ``tops[k]`` (0: an empty layer, left unscaled). Layer
    ``k`` deals the last ``m - k`` cards, so only the capacities summing to ``m - k`` can be nonzero (the numpy
    version's other cells are sums of zeros): only those are computed."""
    m, nh = w.shape
    cells = strides[0] * (sizes[0] + 1)
    layers = np.zeros((m + 1, cells))
    tops = np.zeros(m)
    caps = np.zeros(nh, np.int64)
    layers[m, 1] = 1.0  # no card left, every capacity 0, the need met
    for k in range(m - 1, -1, -1):
        top = 0.0
        caps[:] = 0
        left = 0  # sum of caps
        for base in range(0, cells, 2):  # cell base + g, g the "need met" flag
            if left == m - k:
                for g in range(2):
                    acc = 0.0
                    for i in range(nh):
                        if w[k, i] == 0.0 or sizes[i] == 0 or caps[i] == 0:
                            continue
                        if i == need and is_counter[k]:  # this card meets the need: both states continue as "got"
                            acc += w[k, i] * layers[k + 1, base - strides[i] + 1]
                        else:
                            acc += w[k, i] * layers[k + 1, base - strides[i] + g]
                    layers[k, base + g] = acc
                    if acc > top:
                        top = acc
            j = nh - 1  # the next capacities, last holder fastest (C order)
            while j >= 0:
                caps[j] += 1
                left += 1
                if caps[j] <= sizes[j]:
                    break
                left -= caps[j]
                caps[j] = 0
                j -= 1
        tops[k] = top
        if top > 0:
            for cell in range(cells):
                layers[k, cell] /= top
    return layers, tops


def draw_weighted(cards, w, layers, strides, sizes, need, is_counter, u, out):  # pragma: no cover (compiled)
    """:meth:`WeightedWorldSampler.sample` for each row of ``u`` (its ``rng.random()`` draws, one per card), as
    plain loops for numba: ``layers`` flattened to ``[m + 1, cells]`` (C order, ``strides`` per dimension, the
    last the "need met" flag); ``out[s, i]`` gets holder ``i``'s cards of deal ``s``."""
    n, m = u.shape
    nh = sizes.shape[0]
    caps = np.empty(nh, np.int64)
    probs = np.empty(nh, np.float64)
    for s in range(n):
        for i in range(nh):
            caps[i] = sizes[i]
        got = 0 if need >= 0 else 1
        for k in range(m):
            cell = 0
            for i in range(nh):
                cell += caps[i] * strides[i]
            total = 0.0
            for i in range(nh):
                p = 0.0
                if caps[i] > 0 and w[k, i] > 0.0:
                    g = 1 if got == 1 or (i == need and is_counter[k]) else 0
                    p = w[k, i] * layers[k + 1, cell - strides[i] + g * strides[nh]]
                probs[i] = p
                total += p
            x = u[s, k] * total
            i = 0
            while i < nh - 1 and (x >= probs[i] or probs[i] == 0.0):
                x -= probs[i]
                i += 1
            while probs[i] == 0.0:  # rounding at the top end: the last holder with weight
                i -= 1
            out[s, i] |= np.uint64(1) << np.uint64(cards[k])
            caps[i] -= 1
            if i == need and is_counter[k]:
                got = 1


def learned_sampler(model: HolderModel, vec: np.ndarray, voids: Sequence[int], unseen: int,
                    holders: Sequence[Holder], counter_mask: int) -> WeightedWorldSampler:
    """The sampler of one decision's worlds drawn from ``model`` (inputs: the seat's observation and voids)."""
    if vec.shape[-1] != model.obs_size:
        raise ValueError(f"holder model expects observations of size {model.obs_size}, got {vec.shape[-1]} "
                         "(it was trained under other rule flags)")
    return WeightedWorldSampler(unseen, holders, counter_mask, model.probs(features(vec, voids)))
