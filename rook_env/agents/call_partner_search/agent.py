"""A determinised-search player of call-your-partner Rook: :class:`CallPartnerSearch`.

Perfect-information Monte Carlo (PIMC): a decision samples ``worlds`` deals of the cards the seat cannot see,
uniformly among the deals consistent with what it knows, plays every candidate out to the end of the hand in every
world, and takes the candidate of the best mean reward for the seat (its ``reward`` as the environment scores the
hand: by default its hand score minus the mean of the others'). The same worlds serve every candidate (common
random numbers).

- **what the seat knows** (read from its observation with :func:`rook_env.games.call_partner.observation.decode`,
  and from its own memory of the hand): its hand, the cards played and by whom, the current trick, trump, the
  Rook's rank, the called card(s), the seats that showed a called card, the "nest holds counters" announcement,
  the nest and its discards when it is the bidder, and the suits a seat failed to follow (kept in the agent's
  memory: the observation shows only the current trick). Worlds deal the other cards uniformly under those
  constraints (:class:`.worlds.Deals`, exact and uniform): a seat that failed to follow a suit
  holds none of it, the bidder holds no called card (RULES.md C6.5), the nest (hidden from all but the bidder)
  holds a counter exactly when the table was told so, and under the German discard a bidder that laid a counter
  down holds only counters and trumps. Bids are not read as evidence: who holds a called card is unknown until it
  is played, and every seat may hold it.
- **rollouts**: the call-your-partner heuristic's card play (:class:`rook_env.agents.heuristic.CallPartnerHeuristic`)
  rewritten on the rules state with card bitmasks, each seat reading only what it could know in the world (its
  hand, the cards played, the called cards, who showed one, its own discards as bidder): the same card as the
  heuristic on its own observation (tests/test_call_partner_search.py checks that), about 20 times faster.
- **card play**: every legal card played out in every world.
- **the contract** (``contract="search"``, the bidder's decisions): at its first decision after the auction the
  bidder plays out candidate contracts, every trump colour with two ways of laying down the nest (the heuristic's:
  keep trumps and counters, empty short colours; and the lowest side cards, counters or not), the Rook high and
  the heuristic's call, and keeps the best as a plan for its discards and trump; the Rook's rank (high or low) and
  the call (the Rook Bird and the top trumps it lacks, the side 1s, one of its own discards to play alone) are
  searched in turn, each with the heuristic's choices after it. ``contract="base"``: the base agent decides them.
- **bidding**: the base agent (``base``; default the heuristic, e.g. the shipped network with
  ``"call_partner_search:ppo"``).

Decisions are a function of (seed, observation, memory of the hand): the random stream of a decision is seeded
from the seed and the observation's bytes, so a choice does not change when cards the seat cannot see are moved.
A decision that fails (an observation it cannot read, no consistent deal) is not silent: ``fallbacks`` counts it
and the base agent's action is played (``strict = True`` raises instead).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from rook_env.games.call_partner.config import make_config
from rook_env.games.call_partner.env import hand_rewards
from rook_env.games.call_partner.layout import LAST_TRICK_POINTS, bits, layout_for
from rook_env.games.call_partner.observation import decode
from rook_env.games.call_partner.rules import card_power, trick_winner_index

from ..heuristic.call_partner import CallPartnerHeuristic
from ..independent.sampler import Holder
from .worlds import Deals

__all__ = ["CONTRACT_MODES", "CallPartnerSearch", "MAX_WORLDS"]

MAX_WORLDS = 1000
CONTRACT_MODES = ("search", "base")
N_COLOURS = 4
MEMORY_LIMIT = 256  # memories kept (one per seat and hand in play); more are dropped
SIDE_ONES = 1  # rank of the side 1s offered as calls


class _Contract:
    """One contract's card facts for the rollout rule: per led colour, each card's power and the cards that beat
    it; the trump cards as the heuristic counts them; the orders of the heuristic as integers."""

    __slots__ = ("beats", "cheap", "led_of", "power", "rh", "smear", "trump", "trumpish")

    def __init__(self, L: Any, trump: int, rook_high: bool) -> None:
        n = L.n_cards
        self.trump, self.rh = trump, rook_high
        self.power = [[card_power(L, c, trump, rook_high, led) for c in range(n)] for led in range(N_COLOURS)]
        self.beats = [[sum(1 << d for d in range(n) if row[d] > row[c]) for c in range(n)] for row in self.power]
        self.trumpish = L.colour_mask[trump] | L.rook_bit  # the heuristic's trumps (no little rook)
        # the led colour of a trick as the heuristic reads it (a led Rook Bird: trump)
        self.led_of = [trump if c == L.rook else L.card_colour[c] for c in range(n)]
        pts, cp = L.card_points, L.card_power
        self.cheap = [pts[c] * 10000 + (self.trumpish >> c & 1) * 100 + cp[c] for c in range(n)]
        self.smear = [pts[c] * 100 - cp[c] for c in range(n)]


class _World:
    """A world at a point of card play (absolute seats): the rollout's mutable state."""

    __slots__ = ("hands", "leader", "played", "points", "revealed", "tricks_left", "trick")

    def __init__(self, hands: list[int], leader: int, trick: list[int], played: int, points: list[int],
                 revealed: int, tricks_left: int) -> None:
        self.hands, self.leader, self.trick, self.played = hands, leader, trick, played
        self.points, self.revealed, self.tricks_left = points, revealed, tricks_left

    def copy(self) -> "_World":
        return _World(list(self.hands), self.leader, list(self.trick), self.played, list(self.points),
                      self.revealed, self.tricks_left)


