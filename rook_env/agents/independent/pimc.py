"""A determinised-search player of the partnership game built apart from the heuristic: :class:`PIMCAgent`.

Perfect-information Monte Carlo (PIMC): every decision samples ``worlds`` deals of the cards the seat cannot see,
uniformly among the deals consistent with what it knows, plays every candidate out to the end of the hand in
every world with its own rollout rule, and takes the candidate of the best mean hand score (its team's minus the
other team's, as the environment scores the hand). The same worlds serve every candidate (common random numbers).
Nothing here calls the repository's heuristic or its search: the observation is read with the environment's
decoder (:func:`rook_env.games.partnership.observation.decode_masks`), the worlds are played on the pure rules
(:class:`rook_env.games.partnership.rules.RookState`), and the rest is this module's own:

- **what the seat knows**: its hand, the auction, the cards played and by whom, trump, the nest and discards when
  it is the bidder, the announced nest counters (German discard), and the suits a seat failed to follow, kept in
  the agent's memory of the hand (the observation shows only the current trick). Worlds deal the other cards
  uniformly under those constraints (:mod:`.sampler`); in card play, bids are not read as evidence.
- **rollouts** (``rollout``): ``"greedy"``, a short rule of its own that reads only what the seat to act could know
  in the world (its hand, the trick, the cards played): lead a side card that no unplayed card beats, the
  bidder's side pulls trumps with its top trump, else lead low from the longest side suit; take a trick with the
  cheapest card that wins it when last to play, when the trick holds points or when third to play; give points
  to a partner who wins the trick for sure; else play the cheapest card. ``"random"``: uniform random legal cards.
- **bidding** from simulated hand values: in a world, a seat is made the declarer (it takes the nest, names the
  colour of most and highest cards, lays down its cheapest cards) and the hand is played out, giving each team's
  points. The worlds of a bid are drawn uniformly and then resampled in proportion to how well they explain the
  auction by that same valuation (a seat that bid ``b`` points likely takes ``b`` declaring, one that passed when it
  could bid ``b`` likely not: soft evidence, a logistic of spread :data:`BID_SPREAD` points). Bidding the next level
  is worth the mean score of this seat declaring at that level; passing, the mean score of the contract going to
  the strongest opponent still in the auction (at the current level if it holds the high bid, else at the next),
  or to the partner when no opponent is left. The seat bids while bidding is worth more than passing; a redeal (a
  hand without counters) is worth 0, the mean of a fresh deal.
- **discard and trump**: candidate contracts (every call with three ways of choosing the discards: keep counters,
  bury low cards, void short suits; each legal under the table's discard rule) are played out on the sampled
  worlds; the bidder names the call and lays down the cards of the best one (kept as a plan over its discards).
- **card play**: every legal card played out in every world.

Decisions are a function of (seed, observation, memory of the hand): the random stream of a decision is seeded
from the seed and the observation's bytes, so a choice does not change when cards the seat cannot see are moved.
Circus Rook (``circus_rook="on"``) is not played. If a decision fails (an observation it cannot read, no
consistent deal) a random legal action is played and ``fallbacks`` counts it.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from rook_env.games.partnership.cards import N_COLOURS, bits, layout_for
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.observation import decode_masks, obs_layout
from rook_env.games.partnership.rules import BID, DISCARD, PLAY, TRUMP, RookState, contract_tables

from ..base import check_batch
from .sampler import DealSampler, Holder

__all__ = ["MAX_WORLDS", "ROLLOUTS", "PIMCAgent"]

ROLLOUTS = ("greedy", "random")
MAX_WORLDS = 1000
NEST = 4  # the nest's place in a sampled deal (seats are 0..3, relative to the searching seat)
MEMORY_LIMIT = 256  # memories kept (one per seat and hand in play); more are dropped
_SLOTS = RookState.state_fields()
# Reading the auction as evidence (PIMCAgent._auction_worlds): the spread, in points, of the logistic that says how
# likely a seat that bid b points is to take b declaring (about the spread of a declarer's points over the worlds
# of one hand: soft evidence); candidate deals drawn per world kept.
BID_SPREAD = 20.0
RESAMPLE = 4


class _Call:
    """One contract's card facts: each card's effective suit, the cards of each suit, the trump cards, the cards
    playable at any time, each card's power in a trick led in each suit, the cards above each card in its suit,
    the cards that beat each card in a trick led in each suit, and the rollout rule's orders of the cards as
    integers (``cheap``: points, trump or not, power; ``smear``: side cards first, points, low power first;
    ``cash``: points, power)."""

    __slots__ = ("above", "any_time", "beats", "cash", "cheap", "eff", "power", "smear", "suit", "trumps")

    def __init__(self, ct: Any, k: int, pts: tuple[int, ...]) -> None:
        n = len(pts)
        self.eff = ct.eff[k]
        self.power = ct.power[k]
        self.trumps = ct.trumps[k]
        self.any_time = ct.any_time[k]
        self.suit = [sum(1 << c for c in range(n) if self.eff[c] == s) for s in range(N_COLOURS)]
        own = [self.power[self.eff[c]][c] for c in range(n)]  # every card's power in its own suit (>= 0)
        self.above = [sum(1 << d for d in range(n) if self.eff[d] == self.eff[c] and own[d] > own[c])
                      for c in range(n)]
        self.beats = [[sum(1 << d for d in range(n) if row[d] > max(row[c], -0.5)) for c in range(n)]
                      for row in self.power]
        trump = [self.trumps >> c & 1 for c in range(n)]
        self.cheap = [pts[c] * 10**7 + trump[c] * 10**6 + int(own[c] * 10) for c in range(n)]
        self.smear = [(1 - trump[c]) * 10**7 + pts[c] * 10**5 - int(own[c] * 10) for c in range(n)]
        self.cash = [pts[c] * 10**5 + int(own[c] * 10) for c in range(n)]


class PIMCAgent:
    """Determinised search for the whole hand (bids, discards, trump, cards), independent of the heuristic (see
    the module docstring). ``worlds``: sampled deals per decision; ``rollout``: ``"greedy"`` or ``"random"``;
    ``flags``: the table's rule flags."""

    strict = False  # tests set this: internal errors raise instead of falling back to a random legal action

    def __init__(self, seed: int | None = None, worlds: int = 24, rollout: str = "greedy", **flags: Any) -> None:
        self.config = make_config(**flags)
        if self.config.circus_rook == "on":
            raise ValueError("the pimc player does not play Circus Rook (circus_rook='on'); use another agent")
        if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or not 1 <= worlds <= MAX_WORLDS:
            raise ValueError(f"worlds must be a whole number in 1..{MAX_WORLDS}, got {worlds!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"seed must be an integer or None, got {seed!r}")
        self.worlds = int(worlds)
        self.rollout = rollout
        self.seed = int(seed) if seed is not None else random.SystemRandom().getrandbits(63)
        self._key = self.seed.to_bytes(16, "little", signed=True)
        L = self.L = layout_for(self.config)
        ct = contract_tables(self.config)
        self.calls = [_Call(ct, k, L.card_points) for k in range(L.n_contracts)]
        self.german = self.config.nest_discard == "no_counters_unless_forced"
        self._all, self._pts = L.all_cards, L.card_points
        blank = RookState(replace(self.config, episode="hand") if self.config.episode != "hand" else self.config,
                          seed=0)
        blank.new_game(dealer=0)
        self._blank = tuple((name, getattr(blank, name)) for name in _SLOTS if hasattr(blank, name))
        self._fallbacks = 0
        self._memory: dict[int, tuple] = {}  # hand after a card play -> what the seat knew then (voids)
        self._plans: dict[tuple[int, int], list[int]] = {}  # (hand, discards) -> the discards still to lay down
        self._keyed: dict[int, tuple[dict, dict]] = {}  # act_batch(keys=...): each key's memories and plans
        self._size = obs_layout(self.config).size
        self.last_values: dict[int, float] | None = None  # the last decision: action -> mean score difference

    @property
    def fallbacks(self) -> int:
        """Decisions where the search failed and a random legal action was played."""
        return self._fallbacks

    def reset(self) -> None:
        """Forget the memories of the hand (optional: a memory that does not match the hand is not used)."""
        self._memory.clear()
        self._plans.clear()
        self._keyed.clear()

    # ------------------------------------------------------------------ decisions
    def act_batch(self, observations: np.ndarray, masks: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """Actions (N,) int64 for N seats' observations (N, obs_dim) and action masks (N, A), each what ``act``
        would choose. ``keys``: row ``i`` continues the memories of the hand filed under ``keys[i]`` (e.g.
        ``table * 4 + seat``; distinct within a call), as one ``act``-agent per key would, however many seats
        one agent serves (a label set's thousands of tables); without keys, rows use ``act``'s memories."""
        obs, masks, keys = check_batch(observations, masks, keys, self._size, self.L.n_actions)
        out = np.empty(obs.shape[0], np.int64)
        own = self._memory, self._plans
        try:
            for i in range(obs.shape[0]):
                if keys is not None:
                    self._memory, self._plans = self._keyed.setdefault(int(keys[i]), ({}, {}))
                out[i] = self.act({"observation": obs[i], "action_mask": masks[i]})
        finally:
            self._memory, self._plans = own
        return out
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        self.last_values = None
        mask = np.asarray(observation["action_mask"])
        legal = int.from_bytes(np.packbits(mask != 0, bitorder="little").tobytes(), "little")
        if not legal:
            raise ValueError("the action mask is empty: this seat has no legal action (not its turn, or the hand is over)")
        vec = np.ascontiguousarray(observation["observation"], dtype=np.float32)
        rng = random.Random(int.from_bytes(hashlib.blake2b(vec.tobytes(), digest_size=16, key=self._key).digest(),
                                           "little"))
        if not legal & (legal - 1):
            action = legal.bit_length() - 1
            if self._phase_of(vec) == PLAY:  # a forced card still goes into the memory of the hand
                try:
                    m = decode_masks(vec, self.config)
                    self._remember(m, action, self._voids(m))
                except Exception:
                    if self.strict:
                        raise
            return action
        try:
            m = decode_masks(vec, self.config)
            if m.phase == PLAY:
                voids = self._voids(m)
                action = self._play(m, legal, rng, voids)
                self._remember(m, action, voids)
            elif m.phase == BID:
                action = self._bid(m, legal, rng)
            elif m.phase in (DISCARD, TRUMP):
                action = self._contract(m, legal, rng)
            else:
                raise ValueError(f"no decision to take in phase {m.phase}")
            if not legal >> action & 1:
                raise ValueError(f"search chose illegal action {action}")
            return action
        except Exception:
            if self.strict:
                raise
            self._fallbacks += 1
            return rng.choice(bits(legal))

    def _phase_of(self, vec: np.ndarray) -> int:
        phase = np.flatnonzero(vec[:6] > 0.5)  # the phase section comes first
        return int(phase[0]) if phase.size else BID

    # ------------------------------------------------------------------ worlds
    def _state(self, hands: list[int], discards: int, bidder: int, level: int, call: int, leader: int) -> RookState:
        """A world at the first lead of card play (seats relative to the searching seat, which is 0)."""
        st = RookState.__new__(RookState)
        for name, value in self._blank:
            setattr(st, name, value)
        L = self.L
        st.hands = list(hands)
        st.nest = discards
        st.discards = discards
        st.bid_history = []
        st.high_bid = level
        st.bidder = bidder
        st.passed = [s != bidder for s in range(4)]
        st.n_passed = 3
        st.set_call(call)
        st.circus, st.passing = False, []
        st.leader = st.current = leader
        st.phase = PLAY
        st.trick = []
        st.tricks = []
        st.played = 0
        st.played_by = [-1] * L.n_cards
        st.tricks_won = [0, 0]
        st.points = [0, 0]
        st.scores = [0, 0]
        st.nest_has_counters = bool(discards & L.counter_mask)
        st.last_trick_team = -1
        st.hand_result = None
        st.winner = -1
        return st

    @staticmethod
    def _fork(state: RookState) -> RookState:
        new = RookState.__new__(RookState)
        for name in _SLOTS:
            setattr(new, name, getattr(state, name))
        new.hands = state.hands[:]
        new.trick = state.trick[:]
        new.tricks = state.tricks[:]
        new.played_by = state.played_by[:]
        new.tricks_won = state.tricks_won[:]
        new.points = state.points[:]
        new.scores = state.scores[:]
        return new

    def _first_leader(self, dealer: int, bidder: int) -> int:
        lead = self.config.first_lead
        if lead == "left_of_dealer":
            return (dealer + 1) % 4
        if lead == "left_of_bidder":
            return (bidder + 1) % 4
        return bidder

    def _sampler(self, unseen: int, holders: list[Holder]) -> DealSampler:
        return DealSampler(unseen, holders, self.L.counter_mask)

    # ------------------------------------------------------------------ rollouts
    def _play_out(self, st: RookState, rng: random.Random) -> int:
        """Play the world to the end of the hand; the hand score of team 0 (the searching seat's) minus team 1's."""
        greedy = self.rollout == "greedy"
        while st.phase == PLAY:
            legal = st.legal_mask()
            if not legal & (legal - 1):
                card = legal.bit_length() - 1
            elif greedy:
                card = self._greedy(st, legal)
            else:
                card = rng.choice(bits(legal))
            st.apply(card, legal)
        d = st.hand_result["hand_scores"]
        return d[0] - d[1]

    def _greedy(self, st: RookState, legal: int) -> int:
        """The rollout rule (see the module docstring), on what the seat to act could know in the world."""
        call = self.calls[st.call]
        s = st.current
        hand = st.hands[s]
        trick = st.trick
        if not trick:
            outside = self._all & ~st.played & ~hand  # the cards this seat has not seen
            above = call.above
            side = legal & ~call.trumps
            top = [c for c in bits(side) if not above[c] & outside]
            if top:
                return max(top, key=call.cash.__getitem__)
            if (s ^ st.bidder) & 1 == 0 and outside & call.trumps:  # the bidder's side pulls trumps
                top = [c for c in bits(legal & call.trumps) if not above[c] & outside]
                if top:
                    return max(top, key=call.cash.__getitem__)
            if side:
                eff = call.eff
                length = [(hand & m).bit_count() for m in call.suit]
                return min(bits(side), key=lambda c: call.cheap[c] - length[eff[c]] * 10**9)
            return min(bits(legal), key=call.cheap.__getitem__)
        beats = call.beats[call.eff[trick[0]]]
        pw = call.power[call.eff[trick[0]]]
        win = trick[0]
        for c in trick[1:]:
            if beats[win] >> c & 1:
                win = c
        last = len(trick) == 3
        if (st.leader + trick.index(win)) & 3 == s ^ 2:  # the partner holds the trick
            if last or not beats[win] & self._all & ~st.played & ~hand:
                return max(bits(legal), key=call.smear.__getitem__)
            return min(bits(legal), key=call.cheap.__getitem__)
        winners = legal & beats[win]
        if winners and (last or len(trick) == 2 or any(self._pts[c] for c in trick)):
            return min(bits(winners), key=pw.__getitem__)
        return min(bits(legal), key=call.cheap.__getitem__)

    # ------------------------------------------------------------------ card play
    def _voids(self, m: Any) -> list[int]:
        """The suits each seat is known not to hold (bits by relative seat): from the memory of the hand's earlier
        tricks and from the current trick."""
        call = self.calls[m.call]
        eff, any_time = call.eff, call.any_time
        voids = [0, 0, 0, 0]
        mem = self._memory.pop(m.hand, None)
        if mem is not None and mem[0] == m.call and mem[1] == m.tricks_left + 1:
            _, _, played, trick, old = mem
            voids = list(old)
            led = eff[trick[0][1]]
            done = {r for r, _ in trick}
            now = dict(m.trick)
            for r in (1, 2, 3):
                if r in done:
                    continue
                new = m.played[r] & ~played[r]
                if r in now:
                    new &= ~(1 << now[r])
                if new and not new & (new - 1):  # the card it played after this seat in the last trick
                    c = new.bit_length() - 1
                    if eff[c] != led and not any_time >> c & 1:
                        voids[r] |= 1 << led
        if m.trick:
            led = eff[m.trick[0][1]]
            for r, c in m.trick[1:]:
                if eff[c] != led and not any_time >> c & 1:
                    voids[r] |= 1 << led
        return voids

    def _remember(self, m: Any, card: int, voids: list[int]) -> None:
        """File what the seat knows after playing ``card`` (``voids``: :meth:`_voids`), under its hand after the
        play."""
        played = list(m.played)
        played[0] |= 1 << card
        if len(self._memory) >= MEMORY_LIMIT:
            self._memory.clear()
        self._memory[m.hand & ~(1 << card)] = (m.call, m.tricks_left, played, [*m.trick, (0, card)], voids)

    def _play(self, m: Any, legal: int, rng: random.Random, voids: list[int]) -> int:
        L = self.L
        call = self.calls[m.call]
        i_bid = m.bidder == 0
        known = m.hand | m.played_all | ((m.nest | m.discards) if i_bid else 0)
        unseen = L.all_cards & ~known
        in_trick = {r for r, _ in m.trick}
        holders, where = [], []
        for r in (1, 2, 3):
            forbidden = 0
            for s in range(N_COLOURS):
                if voids[r] >> s & 1:
                    forbidden |= call.suit[s]
            if self.german and m.nest_counters and m.bidder == r:  # it laid a counter down: counters and trumps
                forbidden |= L.all_cards & ~L.counter_mask & ~call.trumps
            holders.append(Holder(m.tricks_left - (r in in_trick), forbidden & unseen))
            where.append(r)
        if not i_bid and L.nest_size:
            if self.german:
                holders.append(Holder(L.nest_size, 0 if m.nest_counters else L.counter_mask & unseen,
                                      needs_counter=m.nest_counters))
            else:
                holders.append(Holder(L.nest_size))
            where.append(NEST)
        sampler = self._sampler(unseen, holders)
        template = self._state([m.hand, 0, 0, 0], m.discards if i_bid else 0, m.bidder, m.contract, m.call,
                               m.trick[0][0] if m.trick else 0)
        template.trick = [c for _, c in m.trick]
        template.current = 0
        done = L.n_tricks - m.tricks_left
        template.tricks = [(-1, ())] * done  # only their number counts
        template.played = m.played_all
        template.tricks_won = list(m.tricks_won)
        template.points = list(m.counters)
        template.nest_has_counters = m.nest_counters
        cards = self._distinct(bits(legal & L.card_mask), call, unseen)
        totals = [0] * len(cards)
        for _ in range(self.worlds):
            world = self._fork(template)
            for w, mask in zip(where, sampler.sample(rng)):
                if w == NEST:
                    world.nest = world.discards = mask
                else:
                    world.hands[w] = mask
            for i, c in enumerate(cards):
                st = self._fork(world)
                st.apply(c)
                totals[i] += self._play_out(st, rng)
        self.last_values = {c: t / self.worlds for c, t in zip(cards, totals)}
        pts = L.card_points
        best = max(range(len(cards)), key=lambda i: (totals[i], -pts[cards[i]], -call.power[call.eff[cards[i]]][cards[i]]))
        return cards[best]

    def _distinct(self, cards: list[int], call: _Call, unseen: int) -> list[int]:
        """``cards`` less those that play like a lower one: of two cards of one suit worth the same points with no
        card between them that another seat may hold, the higher is left out (they take the same tricks)."""
        if self.config.black_two_trump == "on":  # the black 2 beats the Rook Bird: powers do not say it all
            return cards
        pts, eff, above = self._pts, call.eff, call.above
        out: list[int] = []
        for c in sorted(cards, key=lambda c: (eff[c], call.power[eff[c]][c])):
            if out:
                low = out[-1]
                between = above[low] & ~above[c] & ~(1 << c)
                if eff[low] == eff[c] and pts[low] == pts[c] and not between & unseen:
                    continue
            out.append(c)
        return out

    # ------------------------------------------------------------------ the contract: discards and trump
    def _discard_legal(self, hand: int, call: int) -> int:
        """The cards the bidder may lay down from ``hand`` under ``call`` (the German rule: counters only when
        every other card is a trump)."""
        if not self.german:
            return hand
        free = hand & ~self.L.counter_mask
        return free if free & ~self.calls[call].trumps else hand

    def _discards(self, hand: int, n: int, call: int, style: int) -> list[int]:
        """``n`` cards to lay down from ``hand`` under ``call``, cheapest first by one of three styles (0: keep
        counters and trumps, lay down low side cards; 1: lay down the lowest side cards, counters or not; 2: empty
        the shortest side suits, keeping each suit's top card), each card legal when it is laid down."""
        c_ = self.calls[call]
        pts = self.L.card_points
        out = []
        for _ in range(n):
            legal = self._discard_legal(hand, call)
            outside = self.L.all_cards & ~hand
            length = [(hand & m).bit_count() for m in c_.suit]

            def key(c: int, outside: int = outside, length: list[int] = length) -> tuple:
                trump = bool(c_.trumps >> c & 1)
                power = c_.power[c_.eff[c]][c]
                if style == 0:
                    return (trump, pts[c] > 0, power)
                if style == 1:
                    return (trump, power)
                return (trump, not c_.above[c] & outside, length[c_.eff[c]], pts[c], power)

            c = min(bits(legal), key=key)
            out.append(c)
            hand &= ~(1 << c)
        return out

    def _candidates(self, hand: int, n: int, calls: list[int]) -> list[tuple[int, list[int]]]:
        """Candidate contracts: (call, the discards still to lay down), distinct."""
        seen, out = set(), []
        for k in calls:
            for style in range(3 if n else 1):
                cards = self._discards(hand, n, k, style)
                key = (k, frozenset(cards))
                if key not in seen:
                    seen.add(key)
                    out.append((k, cards))
        return out

    def _contract(self, m: Any, legal: int, rng: random.Random) -> int:
        """The bidder's discard or trump: candidate contracts played out on sampled worlds."""
        L = self.L
        n = L.nest_size - m.discards.bit_count()
        plan = self._plans.pop((m.hand, m.discards), None)
        if m.phase == DISCARD and plan and legal >> plan[0] & 1:
            if len(plan) > 1:
                self._plans[(m.hand & ~(1 << plan[0]), m.discards | 1 << plan[0])] = plan[1:]
            return plan[0]
        if m.phase == TRUMP:
            calls = [a - L.TRUMP0 for a in bits(legal) if L.TRUMP0 <= a < L.TRUMP0 + L.n_contracts]
        else:
            calls = [m.call] if m.call >= 0 else list(range(L.n_contracts))
        candidates = self._candidates(m.hand, n, calls)
        unseen = L.all_cards & ~(m.hand | m.nest | m.discards)
        sampler = self._sampler(unseen, [Holder(L.hand_size) for _ in range(3)])
        leader = self._first_leader(m.dealer, 0)
        totals = [0] * len(candidates)
        for _ in range(self.worlds):
            deal = sampler.sample(rng)
            for i, (k, cards) in enumerate(candidates):
                lay = sum(1 << c for c in cards)
                st = self._state([m.hand & ~lay, *deal], m.discards | lay, 0, m.contract, k, leader)
                totals[i] += self._play_out(st, rng)
        best = max(range(len(candidates)), key=lambda i: totals[i])  # ties: the first candidate
        k, cards = candidates[best]
        self.last_values = {}
        for (kk, cc), t in zip(candidates, totals):  # per action: the best candidate that starts with it
            a = L.TRUMP0 + kk if m.phase == TRUMP else cc[0]
            self.last_values[a] = max(self.last_values.get(a, -1e9), t / self.worlds)
        if m.phase == TRUMP:
            if cards:
                self._plans[(m.hand, m.discards)] = cards
            return L.TRUMP0 + k
        if len(cards) > 1:
            self._plans[(m.hand & ~(1 << cards[0]), m.discards | 1 << cards[0])] = cards[1:]
        return cards[0]

    # ------------------------------------------------------------------ bidding
    def _declare(self, hands: list[int], nest: int, seat: int, dealer: int, rng: random.Random) -> tuple[int, int]:
        """The points (counters and bonuses) of team 0 and team 1 when ``seat`` declares in a dealt world: it takes
        the nest, names the colour of most (and highest) cards and lays down its cheapest cards."""
        L = self.L
        full = hands[seat] | nest
        order = L.rank_order
        best, call = -1, 0
        for k in range(N_COLOURS):  # the colour contracts (high): the most trumps, then the highest
            score = sum(8 + order[c] for c in bits(full & self.calls[k].trumps))
            if score > best:
                best, call = score, k
        lay = sum(1 << c for c in self._discards(full, L.nest_size, call, 0))
        world = list(hands)
        world[seat] = full & ~lay
        st = self._state(world, lay, seat, 0, call, self._first_leader(dealer, seat))
        self._play_out(st, rng)
        r = st.hand_result
        return r["counters"][0] + r["bonus"][0], r["counters"][1] + r["bonus"][1]

    @staticmethod
    def _score(totals: tuple[int, int], declarer: int, bid: int) -> int:
        """Team 0's hand score minus team 1's when ``declarer`` (a seat) plays a contract of ``bid`` points."""
        mine, theirs = totals
        if declarer & 1 == 0:
            return (mine if mine >= bid else -bid) - theirs
        return mine - (theirs if theirs >= bid else -bid)

    def _auction_worlds(self, m: Any, sampler: DealSampler, rng: random.Random
                        ) -> list[tuple[list[int], dict[int, tuple[int, int]]]]:
        """The worlds of a bid, each with the declaring totals already played out in it (seat -> team points).

        Deals are drawn uniformly, then ``worlds`` of them drawn again in proportion to how well each explains the
        auction by this player's own valuation (sampling importance resampling): a seat that bid ``b`` points is
        likely to take ``b`` declaring in that world, one that passed when it could bid ``b`` likely not (each a
        logistic in the seat's team points as declarer minus ``b``, spread :data:`BID_SPREAD` points). A dealer's
        forced opening bid tells nothing."""
        L = self.L
        evidence: list[tuple[int, int, bool]] = []  # (seat, points, bid them (True) or declined them (False))
        forced = sum(1 for r, lvl in m.passed if lvl < 0) == 3
        for r, lvl in m.bids:
            if r and not (forced and lvl == 0):
                evidence.append((r, L.bids[lvl], True))
        for r, lvl in m.passed:
            if r and lvl + 1 < L.n_bids:
                evidence.append((r, L.bids[lvl + 1], False))
        if not evidence:
            return [(sampler.sample(rng), {}) for _ in range(self.worlds)]
        candidates, weights = [], []
        for _ in range(self.worlds * RESAMPLE):
            deal = sampler.sample(rng)
            hands = [m.hand, *deal[:3]]
            nest = deal[3] if L.nest_size else 0
            totals: dict[int, tuple[int, int]] = {}
            w = 1.0
            for r, points, bid in evidence:
                if r not in totals:
                    totals[r] = self._declare(hands, nest, r, m.dealer, rng)
                x = 1.0 / (1.0 + math.exp(-(totals[r][r & 1] - points) / BID_SPREAD))
                w *= x if bid else 1.0 - x
            candidates.append((deal, totals))
            weights.append(w)
        total = sum(weights)
        if not total > 0:
            return candidates[:self.worlds]
        # systematic resampling: worlds in proportion to their weights
        out, step = [], total / self.worlds
        u, acc, i = rng.random() * step, weights[0], 0
        for _ in range(self.worlds):
            while acc < u and i < len(candidates) - 1:
                i += 1
                acc += weights[i]
            out.append(candidates[i])
            u += step
        return out

    def _bid(self, m: Any, legal: int, rng: random.Random) -> int:
        L = self.L
        bids = [a for a in bits(legal) if L.BID0 <= a < L.BID0 + L.n_bids]
        can_pass = bool(legal >> L.PASS & 1)
        can_redeal = bool(legal >> L.REDEAL & 1)
        passed = {r for r, _ in m.passed}
        others = [r for r in (1, 2, 3) if r not in passed]  # the high bidder among them
        high = m.bidder if m.bidder > 0 else -1
        unseen = L.all_cards & ~m.hand
        holders = [Holder(L.hand_size) for _ in range(3)] + ([Holder(L.nest_size)] if L.nest_size else [])
        sampler = self._sampler(unseen, holders)
        next_level = L.bids[bids[0] - L.BID0] if bids else 0
        current = L.bids[m.contract] if m.contract >= 0 else 0
        bid_value = pass_value = 0.0
        rivals = [r for r in others if r & 1]
        for deal, known in self._auction_worlds(m, sampler, rng):
            hands = [m.hand, *deal[:3]]
            nest = deal[3] if L.nest_size else 0
            if bids:
                bid_value += self._score(self._declare(hands, nest, 0, m.dealer, rng), 0, next_level)
            if can_pass and others:
                # the contract goes to the strongest opponent still in the auction, else to the partner
                totals = {r: known[r] if r in known else self._declare(hands, nest, r, m.dealer, rng)
                          for r in (rivals or others)}
                r = max(totals, key=lambda r: (totals[r][r & 1] - totals[r][(r & 1) ^ 1], r == high))
                level = current if r == high else (next_level or current)
                pass_value += self._score(totals[r], r, level)
        options = []
        if bids:
            options.append((bid_value / self.worlds, bids[0]))
        if can_pass:
            # nobody left to bid: with all_pass="redeal" the hand is dealt again (worth 0 on average)
            options.append((pass_value / self.worlds if others else 0.0, L.PASS))
        if can_redeal:
            options.append((0.0, L.REDEAL))
        self.last_values = {a: v for v, a in options}
        # the best value; ties: pass, then redeal, then the bid
        order = {L.PASS: 2, L.REDEAL: 1}
        return max(options, key=lambda o: (o[0], order.get(o[1], 0)))[1]
