"""Search for the auction-phase decisions of the partnership game: bids, the nest discard, naming trump.

:class:`AuctionSearch` is what ``SearchAgent(auction="search")`` asks at every decision before card play.
Like card-play search it reads only the seat's observation, samples deals of the cards it cannot see
(uniformly, :class:`.worlds.WorldSampler`), plays each deal out to the end of the hand with the greedy
rollouts (the batched engine where it runs, else the Python rollout) and values every legal action by its
mean hand score difference (the seat's team minus the other team, the environment's scoring: a contract
made scores the points taken, a set one minus the bid). Every action of a decision is valued on the same
deals (common random numbers), and the action of best mean is chosen (ties: the first in the order given
below). The values are filed in ``last_values`` as card play's.

Naming trump (the bidder; with ``nest_discard="any"`` after the discard, else right after taking the nest)
  worlds: the other three hands; each colour is played out as the contract. Under
  ``"no_counters_unless_forced"`` the discard is still to come: each colour is played with the
  heuristic planner's discard for it (:meth:`HandModel.plan`).
Discard (one card per decision, five decisions)
  candidate five-card discards containing the cards already laid: the heuristic planner's options for each
  trump colour, and, for each legal card, that card completed by the planner's discard for the colour
  (cheapest cards to lose after it; non-counters first, so the no-counters rule's sets stay legal). Each
  candidate is played out under every colour still open (the named one under the no-counters rule); a
  card's value is the best (discard, colour) containing it: the trump decision comes later and is searched.
Bidding (pass, every legal bid, a legal redeal)
  worlds: the other three hands and the nest. In each world the rest of the auction is simulated: the
  seat's action now, then every seat (this one too, unless it passed) bids by the heuristic's rule on its
  own hand of the world (:meth:`HandModel.bid`: its estimate as limit, partner and pre-emption rules). The
  contract's bidder takes the nest, discards and names trump by the heuristic planner, and the hand is
  played out. A redeal (called now, or by a simulated seat, or every seat passing under ``all_pass="redeal"``)
  is worth 0: a fresh deal is as good for either team.

Assumptions of the bidding estimate, all stated in docs/agents.md: the other seats bid, and every bidder
discards and names trump, as the heuristic would (whatever the agents at the table really are); card play
is the greedy rollout's for all four seats (the same one card-play search uses); auction signals are
not used to shape the worlds (uniform deals, as card play's worlds). The seat's later turns follow the
heuristic, so a bid is valued as "bid this now, then bid as the heuristic": a deeper search of its own later
bids is not made.

``SearchAgent(auction="bids")`` searches the bids only (the base agent discards and names trump). Measured on
held-out duplicate deals: the searched bids beat the heuristic's; the searched discard and trump do not beat the
heuristic planner's; against the shipped network's auction both modes lose, the network bidding far less often
than the heuristic the bidding estimate assumes.

Needs ``trump_calls="colour"`` and ``circus_rook="off"`` (:func:`check_config`): the planner names colours
only and the circus passing is not simulated.
"""

from __future__ import annotations

import random
from typing import Callable, Sequence

import numpy as np

from rook_env.games.partnership.cards import N_COLOURS, N_SEATS, bits
from rook_env.games.partnership.config import RookConfig
from rook_env.games.partnership.rules import BID, DISCARD, TRUMP, RookState

from ..heuristic.bidding import HandModel
from ..heuristic.tables import CardTables, SeatReader, SeatView
from .worlds import NEST, Holder, WorldSampler, world_template

__all__ = ["AUCTION_MODES", "AUCTION_SAMPLES", "AuctionSearch", "Scorer", "check_config"]

# SearchAgent(auction=...): the base agent's auction, this search for bids, discard and trump, or for the bids only
# (the base agent discards and names trump), or the base network's values on sampled worlds (:mod:`.values`)
AUCTION_MODES = ("base", "search", "bids", "values")
# hand score differences (seat 0's team minus the other) of the worlds template + deal, greedy play to the end
Scorer = Callable[[RookState, Sequence[Holder], list[list[int]]], np.ndarray]
AUCTION_SAMPLES = 64  # deals per auction decision (SearchAgent(auction_samples=...)): chosen on seed 7200000
AUCTION_PHASES = (BID, DISCARD, TRUMP)
MAX_AUCTION_STEPS = 64  # a simulated auction ends long before (each seat passes at most once, bids only rise)


