"""Rollout policies of the search agent: play a sampled world (a :class:`rook_env.games.partnership.rules.RookState`
in card play) to the end of the hand.

A rollout policy is a callable ``policy(state, legal) -> card``: ``state`` the world, the seat to
act ``state.current``, ``legal`` the legal-action bitmask (``state.legal_mask()``). The search
agent accepts any such callable (a trained network wrapped as one gives "policy-guided search").

:class:`GreedyRollout` (``rollout="greedy"``) is a fast rule set on bitmasks. It reads only what
the seat to act could know in that world (its own hand and the cards played), never the other
hands of the world, so rollouts are not double-dummy:

* leading: cash a master (no unplayed card of its suit beats it): a trump master first while
  the bidding side may still pull trumps, else the side master worth most; without a master,
  lead the cheapest side card (lowest points, then rank), trumps last;
* following, partner winning the trick for sure (last to play, or its card is a master that no
  ruff can beat): smear the side card worth most;
* otherwise: when last, take the trick with the cheapest winning card; earlier, take it with a
  sure winner, or (third hand, or the trick holds points) with the cheapest winning card; else
  play the cheapest card (lowest points, side cards before trumps, lowest rank).

:class:`HeuristicRollout` (``rollout="heuristic"``) plays the world with the repository's
:class:`~rook_env.agents.heuristic.HeuristicAgent`, fed each seat's observation of the world
(encoded incrementally): stronger play, about an order of magnitude slower per step.
"""

from __future__ import annotations

from typing import Callable

from rook_env.games.partnership.observation import ObservationEncoder
from rook_env.games.partnership.rules import OVER, PLAY, RookState

from ..heuristic.agent import HeuristicAgent
from ..heuristic.tables import CardTables

__all__ = ["GreedyRollout", "HeuristicRollout", "RolloutPolicy", "play_out", "hand_score_diff"]

RolloutPolicy = Callable[[RookState, int], int]


def hand_score_diff(state: RookState) -> int:
    """The finished hand's score of team 0 minus team 1 (the ``score_diff`` reward of seat 0)."""
    d = state.hand_result["hand_scores"]
    return d[0] - d[1]


def play_out(state: RookState, policy: RolloutPolicy) -> None:
    """Play ``state`` to the end of the hand with ``policy`` for every seat."""
    while state.phase == PLAY:
        legal = state.legal_mask()
        card = policy(state, legal) if legal & (legal - 1) else legal.bit_length() - 1
        state.apply(card, legal)


class GreedyRollout:
    """The fast state-level rule set (see the module docstring)."""

    def __init__(self, tab: CardTables) -> None:
        self.tab = tab

    def play_out(self, state: RookState) -> None:
        play_out(state, self)

    def __call__(self, st: RookState, legal: int) -> int:
        tab = self.tab
        s = st.current
        trump = st.trump
        hand = st.hands[s]
        tpow = tab.trump_power[trump]
        rp = tab.rank_power
        pts = tab.points
        colour = tab.colour
        higher = tab.higher[trump]
        trumps = tab.suit[trump][trump]
        outside = tab.all_cards & ~st.played & ~hand  # cards this seat has not seen
        trick = st.trick
        cards = []
        m = legal
        while m:
            low = m & -m
            cards.append(low.bit_length() - 1)
            m ^= low
        if not trick:
            masters = [c for c in cards if not higher[c] & outside]
            if masters:
                if (s ^ st.bidder) & 1 == 0 and outside & trumps:
                    sure_trumps = [c for c in masters if tpow[c] >= 0]
                    if sure_trumps:
                        return min(sure_trumps, key=tpow.__getitem__)
                side = [c for c in masters if tpow[c] < 0]
                if side:
                    return max(side, key=lambda c: (pts[c], rp[c]))
            return min(cards, key=lambda c: (tpow[c] >= 0, pts[c], rp[c]))
        led_card = trick[0]
        led = colour[led_card] if tpow[led_card] < 0 else trump
        win_i, win_power = 0, -1.0
        for i, c in enumerate(trick):
            p = tpow[c] if tpow[c] >= 0 else (rp[c] if colour[c] == led else -1.0)
            if p > win_power:
                win_i, win_power = i, p
        win_card = trick[win_i]
        last = len(trick) == 3
        partner_wins = (st.leader + win_i) & 3 == s ^ 2
        if partner_wins:
            sure = last or (not higher[win_card] & outside
                            and (tpow[win_card] >= 0 or not outside & trumps))
            if sure:
                return max(cards, key=lambda c: (tpow[c] < 0, pts[c], -rp[c]))
            return min(cards, key=lambda c: (tpow[c] >= 0, pts[c], rp[c]))
        winners = []
        for c in cards:
            p = tpow[c] if tpow[c] >= 0 else (rp[c] if colour[c] == led else -1.0)
            if p > win_power:
                winners.append((p, c))
        if winners:
            if last:
                return min(winners)[1]
            sure = [(p, c) for p, c in winners if not higher[c] & outside]
            if sure:
                return min(sure)[1]
            if len(trick) == 2 or pts[led_card] or any(pts[c] for c in trick):
                return min(winners)[1]
        return min(cards, key=lambda c: (pts[c], tpow[c] >= 0, rp[c]))


class HeuristicRollout:
    """Plays a world with the heuristic agent, each seat acting on its observation of the world."""

    def __init__(self, agent: HeuristicAgent) -> None:
        self.agent = agent

    def play_out(self, state: RookState) -> None:
        agent = self.agent
        agent.reset()  # memories of another world must not carry over (the same hand recurs across worlds)
        enc = ObservationEncoder(state)
        enc.rebuild()
        obs = enc.obs
        while state.phase == PLAY:
            legal = state.legal_mask()
            s = state.current
            if legal & (legal - 1):
                card = agent._act_one(obs[s], legal, None)
            else:
                card = legal.bit_length() - 1
            high_bid, deals = state.high_bid, state.deals
            state.apply(card, legal)
            if state.phase != OVER:
                enc.update(s, card, PLAY, high_bid, deals)
