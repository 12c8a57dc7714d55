"""The 2s flags in call-your-partner Rook (RULES.md F17, F18 applied to section C): the black 2
takes a trick the Rook Bird would win; the red 2 is the little rook, a trump above every other
trump and under a high Rook Bird; both need the full deck."""

import random

import numpy as np
import pytest
from helpers import cp_deal, cp_ids, play_random, scripted_setup

import rook_env
from rook_env.games.call_partner.config import CallPartnerConfig, make_config
from rook_env.games.call_partner.layout import layout_for
from rook_env.games.call_partner.rules import CallPartnerState, trick_winner_index

RED, YELLOW, GREEN, BLACK = range(4)


def lay(**flags):
    return layout_for(make_config(players=4, **flags))


def winner(L, text, trump, rook_high=True):
    return trick_winner_index(L, cp_ids(text, L), trump, rook_high)


@pytest.mark.parametrize("flag", ["black_two_trump", "red_two_little_rook"])
def test_twos_need_the_full_deck(flag):
    with pytest.raises(ValueError, match=f"{flag}='on' needs deck='full'"):
        make_config(deck="no_twos_to_fours", **{flag: "on"})
    assert getattr(make_config(**{flag: True}), flag) == "on"  # booleans as for every on/off flag
    with pytest.raises(ValueError, match=f"{flag}='maybe' is not allowed"):
        make_config(**{flag: "maybe"})


def test_black_two_takes_the_trick_the_rook_would_win():
    on, off = lay(black_two_trump="on"), lay()
    # Green trump, Rook high: the Rook would win; with the flag the black 2 takes it.
    assert winner(off, "G5 Rook B2 G1", GREEN) == 1
    assert winner(on, "G5 Rook B2 G1", GREEN) == 2
    # Rook low: the trump 1 wins, the Rook does not, so the black 2 takes nothing.
    assert winner(on, "G5 Rook B2 G1", GREEN, rook_high=False) == 3
    # Without the Rook in the trick the black 2 is a plain black 2 (the black 14 wins black).
    assert winner(on, "B5 B2 B14 R1", GREEN) == 2
    assert winner(on, "B5 B2 G2 R1", GREEN) == 2


def test_red_two_is_the_little_rook():
    on, off = lay(red_two_little_rook="on"), lay()
    # Green trump: the red 2 beats the trump 1, loses to a high Rook, beats a low Rook.
    assert winner(off, "G5 R2 G1 G14", GREEN) == 2
    assert winner(on, "G5 R2 G1 G14", GREEN) == 1
    assert winner(on, "G5 R2 Rook G1", GREEN) == 2
    assert winner(on, "G5 R2 Rook G1", GREEN, rook_high=False) == 1
    # A red lead: the red 2 is not red (it cannot win the red trick as a red card, but as a trump it wins).
    assert winner(on, "R5 R14 R2 Y1", GREEN) == 2
    # Red trump: the red 2 is still above the red 1.
    assert winner(on, "R1 R2 Y5 R14", RED) == 1
    assert winner(off, "R1 R2 Y5 R14", RED) == 0


def test_little_rook_follows_trump_not_red():
    L = lay(red_two_little_rook="on")
    R2, R7, G9, Y3 = cp_ids("R2 R7 G9 Y3", L)
    # Green trump led: the red 2 must be played by a seat whose only trump it is.
    assert L.suit_cards[GREEN][G9] & (1 << R2)
    # A red lead: the red 2 does not follow red.
    assert not L.suit_cards[GREEN][R7] & (1 << R2)
    # A led red 2 is a trump lead: trumps follow it, other reds do not.
    assert L.suit_cards[GREEN][R2] & (1 << G9) and not L.suit_cards[GREEN][R2] & (1 << R7)
    assert not L.suit_cards[GREEN][R2] & (1 << Y3)


@pytest.mark.parametrize("seat1,legal_after_red_lead", [
    ("R2 R9", "R9"),  # holding a plain red card, the red 2 may not follow red
    ("R2 Y5", None),  # no plain red card: any card, the red 2 included
])
def test_play_mask_with_the_little_rook(seat1, legal_after_red_lead):
    cfg = make_config(players=4, red_two_little_rook="on")
    L = layout_for(cfg)
    st = CallPartnerState(cfg)
    # dealer 3: seat 0 bids, wins the auction and leads the first trick (left of the dealer)
    hands, nest = cp_deal(cfg, {0: "R7 R14", 1: seat1}, "")
    st.new_game(dealer=3, hands=hands, nest=nest)
    scripted_setup(st, trump=GREEN)
    assert st.current == 0
    st.apply(L.parse_card("R7"))  # a red lead
    want = set(cp_ids(legal_after_red_lead, L)) if legal_after_red_lead else set(cp_ids(" ".join(
        L.card_name(c) for c in range(L.n_cards) if st.hands[1] >> c & 1), L))
    assert set(st.legal_actions()) == want
    if legal_after_red_lead is None:
        assert L.little_rook in want


@pytest.mark.parametrize("flag,forced", [("on", True), ("off", False)])
def test_german_discard_counts_the_little_rook_as_trump(flag, forced):
    # The bidder's non-counters are green (trump) and the red 2: with the little rook every
    # non-counter is a trump, so counters may go to the nest (F5 with F18); without it the red 2 is free.
    cfg = make_config(players=4, red_two_little_rook=flag, nest_discard="no_counters_unless_forced")
    L = layout_for(cfg)
    hands, nest = cp_deal(cfg, {1: "G2 G3 G4 G6 G7 G8 G9 G11 G12 G13 R2 R5 R10"}, "R14 R1 Y5 Y10 Rook")
    st = CallPartnerState(cfg)
    st.new_game(dealer=0, hands=hands, nest=nest)
    st.apply(L.bid_action(L.bids[0]))  # seat 1 bids, the others pass
    for _ in range(3):
        st.apply(L.PASS)
    st.apply(L.TRUMP0 + GREEN)  # trump before the discard (C5.1)
    hand = st.hands[1]
    assert st.legal_mask() == (hand if forced else hand & ~L.counter_mask)


@pytest.mark.parametrize("players", [4, 5, 6])
def test_random_games_with_both_flags_keep_200_points_a_hand(players):
    cfg = CallPartnerConfig(players=players, black_two_trump="on", red_two_little_rook="on")
    for seed in range(20):
        st = CallPartnerState(cfg, seed=seed)
        st.new_game()
        play_random(st, random.Random(seed))
        assert sum(st.points) == 200
        assert st.hand_result["hand_scores"] == st.scores


def test_the_flags_reach_the_environment_through_every_door():
    for door in (rook_env.env, rook_env.raw_env):
        e = door(game="call_partner", players=5, black_two_trump="on", red_two_little_rook=True)
        assert (e.config.black_two_trump, e.config.red_two_little_rook) == ("on", "on")
        assert e.layout.black_two == e.layout.card_id(BLACK, 2) and e.layout.little_rook == e.layout.card_id(RED, 2)
        e.reset(seed=3)
        rng = random.Random(0)
        while e.agents:
            if e.terminations[e.agent_selection] or e.truncations[e.agent_selection]:
                e.step(None)
                continue
            e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    assert rook_env.raw_env(game="call_partner").layout.little_rook == -1  # off by default