def check_config(config: RookConfig) -> None:
    """Raise ``ValueError`` when auction search cannot play these rules."""
    if config.trump_calls != "colour" or config.circus_rook != "off":
        raise ValueError("auction='search' needs trump_calls='colour' and circus_rook='off' (the planner names "
                         f"colours only), got trump_calls={config.trump_calls!r}, circus_rook={config.circus_rook!r}; "
                         "use auction='base'")


class AuctionSearch:
    """Searched bids, discards and trump for one configuration (see the module docstring).

    ``score``: the play-outs (:data:`Scorer`); ``samples``: deals per decision; ``seed``: with the observation,
    the seed of a decision's random stream; ``phases``: the phases searched (default bid, discard and trump)."""

    def __init__(self, config: RookConfig, tables: CardTables, reader: SeatReader, samples: int, seed: int,
                 score: Scorer, phases: tuple[int, ...] | None = None) -> None:
        check_config(config)
        self.config = config
        self.tab = tables
        self.L = tables.layout
        self.reader = reader
        self.samples = samples
        self.seed = seed
        self.score = score
        self.model = HandModel(tables)  # the heuristic's planner and bidding rule, with caches of its own
        self.forced = config.nest_discard == "no_counters_unless_forced"
        self.last_values: dict[int, float] | None = None
        self.phases = AUCTION_PHASES if phases is None else phases  # the phases searched; others: the base agent
        # every holder of a deal, seats relative to the searching one: a row of a deal is the four hands
        # (the bidder's as kept) and the discards
        self._all = [Holder(r, 0) for r in range(N_SEATS)] + [Holder(NEST, 0)]

    # ------------------------------------------------------------------ entry
    def decide(self, view: SeatView, vec: np.ndarray, packed: int, legal: int) -> int:
        """The searched action of an auction-phase decision (bid, discard, trump), or -1 when there is nothing
        to search (one legal action, another phase). Sets ``last_values`` for a searched decision."""
        self.last_values = None
        if not legal & (legal - 1) or view.phase not in self.phases:
            return -1
        rng = random.Random((packed << 64) | self.seed)  # a function of the seed and of the observation only
        dealer = _lowest(packed >> self.reader.ol.DEALER & 0b1111)
        if view.phase == BID:
            values = self._bid_values(view, vec, packed, legal, dealer, rng)
        elif view.phase == TRUMP:
            values = self._trump_values(view, legal, dealer, rng)
        else:
            values = self._discard_values(view, legal & self.L.card_mask, dealer, rng)
        if not values:
            return -1
        self.last_values = values
        return max(values, key=values.__getitem__)  # ties: the first action listed (insertion order)

    # ------------------------------------------------------------------ worlds and play-outs
    def _worlds(self, known: int, holders: list[Holder], rng: random.Random) -> list[list[int]]:
        unseen = self.tab.all_cards & ~known
        sampler = WorldSampler(unseen, holders, self.tab.counter_mask)
        return [sampler.sample(rng) for _ in range(self.samples)]

    def _template(self, bidder: int, level: int, call: int, dealer: int, nest_counters: bool) -> RookState:
        """A table at the first lead of the hand (seats relative to this one): contract ``level`` of
        ``bidder``, trump ``call``; the deal is written over it per world."""
        v = SeatView()
        v.hand, v.nest, v.discards = 0, 0, 0
        v.contract, v.bidder, v.call = level, bidder, call
        v.passed = 0
        v.trick, v.played, v.played_all = [], [0] * N_SEATS, 0
        v.tricks_won, v.tricks_left = (0, 0), self.L.n_tricks
        v.nest_counters = nest_counters
        st = world_template(self.config, v, (0, 0))
        st.dealer = dealer
        st.n_passed = N_SEATS - 1
        st.leader = st.current = st._first_leader()
        return st

    def _play(self, bidder: int, level: int, call: int, dealer: int, rows: list[list[int]]) -> np.ndarray:
        """Hand score differences of ``rows`` (four hands and the discards each) played under one contract."""
        nest_counters = self.forced and bool(rows[0][4] & self.tab.counter_mask)  # the no-counters rule's flag
        st = self._template(bidder, level, call, dealer, nest_counters)
        return np.asarray(self.score(st, self._all, rows), np.float64)

    def _plan(self, fourteen: int, trump: int = -1) -> tuple[int, int]:
        """(discards, trump) of the heuristic's planner for a bidder's hand with the nest (``trump``: fixed)."""
        if not self.L.nest_size:
            t = trump if trump >= 0 else max(range(N_COLOURS), key=lambda c: self.model.value(fourteen, c))
            return 0, t
        _, t, discard = self.model.plan(fourteen, trump)
        return discard, t

    # ------------------------------------------------------------------ naming trump
    def _trump_values(self, view: SeatView, legal: int, dealer: int, rng: random.Random) -> dict[int, float]:
        L = self.L
        worlds = self._worlds(view.hand | view.discards, self._others(), rng)
        values: dict[int, float] = {}
        for action in bits(legal & L.trump_mask):
            call = action - L.TRUMP0
            if self.forced and not view.discards:  # the discard is still to come: the planner's for this colour
                discards, _ = self._plan(view.hand, call)
            else:
                discards = view.discards
            kept = view.hand & ~discards
            rows = [[kept, *w, discards] for w in worlds]
            values[action] = float(self._play(0, view.contract, call, dealer, rows).mean())
        return values

    def _others(self) -> list[Holder]:
        return [Holder(r, self.L.hand_size) for r in (1, 2, 3)]

    # ------------------------------------------------------------------ discard
    def _discard_values(self, view: SeatView, cards: int, dealer: int, rng: random.Random) -> dict[int, float]:
        tab = self.tab
        laid = view.discards
        fourteen = view.hand | laid
        worlds = self._worlds(fourteen, self._others(), rng)
        trumps = [view.trump] if self.forced and view.trump >= 0 else list(range(N_COLOURS))
        best: dict[int, float] = {}
        for t in trumps:
            sets = self._discard_sets(fourteen, laid, cards, t)
            if not sets:
                continue
            rows = [[fourteen & ~d, *w, d] for d in sets for w in worlds]
            means = self._play(0, view.contract, t, dealer, rows).reshape(len(sets), len(worlds)).mean(axis=1)
            for d, m in zip(sets, means.tolist()):
                for c in bits(d & cards):
                    if c not in best or m > best[c]:
                        best[c] = m
        # cards cheapest to lose first, so that ties keep the heuristic's preference
        order = sorted(best, key=lambda c: (tab.points[c] > 0, tab.rank_power[c]))
        return {c: best[c] for c in order}

    def _discard_sets(self, fourteen: int, laid: int, cards: int, trump: int) -> list[int]:
        """Candidate discards under ``trump`` (see the module docstring), each containing ``laid``."""
        tab, size = self.tab, self.L.nest_size
        model = self.model
        sets = [d for d in model._discard_options(fourteen, trump) if d & laid == laid and d & ~laid & cards]
        plan, _ = self._plan(fourteen, trump)
        effective = tab.effective_suit[trump]

        def cost(card: int) -> tuple:  # the planner's cards first, then the cheapest to lose (non-counters first)
            lose = float(tab.rank_power[card]) + 3.0 * tab.points[card]
            if card == tab.rook:
                lose += 200
            elif effective[card] == trump:
                lose += 50
            return (not plan >> card & 1, tab.points[card] > 0, lose)

        order = sorted(bits(fourteen & ~laid), key=cost)
        for c in bits(cards):
            d = laid | 1 << c
            for o in order:
                if d.bit_count() >= size:
                    break
                d |= 1 << o
            if d not in sets and self._legal_set(fourteen, d, trump):
                sets.append(d)
        return sets

    def _legal_set(self, fourteen: int, discard: int, trump: int) -> bool:
        """Whether the five cards may be laid (in some order) under the rules' discard restriction."""
        if not self.forced or not discard & self.tab.counter_mask:
            return True
        # counters only once every card left is a counter or a trump
        left = fourteen & ~discard
        return not left & ~self.tab.counter_mask & ~self.tab.suit[trump][trump]

    # ------------------------------------------------------------------ bidding
    def _bid_values(self, view: SeatView, vec: np.ndarray, packed: int, legal: int, dealer: int,
                    rng: random.Random) -> dict[int, float]:
        L = self.L
        holders = self._others() + ([Holder(NEST, L.nest_size)] if L.nest_size else [])
        worlds = self._worlds(view.hand, holders, rng)
        ol, nb = self.reader.ol, L.n_bids
        bid_made = [bool(packed >> (ol.BIDS + r * nb) & ((1 << nb) - 1)) for r in range(N_SEATS)]
        actions = [a for a in [L.PASS, *range(L.BID0, L.BID0 + nb), L.REDEAL] if legal >> a & 1]
        # the contract each (world, action) ends in, then one play-out per distinct (world, contract)
        outcome: dict[tuple[int, int], int] = {}  # (world, action) -> row index (-1: redealt)
        rows_by: dict[tuple[int, int, int], list[int]] = {}  # (bidder, level, trump) -> row indices
        rows: list[list[int]] = []
        seen: dict[tuple[int, int, int], int] = {}  # (world, bidder, level) -> row index
        for w, deal in enumerate(worlds):
            hands = [view.hand, *deal[:3]]
            nest = deal[3] if L.nest_size else 0
            for a in actions:
                end = self._auction(view, hands, bid_made, a)
                if end is None:
                    outcome[(w, a)] = -1
                    continue
                bidder, level = end
                key = (w, bidder, level)
                if key not in seen:
                    discards, trump = self._plan(hands[bidder] | nest)
                    row = list(hands)
                    row[bidder] = (hands[bidder] | nest) & ~discards
                    seen[key] = len(rows)
                    rows.append(row + [discards])
                    rows_by.setdefault((bidder, level, trump), []).append(seen[key])
                outcome[(w, a)] = seen[key]
        scores = np.zeros(len(rows) + 1)  # the last entry: a redeal's 0
        for (bidder, level, trump), idx in rows_by.items():
            scores[idx] = self._play(bidder, level, trump, dealer, [rows[i] for i in idx])
        n = len(worlds)
        return {a: float(sum(scores[outcome[(w, a)]] for w in range(n)) / n) for a in actions}

    def _auction(self, view: SeatView, hands: list[int], bid_made: list[bool], action: int) -> tuple[int, int] | None:
        """The (bidder, level) the auction ends in when this seat plays ``action`` now and then every seat bids
        by the heuristic's rule on its own hand of the world (None: a redeal)."""
        L, cfg = self.L, self.config
        high, bidder = view.contract, view.bidder
        passed = [bool(view.passed >> r & 1) for r in range(N_SEATS)]
        made = list(bid_made)
        s, a = 0, action
        for _ in range(MAX_AUCTION_STEPS):
            if a == L.REDEAL:
                return None
            if a == L.PASS:
                passed[s] = True
                if sum(passed) == N_SEATS - 1:
                    if high >= 0:
                        return bidder, high
                    if cfg.all_pass == "redeal":
                        return None
            else:
                high, bidder, made[s] = a - L.BID0, s, True
                if high == L.n_bids - 1 or sum(passed) == N_SEATS - 1:
                    return bidder, high
            s = (s + 1) % N_SEATS
            while passed[s]:
                s = (s + 1) % N_SEATS
            a = self._heuristic_bid(s, hands[s], high, bidder, passed, made)
        raise RuntimeError("the simulated auction did not end")  # unreachable: bids rise and passes are final

    def _heuristic_bid(self, s: int, hand: int, high: int, bidder: int, passed: list[bool], made: list[bool]) -> int:
        """The heuristic's bid for relative seat ``s`` holding ``hand`` (its view rotated to its own seat)."""
        L = self.L
        redeal = 1 << L.REDEAL if self.config.no_counter_redeal == "on" and not hand & self.tab.counter_mask else 0
        if sum(passed) == N_SEATS - 1 and high < 0:
            legal = 1 << L.BID0 | redeal  # the dealer is forced to bid the minimum
        else:
            legal = 1 << L.PASS | (L.bid_mask >> (L.BID0 + high + 1)) << (L.BID0 + high + 1) | redeal
        if not legal & (legal - 1):
            return legal.bit_length() - 1
        v = SeatView()
        v.hand = hand
        v.contract = high
        v.bidder = (bidder - s) % N_SEATS if bidder >= 0 else -1
        v.partner_bid = made[(s + 2) % N_SEATS]
        v.passed = sum(1 << ((r - s) % N_SEATS) for r in range(N_SEATS) if passed[r])
        return self.model.bid(v, legal)


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1 if mask else 0
