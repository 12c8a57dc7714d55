"""Property tests of call-your-partner Rook: random legal play over many hands and flag
combinations, checked after every action against small oracles written from RULES.md C."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.rules import BID, CALL, DISCARD, OVER, PLAY, ROOK, TRUMP, CallPartnerState

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

flags_strategy = st.fixed_dictionaries(
    {
        "players": st.sampled_from([4, 5, 6]),
        "deck": st.sampled_from(["full", "no_twos_to_fours"]),
        "all_pass": st.sampled_from(["dealer_forced", "redeal"]),
        "no_counter_redeal": st.sampled_from(["on", "off"]),
        "nest_discard": st.sampled_from(["any", "no_counters_unless_forced"]),
        "first_lead": st.sampled_from(["left_of_dealer", "left_of_bidder", "bidder"]),
        "episode": st.sampled_from(["hand", "game"]),
    }
)


def oracle_play_mask(s: CallPartnerState) -> int:
    """RULES.md C7.1-C7.2: follow the led colour when able; the Rook Bird is a trump card."""
    L = s.L
    hand = [c for c in range(L.n_cards) if s.hands[s.current] >> c & 1]
    if not s.trick:
        return sum(1 << c for c in hand)

    def colour(c):  # the Rook Bird belongs to the trump colour
        return s.trump if c == L.rook else L.card_colour[c]

    allowed = [c for c in hand if colour(c) == colour(s.trick[0])]
    return sum(1 << c for c in (allowed or hand))


def check_invariants(s: CallPartnerState) -> None:
    L, n = s.L, s.n
    legal = s.legal_mask()
    if s.phase == OVER:
        assert legal == 0
        return
    assert legal and legal >> L.n_actions == 0
    held = 0
    for h in s.hands:
        assert not held & h
        held |= h
    if s.phase == BID:
        assert not held & s.nest and held | s.nest == L.all_cards
        assert legal & ~(L.bid_mask | 1 << L.PASS | 1 << L.REDEAL) == 0
        assert all(h.bit_count() == L.hand_size for h in s.hands)
        return
    # After the auction: hands + new nest (discards) + played cards partition the deck.
    assert not held & s.discards and not held & s.played and not s.discards & s.played
    assert held | s.discards | s.played == L.all_cards
    assert s.nest & ~(s.hands[s.bidder] | s.discards | s.played) == 0
    if s.phase == DISCARD:
        assert legal & ~s.hands[s.bidder] == 0
    elif s.phase == TRUMP:
        assert legal == L.trump_mask
    elif s.phase == ROOK:
        assert legal == L.rook_mask
    elif s.phase == CALL:
        assert legal == L.all_cards & ~s.hands[s.bidder] & ~sum(1 << c for c in s.called)
    else:
        assert s.phase == PLAY and s.discards.bit_count() == L.nest_size
        assert legal == oracle_play_mask(s)
        done = len(s.tricks)
        for k in range(n):
            seat = (s.leader + k) % n
            assert s.hands[seat].bit_count() == L.n_tricks - done - (1 if k < len(s.trick) else 0)
        assert len(s.called) == s.config.n_called and s.bidder not in s.partners
        for c in s.called:
            holder = next((x for x in range(n) if s.hands[x] >> c & 1), s.played_by[c])
            if holder >= 0:
                assert holder in s.partners
            else:
                assert s.discards >> c & 1  # in the nest: no partner through this card


@settings(max_examples=120, **SETTINGS)
@given(seed=st.integers(0, 2**31), flags=flags_strategy)
def test_random_play_keeps_every_invariant(seed, flags):
    cfg = CallPartnerConfig(**flags, target_score=300)
    s = CallPartnerState(cfg, seed=seed)
    s.new_game()
    rng = random.Random(seed)
    hands_seen = 0
    scores = list(s.scores)
    for _ in range(20_000):
        check_invariants(s)
        if s.phase == OVER or s.hands_played >= 6:
            break
        s.apply(rng.choice(s.legal_actions()))
        if s.hands_played != hands_seen:
            hands_seen = s.hands_played
            r = s.hand_result
            assert sum(r["points"]) == 200
            side = r["side"]
            p = sum(r["points"][x] for x in side)
            assert p == r["side_points"] and r["made"] == (p >= r["bid"])
            for x in range(cfg.players):
                expect = (p if r["made"] else -r["bid"]) if x in side else 200 - p
                assert r["hand_scores"][x] == expect
                scores[x] += expect
            assert r["scores"] == scores
            top = max(scores)
            assert r["game_winner"] == (scores.index(top) if top >= 300 and scores.count(top) == 1 else -1)
