"""The auction searched over a network's values: bids, the nest discard and trump, each candidate played out by the
network on deals of the cards the seat cannot see.

:class:`NetworkValues` is what ``SearchAgent(auction="values")`` (spec ``"search-values[...]:<network>"``) asks at
every decision before card play. One step of policy improvement over the network, at play time:

1. the candidates are the ``top`` legal actions the network finds likeliest (its own choice first);
2. ``samples`` *worlds* are drawn uniformly among the deals consistent with what the seat knows (its hand; the
   nest, its discards and the trump once it is the bidder), :class:`.worlds.WorldSampler`;
3. each world is the whole table at this decision: the hand dealt anew with the world's hidden cards and the
   auction replayed from what the observation records (every seat's bids and the level each one passed at fix the
   order of the auction; the bidder's discards and trump), checked against the seat's own hand and legal actions;
4. in every world every candidate is played, then the network plays on at all four seats to the end of the hand
   (:func:`rook_env.agents.learned.playout.branch_values`, on the batched engine); a candidate's value is its mean
   hand score difference (the seat's team minus the other), every candidate on the same worlds;
5. the candidate of best mean is chosen (ties: the network's order).

So each bid level, discard and contract is valued by what the network would make of it on the deals the seat may
be facing, not by the network's prior alone. Card play is search's (:mod:`.agent`). The worlds do not read the
other seats' bids as signals (uniform, as :mod:`.auction`'s).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from rook_env.games.partnership.cards import N_SEATS, bits
from rook_env.games.partnership.config import RookConfig
from rook_env.games.partnership.observation import obs_layout
from rook_env.games.partnership.rules import BID, DISCARD, TRUMP, RookState

from ..learned.playout import branch_values
from .worlds import NEST, Holder, WorldSampler, world_config

__all__ = ["VALUES_SAMPLES", "VALUES_TOP", "NetworkValues"]

VALUES_SAMPLES = 32  # worlds per decision (SearchAgent(auction_samples=...) sets it)
VALUES_TOP = 4  # candidates per decision: the network's likeliest legal actions (SearchAgent's values_top default)
PHASES = (BID, DISCARD, TRUMP)


class NetworkValues:
    """Bids, discards and trump valued by ``network`` playing out on sampled worlds (module docstring).

    ``network``: a :class:`~rook_env.agents.learned.agent.PPOAgent` without a heuristic prior (its ``model``
    plays the branches greedily, its ``action_probs`` orders the candidates); ``top``: candidates per decision
    (None: :data:`VALUES_TOP`); ``seed``: with the observation, the seed of a decision's worlds."""

    def __init__(self, config: RookConfig, network: Any, samples: int = VALUES_SAMPLES, top: int | None = None,
                 seed: int = 0) -> None:
        if getattr(network, "model", None) is None or not callable(getattr(network, "action_probs", None)):
            raise ValueError("auction='values' needs a network as its base (e.g. 'search-values:ppo'), "
                             f"got {type(network).__name__}")
        if getattr(network, "prior", None) is not None:
            raise ValueError("auction='values' plays the network out greedily on its own: a residual network over "
                             "the heuristic (heuristic_prior > 0) is not supported")
        top = VALUES_TOP if top is None else top
        if isinstance(top, bool) or not isinstance(top, int) or top < 1:
            raise ValueError(f"top must be a whole number >= 1, got {top!r}")
        self.config = world_config(config)  # the worlds end with the hand
        self.flags = self.config.to_dict()  # the engine of the play-outs
        self.network, self.model = network, network.model
        self.samples, self.top, self.seed = int(samples), top, int(seed)
        self.ol = obs_layout(config)
        self.L = self.ol.L
        self.last_values: dict[int, float] | None = None

    # ------------------------------------------------------------------ entry
    def decide(self, view: Any, vec: np.ndarray, packed: int, legal: int) -> int:
        """The chosen bid, discard or trump (-1: nothing to search: one legal action, or card play); sets
        ``last_values``. ``view``: the seat's reading of ``vec`` (its phase); ``packed``: the observation's 0/1
        entries as an int (the decision's seed); ``legal``: the legal actions as a bit set."""
        self.last_values = None
        phase = view.phase
        if not legal & (legal - 1) or phase not in PHASES:
            return -1
        legal_ids = bits(legal)
        mask = np.zeros(self.L.n_actions, np.int8)
        mask[legal_ids] = 1
        probs = np.asarray(self.network.action_probs({"observation": vec, "action_mask": mask}), np.float64)
        cands = sorted(legal_ids, key=lambda a: -probs[a])[: self.top]
        rng = random.Random((packed << 64) | self.seed)  # a function of the seed and of the observation only
        worlds = self.worlds(vec, phase, legal, rng)
        n, w = len(cands) * len(worlds), len(worlds)
        values = branch_values(self.model, self.flags, [s for _ in cands for s in worlds],
                               np.zeros((n, 1), np.int64), np.zeros(n, np.int64), np.repeat(cands, w),
                               np.zeros(n, np.int64), tables=n, seed=rng.getrandbits(63))
        means = values.reshape(len(cands), w).mean(1)
        self.last_values = {a: float(m) for a, m in zip(cands, means.tolist())}
        return cands[int(np.argmax(means))]  # ties: the first, the network's likelier action

    # ------------------------------------------------------------------ worlds
    def worlds(self, vec: np.ndarray, phase: int, legal: int, rng: random.Random) -> list[RookState]:
        """``samples`` tables at this decision (seats relative to this one, which is 0), the hidden cards dealt
        uniformly among those consistent with what the seat knows."""
        ol, L = self.ol, self.L
        n = L.n_cards
        hand = _mask(vec[ol.HAND:ol.HAND + n])
        nest = _mask(vec[ol.NEST:ol.NEST + n])  # the nest as picked up: the bidder's only
        discards = _mask(vec[ol.DISCARDS:ol.DISCARDS + n])
        known = hand | nest | discards
        holders = [Holder(r, L.hand_size) for r in (1, 2, 3)]
        if phase == BID:
            holders.append(Holder(NEST, L.nest_size))
        unseen = ((1 << n) - 1) & ~known
        sampler = WorldSampler(unseen, holders, 0)
        deals = [sampler.sample(rng) for _ in range(self.samples)]
        dealt = (hand | discards) & ~nest  # the seat's hand as dealt
        first = self._replay(vec, phase, dealt, deals[0], nest)
        if first.hands[0] != hand or first.legal_mask() != legal:
            raise ValueError("the replayed auction does not reach this decision (the observation's hand or legal "
                             "actions differ)")
        out = [first]
        for deal in deals[1:]:
            st = first.clone()
            for h, cards in zip(holders, deal):
                if h.who == NEST:
                    st.nest = cards
                else:
                    st.hands[h.who] = cards
            out.append(st)
        return out

    def _replay(self, vec: np.ndarray, phase: int, dealt: int, deal: list[int], nest: int) -> RookState:
        """The hand dealt (this seat's cards as dealt, the world's others) and replayed to this decision."""
        ol, L = self.ol, self.L
        b = L.n_bids
        bids = vec[ol.BIDS:ol.BIDS + N_SEATS * b].reshape(N_SEATS, b) > 0.5
        passes = vec[ol.PASSES:ol.PASSES + N_SEATS * (b + 1)].reshape(N_SEATS, b + 1) > 0.5
        hands = [dealt, *deal[:3]]
        if phase == BID:
            nest = deal[3]
        scale = self.config.target_score
        scores = [int(round(float(vec[ol.SCORES + t]) * scale / 5.0)) * 5 for t in range(2)]
        st = RookState(self.config)
        st.new_game(dealer=int(np.argmax(vec[ol.DEALER:ol.DEALER + N_SEATS])), scores=scores,
                    hands=[bits(h) for h in hands], nest=bits(nest))
        while st.phase == BID:
            s, k = st.current, st.high_bid + 1
            if passes[s, k]:
                passes[s, k] = False
                st.apply(L.PASS)
                continue
            above = np.flatnonzero(bids[s, k:])
            if len(above):
                bids[s, k + above[0]] = False
                st.apply(L.BID0 + k + int(above[0]))
                continue
            if s == 0 and phase == BID:
                return st
            raise ValueError(f"the observation's auction has no action for seat {s} at level {k}")
        pending = bits(_mask(vec[ol.DISCARDS:ol.DISCARDS + L.n_cards]))
        called = np.flatnonzero(vec[ol.TRUMP:ol.TRUMP + L.n_contracts] > 0.5)
        while True:
            if st.phase == DISCARD and pending:
                st.apply(pending.pop())
            elif st.phase == TRUMP and len(called):
                st.apply(L.TRUMP0 + int(called[0]))
                called = called[1:]
            else:
                break
        if st.phase != phase or st.current != 0:
            raise ValueError("the observation's auction does not reach this seat's decision")
        return st


def _mask(row: np.ndarray) -> int:
    """The card set of a 0/1 section."""
    out = 0
    for c in np.flatnonzero(row > 0.5).tolist():
        out |= 1 << c
    return out

