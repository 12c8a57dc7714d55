"""A rule-based Rook player that acts only on its own observation.

``HeuristicAgent(seed=None, **flags)`` (``flags``: the environment's rule flags) reads the
seat's observation vector and action mask and always returns a legal action. It never looks
at the environment, other seats' observations, ``info`` or hidden state. It is deterministic
(no random tie-breaks; ``seed`` is accepted for the agent protocol and unused).

``act(observation)`` decides one seat's move; ``act_batch(observations, masks, keys)`` decides
many at once (vectorised card play, the bulk of the decisions) and chooses exactly what ``act``
would. When its rules find no move (a preferred action outside the mask, or an observation it
cannot read) it falls back to the legal card cheapest to lose, else pass, else the lowest
legal action, and counts it in ``fallbacks``.

Memory
------
Between card-play decisions a seat remembers what it saw itself: the cards played before its
own card and the card led to that trick, from which the next decision infers who failed to
follow suit. ``act`` files that memory under the seat's hand after its play, so one instance
may serve several seats of a table (hands are disjoint) and ``reset()`` is optional.
``act_batch`` files it under ``keys[i]`` (e.g. ``table * 4 + seat``): row ``i`` continues the
memory of key ``keys[i]``, and one ``act_batch`` call per step over any subset of tables equals
one ``act``-agent per key. Without ``keys`` it files by hand, as ``act`` does. A memory is used
only when it matches the current hand and cards played, so a new hand starts afresh.

Rules it plays by
-----------------
Bidding (agents/heuristic/bidding.py)
  * Estimate, for each trump, the points its side takes as bidder from the dealt hand: trump
    length, the Rook Bird, the top three other trumps, side masters (14s; 1s in the full deck)
    and second-highest cards, voids and singletons it can build on with the discard, counters
    held; the feature "nest unseen" carries the average value of the nest and of the partner.
    It is the hand model that also plans the discard (one feature function, one weight vector
    per deck and Rook rank, fitted to simulated hands by tools/fit_hand_model.py), calibrated
    for dealt hands, less a small margin, scaled to the deck's points, plus the expected share
    of the trick bonuses. Keep the best trump's estimate.
  * Bid the cheapest legal bid while it is at most the estimate, else pass; jump (to a few
    steps below its limit) only to pre-empt two opponents still in the auction with a much
    stronger hand. It never raises its own bid.
  * Partner holds the bid: pass unless its estimate beats the partner's bid by
    ``PARTNER_OVERCALL``; a partner who bid earlier adds ``PARTNER_SUPPORT`` to its limit.
  * Dealer forced to bid the minimum: bids it (or calls a redeal when legal and weak).
  * Redeal only when legal (no counter in hand) and the estimate is below ``REDEAL_BELOW``.
Discarding and naming trump
  * Plan discard and trump together over the 14 cards: for each trump and each set of side
    suits to void, keep trumps, the Rook Bird and side masters, void short side suits, then
    discard the lowest side cards (unguarded counters first: the bidder usually takes the last
    trick and so the nest), trumps only when there is no side card left; score each plan with
    the same hand model on the kept cards (trump length and top trumps, masters, voids,
    unguarded counters, counters held) and the nest's points at the chance of taking the last trick.
  * Trump: the plan's trump, i.e. by length and strength of the nest-merged hand.
  * ``nest_discard=no_counters_unless_forced``: name the best plan's trump first, then
    discard within the mask, non-counters first (counters only when forced).
Card play (with card counting; agents/heuristic/play.py)
  * Counts cards (played ones, its own hand, and as bidder its discard) and infers voids from
    failures to follow; the chance that a seat still to play can beat a card is computed
    hypergeometrically from the unseen cards that seat may hold.
  * Plays the legal card with the best value ``(2 p - 1) * (trick points + card points +
    expected points still to come) - keep value of the card``, ``p`` being the chance that
    its side takes the trick. Keep values: the Rook Bird, trumps that no (or one) unseen
    card beats, side masters, less for shedding the last card of a side suit while holding
    trumps. This gives: second hand low; third hand high (the lowest card likely to hold);
    no overtaking of a partner who is winning; counters fed to a trick the partner is sure
    to win; the lowest winning card when last to play (a winning counter first); non-counters
    thrown to the opponents' tricks; ruffing with the lowest trump that wins.
  * Leading: the bidder pulls trumps while an opponent may still hold one (sure trumps first,
    low trumps when long in them); its partner cashes sure trumps; defenders avoid leading
    unsure trumps; everyone cashes a sure winner (the highest remaining card of a colour)
    when it is unlikely to be trumped, else leads low from a colour the opponents are not
    known to be void in.
  * The last trick takes the nest: its value (known to the bidder from its discard; the
    announced "nest holds counters" flag, or the average unseen counter, for the others) is
    added to the top trump's keep value and to the last trick's points, and in the
    second-to-last trick the card kept is valued by its chance to win the last trick.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from rook_env.games.partnership.cards import N_COLOURS
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.rules import BID, CIRCUS, DISCARD, PLAY, TRUMP

from ..base import check_batch
from .batch import BatchCardPlay
from .bidding import HandModel
from .play import Memory, choose_card, choose_card_generic, circus_pass
from .tables import SeatView, card_tables, seat_reader

__all__ = ["HeuristicAgent"]

MEMORY_LIMIT = 256  # hand-keyed memories kept by act() before they are dropped (a stale one is harmless)


class HeuristicAgent:
    """Rule-based player (see the module docstring for its rules)."""

    strict = False  # tests set this to re-raise internal errors instead of falling back

    def __init__(self, seed: int | None = None, **flags: Any) -> None:
        self.config = make_config(**flags)
        self.tables = card_tables(self.config)
        self.layout = self.tables.layout
        self.reader = seat_reader(self.config)
        self.hand_model = HandModel(self.tables)
        self.fallbacks = 0  # decisions where its rules found no move and it fell back to a default
        self._memory: dict[int, Memory] = {}  # act(): by hand after the play
        self._keyed_memory: dict[int, Memory] = {}  # act_batch(keys=...): by key
        self._batch: BatchCardPlay | None = None

    def reset(self) -> None:
        """Forget the memories (optional: a memory that does not match the hand is ignored anyway)."""
        self._memory.clear()
        self._keyed_memory.clear()
        self.hand_model.clear()

    @property
    def keyed_memory(self) -> dict[int, Memory]:
        """The card memories ``act_batch`` keeps between calls, by key (immutable ``Memory`` tuples): a caller that
        replays hands reads them at a point of the hand and writes them back to go on from there (the labels'
        branches, :mod:`rook_env.training.labels.counterfactual`)."""
        return self._keyed_memory

    # ------------------------------------------------------------------ one decision
    def act(self, observation: Mapping[str, np.ndarray], info: Mapping[str, Any] | None = None) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = _legal_bits(mask)
        if not legal:
            raise ValueError("the action mask is empty: this seat has no legal action (not its turn, or the hand is over)")
        return self._act_one(observation["observation"], legal, None)

    def _act_one(self, vec: np.ndarray, legal: int, key: int | None, packed: int | None = None) -> int:
        try:
            view = self.reader.read(vec, packed)
            action = self._decide(view, legal, key)
        except Exception:  # never crash: fall back to a safe legal action
            if self.strict:
                raise
            action = -1
        if action < 0 or not legal >> action & 1:
            self.fallbacks += 1
            action = self._fallback(legal)
        return action

    def _decide(self, view: SeatView, legal: int, key: int | None) -> int:
        layout = self.layout
        if view.phase == PLAY:
            cards = legal & layout.card_mask
            if not cards:
                return -1
            if view.call >= N_COLOURS:  # a low or no-trump call (made by another seat)
                return choose_card_generic(self.tables, view, cards)
            memory = self._recall(view.hand, key)
            card, memory = choose_card(self.tables, view, cards, memory)
            self._file(memory, key)
            return card
        if not legal & (legal - 1):  # a single legal action
            return legal.bit_length() - 1
        if view.phase == BID:
            return self.hand_model.bid(view, legal)
        if view.phase == DISCARD:
            return self.hand_model.discard(view, legal & layout.card_mask)
        if view.phase == TRUMP:
            return self.hand_model.name_trump(view, legal)
        if view.phase == CIRCUS:
            return circus_pass(self.tables, view, legal & layout.card_mask)
        return -1

    def _fallback(self, legal: int) -> int:
        layout, tab = self.layout, self.tables
        cards = legal & layout.card_mask
        if cards:
            return min((c for c in range(layout.n_cards) if cards >> c & 1),
                       key=lambda c: (tab.points[c], tab.rank_power[c]))
        if legal >> layout.PASS & 1:
            return layout.PASS
        return (legal & -legal).bit_length() - 1

    def _recall(self, hand: int, key: int | None) -> Memory | None:
        if key is None:
            return self._memory.pop(hand, None)
        return self._keyed_memory.get(key)

    def _file(self, memory: Memory, key: int | None) -> None:
        if key is None:
            if len(self._memory) >= MEMORY_LIMIT:
                self._memory.clear()
            self._memory[memory.hand] = memory
        else:
            self._keyed_memory[key] = memory

    # ------------------------------------------------------------------ many decisions
    def act_batch(self, observations: np.ndarray, masks: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """Actions (N,) int64 for N seats' observations (N, obs_dim) and action masks (N, A).

        Row ``i`` gets exactly what ``act`` would choose for it, with the memory of key ``keys[i]``
        (e.g. ``table * 4 + seat``; keys must be distinct within a call); without ``keys`` rows use
        ``act``'s memory, filed by hand, in row order. Card play in its usual form is decided for
        all rows together in arrays; other phases and unusual observations row by row.
        """
        obs, masks, keys = check_batch(observations, masks, keys, self.reader.size, self.layout.n_actions)
        if self._batch is None:
            self._batch = BatchCardPlay(self.tables, self.reader)
        out = np.empty(obs.shape[0], np.int64)
        # rows in card play with a regular trick go to the arrays; the rest one by one
        vectorised, other_rows = self._batch.select(obs, masks)
        if vectorised.size:
            every = vectorised.size == obs.shape[0]
            if keys is None:
                def recall(hands: list[int]) -> list[Memory | None]:
                    return [self._memory.pop(h, None) for h in hands]
            else:
                key_list = keys.tolist() if every else keys[vectorised].tolist()
                def recall(hands: list[int]) -> list[Memory | None]:
                    return [self._keyed_memory.get(k) for k in key_list]
            cards, filed = self._batch.choose(obs if every else obs[vectorised],
                                              masks if every else masks[vectorised], recall)
            out[vectorised] = cards
            if keys is None:
                for memory in filed:
                    self._file(memory, None)
            else:
                self._keyed_memory.update(zip(key_list, filed))
        if other_rows:
            # one numpy call each for all these rows' bits, then the scalar path per row
            packed_obs = np.packbits(obs[other_rows] > 0.5, axis=1, bitorder="little")
            packed_masks = np.packbits(masks[other_rows] != 0, axis=1, bitorder="little")
            for j, i in enumerate(other_rows):
                key = None if keys is None else int(keys[i])
                legal = int.from_bytes(packed_masks[j].tobytes(), "little")
                out[i] = self._act_one(obs[i], legal, key, int.from_bytes(packed_obs[j].tobytes(), "little"))
        return out


def _legal_bits(mask: np.ndarray) -> int:
    """A 0/1 action mask as an ``int`` bitmask (bit ``a``: action ``a`` is legal)."""
    return int.from_bytes(np.packbits(np.asarray(mask) != 0, bitorder="little").tobytes(), "little")