class CallPartnerSearch:
    """Determinised search for call-your-partner Rook (see the module docstring). ``worlds``: sampled deals per
    decision; ``contract``: ``"search"`` or ``"base"`` (who chooses the bidder's discards, trump, Rook and call);
    ``base``: the agent that bids (and plays when the search fails; default the heuristic); ``flags``: the
    table's rule flags."""

    strict = False  # tests set this: internal errors raise instead of falling back to the base agent

    def __init__(self, seed: int | None = None, worlds: int = 16, contract: str = "search", base: Any = None,
                 **flags: Any) -> None:
        flags.pop("game", None)
        self.config = make_config(**flags)
        if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or not 1 <= worlds <= MAX_WORLDS:
            raise ValueError(f"worlds must be a whole number in 1..{MAX_WORLDS}, got {worlds!r}")
        if contract not in CONTRACT_MODES:
            raise ValueError(f"contract must be one of {', '.join(CONTRACT_MODES)}, got {contract!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"seed must be an integer or None, got {seed!r}")
        if base is not None and not callable(getattr(base, "act", None)):
            raise ValueError(f"base must be an agent (with an act method), got {base!r}")
        self.worlds = int(worlds)
        self.contract = contract
        self.seed = int(seed) if seed is not None else random.SystemRandom().getrandbits(63)
        self._key = self.seed.to_bytes(16, "little", signed=True)
        self.heuristic = CallPartnerHeuristic(**flags)
        self.base = base if base is not None else self.heuristic
        L = self.L = layout_for(self.config)
        self.n = self.config.players
        self.german = self.config.nest_discard == "no_counters_unless_forced"
        self._tables: dict[tuple[int, bool], _Contract] = {}
        # cards of the same colour above each card (by rank power), for "no unseen card of its colour beats it"
        self._above = [0 if L.card_colour[c] < 0 else
                       sum(1 << d for d in bits(L.colour_mask[L.card_colour[c]]) if L.card_power[d] > L.card_power[c])
                       for c in range(L.n_cards)]
        self._fallbacks = 0
        self._memory: dict[tuple[int, int], tuple] = {}  # (hand after a card play, tricks left) -> voids then
        self._plans: dict[tuple[int, int], tuple[list[int], int]] = {}  # (hand, discards) -> (discards, trump)
        self.last_values: dict[int, float] | None = None  # the last searched decision: action -> mean reward

    @property
    def fallbacks(self) -> int:
        """Decisions where the search failed and the base agent's action was played."""
        return self._fallbacks

    def reset(self) -> None:
        """Forget the memories of the hand (optional: a memory that does not match the hand is not used)."""
        self._memory.clear()
        self._plans.clear()
        reset = getattr(self.base, "reset", None)
        if callable(reset):
            reset()

    def _table(self, trump: int, rook_high: bool) -> _Contract:
        key = (trump, rook_high)
        t = self._tables.get(key)
        if t is None:
            t = self._tables[key] = _Contract(self.L, trump, rook_high)
        return t

    # ------------------------------------------------------------------ decisions
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        self.last_values = None
        mask = np.asarray(observation["action_mask"])
        legal = int.from_bytes(np.packbits(mask != 0, bitorder="little").tobytes(), "little")
        if not legal:
            raise ValueError("the action mask is empty: this seat has no legal action (not its turn, or the hand "
                             "is over)")
        vec = np.ascontiguousarray(observation["observation"], dtype=np.float32)
        try:
            v = decode(vec, self.config)
            phase = v.phase
            if phase == "bid" or (phase != "play" and self.contract == "base"):
                return self.base.act(observation, info)
            if phase == "play":
                voids = self._voids(v)
                if legal & (legal - 1):
                    rng = self._rng(vec)
                    action = self._play(v, legal, rng, voids)
                else:
                    action = legal.bit_length() - 1
                self._remember(v, action, voids)
            elif not legal & (legal - 1):
                action = legal.bit_length() - 1
            else:
                action = self._contract_decision(v, legal, self._rng(vec))
            if not legal >> action & 1:
                raise ValueError(f"search chose illegal action {action}")
            return action
        except Exception:
            if self.strict:
                raise
            self._fallbacks += 1
            action = int(self.base.act(observation, info))
            return action if legal >> action & 1 else (legal & -legal).bit_length() - 1

    def _rng(self, vec: np.ndarray) -> random.Random:
        digest = hashlib.blake2b(vec.tobytes(), digest_size=16, key=self._key).digest()
        return random.Random(int.from_bytes(digest, "little"))

    # ------------------------------------------------------------------ the rollout rule
    def _policy(self, T: _Contract, s: int, w: _World, bidder: int, called: int, discards: int) -> int:
        """The heuristic's card for seat ``s`` in world ``w`` (module docstring), from what ``s`` could know."""
        L, n = self.L, self.n
        hand = w.hands[s]
        trick = w.trick
        played = w.played
        unseen = L.all_cards & ~hand & ~played & ~(discards if s == bidder else 0)
        # the seats s knows on the bidder's side: those that showed a called card, itself if it holds one
        known = w.revealed | ((1 << s) if hand & called else 0)
        if s == bidder:
            friends = known & ~(1 << s)
        elif known >> s & 1:
            friends = (known | 1 << bidder) & ~(1 << s)
        elif not called & ~played:
            friends = ((1 << n) - 1) & ~(1 << s) & ~(1 << bidder) & ~known
        else:
            friends = 0
        if not trick:
            legal = hand
            trump = T.trump
            trumps = legal & T.trumpish
            if trumps and (s == bidder or known >> s & 1) and unseen & T.trumpish:
                row = T.power[trump]
                top = max(bits(trumps), key=row.__getitem__)
                if not T.beats[trump][top] & unseen:
                    return top
            pts, colour, above = L.card_points, L.card_colour, self._above
            for c in sorted(bits(legal), key=lambda c: -pts[c]):
                col = colour[c]
                if col >= 0 and col != trump and not above[c] & unseen:
                    return c
            side = legal & ~T.trumpish
            pool = bits(side or legal)
            length = [0] * (N_COLOURS + 1)
            for c in pool:
                length[colour[c]] += 1  # the Rook Bird's colour (-1) counts in the last slot, never read
            cp = L.card_power
            return min(pool, key=lambda c: (pts[c], -(length[colour[c]] if colour[c] >= 0 else 0), cp[c]))
        led_card = trick[0]
        legal = hand & L.suit_cards[T.trump][led_card] or hand
        cards = bits(legal)
        led = T.led_of[led_card]
        row = T.power[led]
        best_i, winning = 0, row[trick[0]]
        for i in range(1, len(trick)):
            if row[trick[i]] > winning:
                best_i, winning = i, row[trick[i]]
        winner = (w.leader + best_i) % n
        last = len(trick) == n - 1
        beats = T.beats[led]
        if friends >> winner & 1 and (last or not beats[trick[best_i]] & unseen):
            return max(cards, key=T.smear.__getitem__)
        if not friends >> winner & 1:
            winners = [c for c in cards if row[c] > winning]
            if winners:
                if last:
                    pts = L.card_points
                    return max(winners, key=lambda c: (pts[c], -row[c]))
                sure = [c for c in winners if not beats[c] & unseen]
                if sure:
                    return min(sure, key=row.__getitem__)
                if sum(L.card_points[c] for c in trick) >= 10:
                    return max(winners, key=row.__getitem__)
        return min(cards, key=T.cheap.__getitem__)

    def _rollout(self, T: _Contract, w: _World, bidder: int, called: int, discards: int, side: int,
                 bid: int, me: int) -> float:
        """Play world ``w`` out with the rollout rule; ``me``'s reward for the hand (``side``: the bidder's side
        as a seat bitmask)."""
        return self._rewards(T, w, bidder, called, discards, side, bid)[me]

    def play_out(self, state: Any) -> list[float]:
        """Every seat's reward once the rollout rule has played the rules state ``state`` (a
        :class:`~rook_env.games.call_partner.rules.CallPartnerState` in card play) to the end of its hand on its
        true deal: what the heuristic playing every seat would score, about 20 times faster (the counterfactual
        labels' play-outs, rook_env.training.labels.counterfactual). ``state`` is not changed."""
        if state.phase != state.PLAY:
            raise ValueError(f"play_out plays from card play, the state is in phase {state.PHASE_NAMES[state.phase]!r}")
        L = self.L
        called = sum(1 << c for c in state.called)
        revealed = sum(1 << state.played_by[c] for c in state.called if state.played >> c & 1)
        side = sum(1 << s for s in state.side)
        tricks_left = state.hands[state.leader].bit_count() + (1 if state.trick else 0)
        w = _World(list(state.hands), state.leader, list(state.trick), state.played, list(state.points), revealed,
                   tricks_left)
        return self._rewards(self._table(state.trump, state.rook_high == 1), w, state.bidder, called,
                             state.discards, side, L.bids[state.high_bid])

    def _rewards(self, T: _Contract, w: _World, bidder: int, called: int, discards: int, side: int,
                 bid: int) -> list[float]:
        """Play world ``w`` out with the rollout rule; every seat's reward for the hand."""
        L, n = self.L, self.n
        pts = L.card_points
        hands, points = w.hands, w.points
        trump, rh = T.trump, T.rh
        while w.tricks_left:
            s = (w.leader + len(w.trick)) % n
            c = self._policy(T, s, w, bidder, called, discards)
            hands[s] &= ~(1 << c)
            w.played |= 1 << c
            if called >> c & 1:
                w.revealed |= 1 << s
            w.trick.append(c)
            if len(w.trick) == n:
                winner = (w.leader + trick_winner_index(L, w.trick, trump, rh)) % n
                points[winner] += sum(pts[x] for x in w.trick)
                w.trick = []
                w.leader = winner
                w.tricks_left -= 1
                if not w.tricks_left:
                    points[winner] += sum(pts[x] for x in bits(discards)) + LAST_TRICK_POINTS
        side_points = sum(points[s] for s in range(n) if side >> s & 1)
        made = side_points >= bid
        delta = [L.total_points - side_points] * n
        for s in range(n):
            if side >> s & 1:
                delta[s] = side_points if made else -bid
        return hand_rewards(self.config, delta, -1)

    # ------------------------------------------------------------------ card play
    def _voids(self, v: Any) -> list[int]:
        """The cards each relative seat is known not to hold because it failed to follow a suit: from the memory
        of the hand's earlier tricks and from the current trick."""
        L, n = self.L, self.n
        suits = L.suit_cards[v.trump]
        voids = [0] * n
        hand = sum(1 << c for c in v.hand)
        mem = self._memory.pop((hand, v.tricks_left + 1), None)
        if mem is not None:
            played, trick, old = mem
            voids = list(old)
            follow = suits[trick[0][1]]
            done = {r for r, _ in trick}
            now = dict(v.trick)
            for r in range(1, n):
                if r in done:
                    continue
                new = [c for c, p in v.played.items() if p == r and not played >> c & 1 and now.get(r) != c]
                if len(new) == 1 and not follow >> new[0] & 1:  # the card it played after this seat
                    voids[r] |= follow
        if v.trick:
            follow = suits[v.trick[0][1]]
            for r, c in v.trick[1:]:
                if not follow >> c & 1:
                    voids[r] |= follow
        return voids

    def _remember(self, v: Any, card: int, voids: list[int]) -> None:
        """File what the seat knows after playing ``card``, under its hand after the play."""
        if len(self._memory) >= MEMORY_LIMIT:
            self._memory.clear()
        hand = sum(1 << c for c in v.hand) & ~(1 << card)
        played = sum(1 << c for c in v.played) | 1 << card
        self._memory[(hand, v.tricks_left)] = (played, [*v.trick, (0, card)], voids)

    def _play(self, v: Any, legal: int, rng: random.Random, voids: list[int]) -> int:
        L, n = self.L, self.n
        trump, rh = v.trump, v.rook == "high"
        T = self._table(trump, rh)
        hand = sum(1 << c for c in v.hand)
        played = sum(1 << c for c in v.played)
        called = sum(1 << c for c in v.called)
        i_bid = v.bidder == 0
        discards = sum(1 << c for c in v.discards) if i_bid else 0
        unseen = L.all_cards & ~hand & ~played & ~discards
        in_trick = {r for r, _ in v.trick}
        revealed = 0
        for c in v.called:
            if c in v.played:
                revealed |= 1 << v.played[c]
        hidden_called = called & unseen
        holders = []
        for r in range(1, n):
            forbidden = voids[r]
            if r == v.bidder:
                forbidden |= hidden_called  # the bidder holds no called card (RULES.md C6.5)
                if self.german and v.nest_has_counters:  # it laid a counter down: it holds counters and trumps
                    forbidden |= L.all_cards & ~L.counter_mask & ~L.trump_cards[trump]
            holders.append(Holder(v.tricks_left - (r in in_trick), forbidden & unseen))
        if not i_bid:
            holders.append(Holder(L.nest_size, 0 if v.nest_has_counters else L.counter_mask & unseen,
                                  needs_counter=v.nest_has_counters))
        sampler = Deals(unseen, holders, L.counter_mask)
        leader = v.leader if v.leader is not None else 0
        trick = [c for _, c in v.trick]
        cards = bits(legal & L.all_cards)
        totals = [0.0] * len(cards)
        bid = v.contract
        for _ in range(self.worlds):
            deal = sampler.sample(rng)
            hands = [hand, *deal[:n - 1]]
            nest = discards if i_bid else deal[n - 1]
            side = 1 << v.bidder | revealed
            for s in range(n):
                if hands[s] & called:
                    side |= 1 << s
            world = _World(hands, leader, trick, played, list(v.points), revealed, v.tricks_left)
            for i, c in enumerate(cards):
                w = world.copy()
                w.hands[0] &= ~(1 << c)
                w.played |= 1 << c
                if called >> c & 1:
                    w.revealed |= 1
                w.trick.append(c)
                if len(w.trick) == n:
                    winner = (w.leader + trick_winner_index(L, w.trick, trump, rh)) % n
                    w.points[winner] += sum(L.card_points[x] for x in w.trick)
                    w.trick, w.leader = [], winner
                    w.tricks_left -= 1
                    if not w.tricks_left:
                        w.points[winner] += sum(L.card_points[x] for x in bits(nest)) + LAST_TRICK_POINTS
                totals[i] += self._rollout(T, w, v.bidder, called, nest, side, bid, 0)
        self.last_values = {c: t / self.worlds for c, t in zip(cards, totals)}
        pts = L.card_points
        best = max(range(len(cards)), key=lambda i: (totals[i], -pts[cards[i]], -T.power[T.led_of[cards[i]]][cards[i]]))
        return cards[best]

    # ------------------------------------------------------------------ the contract (the bidder)
    def _discard_legal(self, hand: int, trump: int | None) -> int:
        """The cards the bidder may lay down (the German rule: counters only when every other card is a trump)."""
        if not self.german:
            return hand
        free = hand & ~self.L.counter_mask
        return free if free & ~self.L.trump_cards[trump] else hand

    def _lay_down(self, hand: int, n: int, trump: int, style: int) -> list[int]:
        """``n`` cards to lay down from ``hand`` with ``trump`` in mind, each legal when laid. Style 0: the
        heuristic's (never trumps or the Rook, low side cards of short colours first, counters and side 1s
        last); style 1: the lowest side cards, counters or not."""
        L = self.L
        out = []
        for _ in range(n):
            legal = self._discard_legal(hand, trump)
            length = [(hand & L.colour_mask[c]).bit_count() for c in range(N_COLOURS)]

            def key(c: int, length: list[int] = length) -> tuple:
                if c == L.rook or L.card_colour[c] == trump:
                    return (2, L.card_power[c])
                if style == 1:
                    return (0, L.card_power[c], L.card_points[c])
                counter = L.card_points[c] > 0 or L.card_rank[c] == 1
                return (1 if counter else 0, length[L.card_colour[c]], L.card_power[c])

            c = min(bits(legal & L.all_cards), key=key)
            out.append(c)
            hand &= ~(1 << c)
        return out

    def _calls(self, hand: int, discards: int, trump: int, taken: int, candidates: bool) -> list[int]:
        """The heuristic's call (``candidates=False``: a list of one card), or the cards worth trying: the Rook
        Bird and the three top trumps the bidder lacks, the side 1s, one of its own discards (to play alone)."""
        L = self.L
        legal = L.all_cards & ~hand & ~taken
        order = [L.rook] + sorted(bits(L.colour_mask[trump]), key=lambda c: -L.card_power[c])
        tops = [c for c in order if c >= 0 and legal >> c & 1 and not discards >> c & 1]
        if not candidates:
            if tops:
                return tops[:1]
            rest = bits(legal & ~discards) or bits(legal)
            return [min(rest)]
        out = tops[:4]
        for col in range(N_COLOURS):
            if col != trump:
                c = L.card_id(col, SIDE_ONES) if SIDE_ONES in L.ranks else -1
                if c >= 0 and legal >> c & 1 and not discards >> c & 1:
                    out.append(c)
        alone = bits(legal & discards)
        if alone:
            out.append(max(alone, key=lambda c: (L.card_points[c], L.card_power[c])))
        if not out:
            out = [min(bits(legal))]
        return out

    def _first_leader(self, dealer: int, bidder: int) -> int:
        fl = self.config.first_lead
        if fl == "left_of_dealer":
            return (dealer + 1) % self.n
        if fl == "left_of_bidder":
            return (bidder + 1) % self.n
        return bidder

    def _evaluate(self, v: Any, hand: int, discards: int, options: list[tuple[int, bool, list[int], int]],
                  rng: random.Random) -> list[float]:
        """The mean reward of each option ``(trump, rook high, calls, cards to lay down)`` over sampled worlds (the
        seat is the bidder, relative seat 0, after the auction; calls: the complete list of called cards)."""
        L, n = self.L, self.n
        unseen = L.all_cards & ~hand & ~discards
        sampler = Deals(unseen, [Holder(L.hand_size) for _ in range(n - 1)])
        leader = self._first_leader(v.dealer, 0)
        bid = v.contract
        totals = [0.0] * len(options)
        for _ in range(self.worlds):
            deal = sampler.sample(rng)
            for i, (trump, rh, calls, lay) in enumerate(options):
                lay_mask = sum(1 << c for c in lay)
                hands = [hand & ~lay_mask, *deal]
                called = sum(1 << c for c in calls)
                side = 1
                for s in range(1, n):
                    if hands[s] & called:
                        side |= 1 << s
                w = _World(hands, leader, [], 0, [0] * n, 0, L.n_tricks)
                totals[i] += self._rollout(self._table(trump, rh), w, 0, called, discards | lay_mask, side, bid, 0)
        return [t / self.worlds for t in totals]

    def _contract_decision(self, v: Any, legal: int, rng: random.Random) -> int:
        """The bidder's discard, trump, Rook or call (module docstring)."""
        L = self.L
        hand = sum(1 << c for c in v.hand)
        discards = sum(1 << c for c in v.discards)
        called = sum(1 << c for c in v.called)
        if v.phase in ("discard", "trump"):
            plan = self._plans.pop((hand, discards), None)
            if plan is not None:
                lay, trump = plan
                if v.phase == "discard" and lay and legal >> lay[0] & 1:
                    self._plans[(hand & ~(1 << lay[0]), discards | 1 << lay[0])] = (lay[1:], trump)
                    return lay[0]
                if v.phase == "trump" and legal >> (L.TRUMP0 + trump) & 1:
                    self._plans[(hand, discards)] = (lay, trump)
                    return L.TRUMP0 + trump
            to_lay = L.nest_size - discards.bit_count()
            trumps = [v.trump] if v.trump is not None else list(range(N_COLOURS))
            options, seen = [], set()
            for t in trumps:
                for style in (0, 1):
                    lay = self._lay_down(hand, to_lay, t, style)
                    if (t, frozenset(lay)) in seen:
                        continue
                    seen.add((t, frozenset(lay)))
                    left = hand & ~sum(1 << c for c in lay)
                    calls = self._complete_calls(left, discards | sum(1 << c for c in lay), t, 0, [])
                    options.append((t, True, calls, lay))
            values = self._evaluate(v, hand, discards, options, rng)
            best = max(range(len(options)), key=lambda i: values[i])  # ties: the first (the heuristic's)
            t, _, _, lay = options[best]
            if v.phase == "discard":
                self.last_values = {}
                for (_, _, _, ll), val in zip(options, values):
                    self.last_values[ll[0]] = max(self.last_values.get(ll[0], -1e9), val)
                self._plans[(hand & ~(1 << lay[0]), discards | 1 << lay[0])] = (lay[1:], t)
                return lay[0]
            self.last_values = {}
            for (tt, _, _, _), val in zip(options, values):
                self.last_values[L.TRUMP0 + tt] = max(self.last_values.get(L.TRUMP0 + tt, -1e9), val)
            self._plans[(hand, discards)] = (lay, t)
            return L.TRUMP0 + t
        trump = v.trump
        if v.phase == "rook":
            options = [(trump, rh, self._complete_calls(hand, discards, trump, 0, []), []) for rh in (True, False)]
            values = self._evaluate(v, hand, discards, options, rng)
            self.last_values = {L.ROOK_HIGH: values[0], L.ROOK_LOW: values[1]}
            return L.ROOK_HIGH if values[0] >= values[1] else L.ROOK_LOW
        # the call
        rh = v.rook == "high"
        cands = [c for c in self._calls(hand, discards, trump, called, True) if legal >> c & 1]
        if not cands:
            cands = bits(legal & L.all_cards)[:1]
        options = [(trump, rh, self._complete_calls(hand, discards, trump, called | 1 << c, [*v.called, c]), [])
                   for c in cands]
        values = self._evaluate(v, hand, discards, options, rng)
        self.last_values = dict(zip(cands, values))
        return cands[max(range(len(cands)), key=lambda i: values[i])]

    def _complete_calls(self, hand: int, discards: int, trump: int, taken: int, calls: list[int]) -> list[int]:
        """``calls`` completed with the heuristic's calls up to the table's number of called cards."""
        calls = list(calls)
        while len(calls) < self.config.n_called:
            c = self._calls(hand, discards, trump, taken, False)[0]
            calls.append(c)
            taken |= 1 << c
        return calls
