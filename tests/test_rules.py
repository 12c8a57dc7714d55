"""The rules of every game, driven by action id through the environment or the pure rules state.

The partnership game (RULES.md R1-R10): its worked examples as scenarios, the auction, the nest, the
play rules and scoring. Call-your-partner Rook (RULES.md section C): scenario tests of the rules state,
each naming the rule it checks. Both games: the rules modules import only the standard library and the
shared trick-taking core. Fixed deals are written with card names; the rest of the deck is filled in id
order (``helpers.complete_deal``, ``helpers.cp_deal``)."""

import ast
import importlib
import pathlib
import random

import pytest
from helpers import (
    DEAL_75_45,
    DEAL_80_40,
    DEAL_90_30,
    DEAL_100_20,
    DEAL_105_15,
    GAMES,
    NEST,
    L,
    bits_of,
    complete_deal,
    cp_deal,
    cp_ids,
    deal_from_tricks,
    ids,
    per_game,
    play_designed_hand,
    play_random,
    play_tricks,
    scripted_setup,
    state_in_play,
    step_text,
)

import rook_env
from rook_env.games import get_game
from rook_env.games.call_partner import rules as cp
from rook_env.games.call_partner.config import CallPartnerConfig, make_config
from rook_env.games.call_partner.layout import layout_for
from rook_env.games.call_partner.rules import CallPartnerState, trick_winner_index
from rook_env.games.partnership.cards import bits
from rook_env.games.partnership.rules import BID, DISCARD, OVER, PLAY, TRUMP, RookState

COUNTERS = "R5 R10 R14 Y5 Y10 Y14 G5 G10 G14 B5 B10 B14 Rook"
NO_COUNTER_HAND = "R6 R7 R8 R9 R11 R12 R13 Y6 Y7"


def mask_names(mask):
    return sorted(L.action_name(a) for a in bits(mask))


def legal_names(e):
    m = e.observe(e.agent_selection)["action_mask"]
    return sorted(L.action_name(int(a)) for a in m.nonzero()[0])


# ------------------------------------------------------------------------------ deck and deal
@pytest.mark.partnership
def test_deck_and_counters():
    assert L.n_cards == 41 and L.rook == 40 and L.hand_size == 9 and L.n_tricks == 9
    assert sorted(L.card_name(c) for c in bits(L.counter_mask)) == sorted(COUNTERS.split())
    assert sum(L.card_points) == L.total_points == 120
    assert [L.card_points[c] for c in ids("R5 Y10 G14 Rook B9 R11")] == [5, 10, 10, 20, 0, 0]


@pytest.mark.partnership
@pytest.mark.parametrize("dealer", range(4))
def test_random_deal_follows_the_dealing_procedure(dealer):
    """One card at a time clockwise from the dealer's left; a nest card after each of the first five rounds."""
    st = RookState(seed=11)
    st.new_game(dealer=dealer)
    deck = list(range(41))
    random.Random(11).shuffle(deck)
    hands, nest, it = [[], [], [], []], [], iter(deck)
    for rnd in range(9):
        for i in range(1, 5):
            hands[(dealer + i) % 4].append(next(it))
        if rnd < 5:
            nest.append(next(it))
    assert [bits(h) for h in st.hands] == [sorted(h) for h in hands]
    assert bits(st.nest) == sorted(nest)
    # Bidding starts left of the dealer.
    assert st.current == (dealer + 1) % 4 and st.phase == BID


# ------------------------------------------------------------------------------ worked examples
@pytest.mark.partnership
def test_rook_bird_trick_example():
    """Trump hearts (red). Anna leads the 14 of spades (black), Ben the 5, Carla (holding spades)
    the Rook Bird, Dan the 10. Carla wins; her team takes 20 + 10 + 5 + 10 = 45."""
    anna, ben, carla, dan = 0, 1, 2, 3
    hands, nest = complete_deal(
        {anna: "B14 R6", ben: "B5", carla: "Rook B6 B7 Y13", dan: "B10 B8"}, nest="G6 G7 G8 G9 G11"
    )
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": dan})
    step_text(e, "pass", "pass", "pass", "bid 70")  # the dealer is forced to 70
    step_text(e, "G6", "G7", "G8", "G9", "G11", "trump red")
    assert e.agent_selection == "player_0"  # left of the dealer leads
    step_text(e, "B14", "B5")
    assert e.agent_selection == "player_2"
    # Carla holds spades: she must follow with one of them or play the Rook Bird, nothing else.
    assert legal_names(e) == ["B6", "B7", "Rook"]
    step_text(e, "Rook", "B10")
    game = e.unwrapped.game
    assert game.points == [45, 0] and game.tricks_won == [1, 0]
    assert e.agent_selection == "player_2"  # the winner leads the next trick
    assert e.unwrapped.decode("player_2").counters == (45, 0)
    assert e.unwrapped.decode("player_1").counters == (0, 45)


SCORING_EXAMPLES = [
    # (deal, bid, captured by the bidders, captured by the defenders, hand scores, made)
    (DEAL_90_30, 85, 90, 30, [90, 30], True),
    (DEAL_80_40, 85, 80, 40, [-85, 40], False),
    (DEAL_105_15, 90, 105, 15, [105, 15], True),
    (DEAL_75_45, 95, 75, 45, [-95, 45], False),
    (DEAL_100_20, 100, 100, 20, [100, 20], True),
]


@pytest.mark.partnership
@pytest.mark.parametrize(
    "deal,bid,p,d,delta,made", SCORING_EXAMPLES, ids=["85/90", "85/80", "90/105", "95/75", "100/100"]
)
def test_scoring_examples(deal, bid, p, d, delta, made):
    e = rook_env.raw_env()
    play_designed_hand(e, deal, bid)
    game = e.unwrapped.game
    assert game.phase == OVER and all(e.terminations.values())
    for agent in e.agents:
        hand = e.infos[agent]["hand"]
        assert hand["bidder"] == 0 and hand["bid"] == bid and hand["trump"] == 3
        assert hand["counters"] == [p, d]
        assert hand["hand_scores"] == delta
        assert hand["made"] is made
    assert game.scores == delta  # from 0-0; a set bid goes negative
    diff = delta[0] - delta[1]
    assert e.rewards == {"player_0": diff, "player_1": -diff, "player_2": diff, "player_3": -diff}
    # Observations show the final scores, seat-relative.
    assert e.unwrapped.decode("player_1").scores == (delta[1], delta[0])


@pytest.mark.partnership
def test_defenders_bid_scoring_is_symmetric():
    """The same designed hand with team 1 as the bidders: made/set judged on team 1's counters."""
    # Rotate every seat by one: player_1 bids and leads (dealer 0), trump black.
    rotated = [({(s + 1) % 4: c for s, c in cards.items()}, (w + 1) % 4) for cards, w in DEAL_80_40]
    hands, nest = deal_from_tricks(rotated, NEST)
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 0, "scores": [10, 20]})
    step_text(e, "bid 85", "pass", "pass", "pass", *NEST.split(), "trump black")
    play_tricks(e, rotated)
    hand = e.infos["player_0"]["hand"]
    assert hand["bidder"] == 1 and hand["counters"] == [40, 80] and hand["hand_scores"] == [40, -85]
    assert e.unwrapped.game.scores == [50, -65]


@pytest.mark.partnership
def test_auction_example():
    """A 70, B 80, C pass, D 85, A 90, B 95, D pass, A pass: B wins at 95; C is never asked again."""
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})  # A = player_0 bids first
    A, B, C, D = (f"player_{i}" for i in range(4))
    script = [(A, "bid 70"), (B, "bid 80"), (C, "pass"), (D, "bid 85"), (A, "bid 90"), (B, "bid 95"),
              (D, "pass"), (A, "pass")]
    for agent, action in script:
        assert e.agent_selection == agent
        assert e.observe(C)["action_mask"].sum() == 0 or agent == C
        step_text(e, action)
    game = e.unwrapped.game
    assert game.phase == DISCARD and game.bidder == 1 and L.bids[game.high_bid] == 95
    assert e.agent_selection == B
    assert [s for s, _ in game.bid_history] == [0, 1, 2, 3, 0, 1, 3, 0]
    # B holds the nest: 14 cards.
    assert game.hands[1].bit_count() == 14 and game.hands[1] & game.nest == game.nest
    view = e.unwrapped.decode(C)  # C's view: bids by relative seat, C's pass with no bid above 80
    assert view.bids == [(2, 70), (3, 80), (1, 85), (2, 90), (3, 95)]
    assert (0, 80) in view.passes and view.bidder == 3 and view.contract == 95


@pytest.mark.partnership
def test_bid_must_exceed_high_bid_and_pass_is_final():
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 0})  # player_1 opens
    assert legal_names(e) == sorted(["pass"] + [f"bid {b}" for b in range(70, 121, 5)])
    step_text(e, "bid 90")  # a jump is allowed
    assert legal_names(e) == sorted(["pass"] + [f"bid {b}" for b in range(95, 121, 5)])
    with pytest.raises(ValueError, match="bid 90"):
        step_text(e, "bid 90")
    step_text(e, "pass")  # player_2
    step_text(e, "bid 100", "bid 105")  # player_3, player_0
    assert e.agent_selection == "player_1"  # player_2 has passed: skipped
    step_text(e, "bid 110")
    assert e.agent_selection == "player_3"


@pytest.mark.partnership
@pytest.mark.parametrize("opener", range(4))
def test_auction_ends_when_someone_bids_the_maximum(opener):
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": (opener + 3) % 4})
    step_text(e, "bid 120")
    game = e.unwrapped.game
    assert game.phase == DISCARD and game.bidder == opener and e.agent_selection == f"player_{opener}"
    assert len(game.bid_history) == 1


@pytest.mark.partnership
def test_auction_ends_after_three_passes_following_a_bid():
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "pass", "pass", "bid 70")
    assert e.unwrapped.game.phase == BID
    step_text(e, "pass")  # the third pass after a bid ends it: player_2 wins at 70
    game = e.unwrapped.game
    assert game.phase == DISCARD and game.bidder == 2 and L.bids[game.high_bid] == 70


@pytest.mark.partnership
def test_dealer_forced_to_minimum_when_first_three_pass():
    hands, nest = complete_deal({})  # the dealer (player_3) holds counters
    assert any(L.card_points[c] for c in hands[3])
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "pass", "pass", "pass")
    assert e.agent_selection == "player_3"
    assert legal_names(e) == ["bid 70"]
    with pytest.raises(ValueError):
        step_text(e, "pass")
    step_text(e, "bid 70")
    game = e.unwrapped.game
    assert game.phase == DISCARD and game.bidder == 3


@pytest.mark.partnership
def test_forced_dealer_without_counters_may_call_a_redeal():
    hands, nest = complete_deal({3: NO_COUNTER_HAND})
    e = rook_env.raw_env(episode="game")
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3, "scores": [40, -15]})
    step_text(e, "pass", "pass", "pass")
    assert legal_names(e) == ["bid 70", "redeal"]
    step_text(e, "redeal")
    game = e.unwrapped.game
    assert game.dealer == 3 and game.scores == [40, -15] and game.phase == BID and game.deals == 2
    assert e.agent_selection == "player_0" and game.bid_history == []


@pytest.mark.partnership
def test_no_counter_redeal_only_for_a_player_without_counters_on_their_turn():
    hands, nest = complete_deal({1: NO_COUNTER_HAND})
    e = rook_env.raw_env(episode="game")
    e.reset(seed=5, options={"hands": hands, "nest": nest, "dealer": 3, "scores": [120, 35]})
    assert "redeal" not in legal_names(e)  # player_0 holds counters
    with pytest.raises(ValueError, match="redeal"):
        step_text(e, "redeal")
    assert e.observe("player_1")["action_mask"].sum() == 0  # not player_1's turn yet
    step_text(e, "bid 75")
    assert e.agent_selection == "player_1"
    assert legal_names(e) == sorted(["pass", "redeal"] + [f"bid {b}" for b in range(80, 121, 5)])
    game = e.unwrapped.game
    old_hands = list(game.hands)
    step_text(e, "redeal")
    # The same dealer deals again, scores unchanged, the auction starts afresh left of the dealer.
    assert game.dealer == 3 and game.scores == [120, 35] and game.phase == BID
    assert game.hands != old_hands and game.bid_history == [] and game.high_bid == -1
    assert e.agent_selection == "player_0" and all(r == 0 for r in e.rewards.values())
    assert not any(e.terminations.values())


@pytest.mark.partnership
def test_redeal_in_a_hand_episode_keeps_the_episode_going():
    hands, nest = complete_deal({0: NO_COUNTER_HAND})
    e = rook_env.raw_env()
    e.reset(seed=1, options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "redeal")
    game = e.unwrapped.game
    assert game.phase == BID and game.dealer == 3 and game.deals == 2 and game.scores == [0, 0]
    assert not any(e.terminations.values())


@pytest.mark.partnership
def test_redeal_is_not_an_action_outside_the_auction():
    st = state_in_play({0: "R6 R7 R8 R9 R11 R12 R13 Y6 Y7"}, "black", nest="G6 G7 G8 G9 G11")
    assert st.phase == PLAY and not st.hands[0] & L.counter_mask
    assert not st.legal_mask() >> L.REDEAL & 1


# ------------------------------------------------------------------------------ nest and trump
@pytest.mark.partnership
def test_bidder_takes_nest_discards_five_then_names_trump():
    hands, nest = complete_deal({}, nest="R5 Y10 G14 B6 Rook")
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 0})
    step_text(e, "bid 70", "pass", "pass", "pass")  # player_1 wins
    game = e.unwrapped.game
    assert game.phase == DISCARD and e.agent_selection == "player_1"
    assert bits(game.hands[1]) == sorted(hands[1] + nest)
    # Any five cards under the default rule, counters and the Rook Bird included.
    assert bits(game.legal_mask()) == sorted(hands[1] + nest)
    for k, c in enumerate(["Rook", "R5", "Y10", hands[1][0], hands[1][1]]):
        assert game.phase == DISCARD
        e.step(c if isinstance(c, int) else L.parse_card(c))
    assert game.phase == TRUMP and e.agent_selection == "player_1"
    assert legal_names(e) == ["trump black", "trump green", "trump red", "trump yellow"]
    assert game.discards.bit_count() == 5 and game.hands[1].bit_count() == 9
    step_text(e, "trump green")
    assert game.phase == PLAY and game.trump == 2 and e.agent_selection == "player_1"  # left of dealer 0


@pytest.mark.partnership
def test_last_trick_takes_the_nest():
    """The discarded nest's counters go to whoever takes the ninth trick."""
    # DEAL_90_30 with counters in the nest: swap nest cards R6 R7 with the R5 R10 played in trick 1.
    e = rook_env.raw_env()
    deal = [({0: "R14", 1: "R6", 2: "R7", 3: "R8"}, 0)] + DEAL_90_30[1:]
    play_designed_hand(e, deal, 85, nest=NEST.replace("R6", "R5").replace("R7", "R10"))
    hand = e.infos["player_0"]["hand"]
    assert hand["last_trick_team"] == 0 and hand["counters"] == [90, 30]  # the nest's 15 came back
    e2 = rook_env.raw_env()
    deal2 = deal[:-1] + [({2: "G7", 3: "Rook", 0: "B6", 1: "B7"}, 3)]
    play_designed_hand(e2, deal2, 85, nest=NEST.replace("R6", "R5").replace("R7", "R10"))
    hand = e2.infos["player_0"]["hand"]
    assert hand["last_trick_team"] == 1 and hand["counters"] == [55, 65]  # Rook 20 + nest 15 to team 1


# ------------------------------------------------------------------------------ play rules
@pytest.mark.partnership
def test_rule1_follow_led_colour_or_rook():
    st = state_in_play({0: "R14", 1: "R5 R6 Y5 B14 Rook"}, "black")
    st.apply(L.parse_card("R14"))
    assert mask_names(st.legal_mask()) == ["R5", "R6", "Rook"]


@pytest.mark.partnership
def test_rule2_void_in_led_colour_may_play_anything():
    st = state_in_play({0: "R14", 1: "Y5 Y6 Y7 Y8 Y9 G5 G6 B5 B6"}, "black")
    st.apply(L.parse_card("R14"))
    assert bits(st.legal_mask()) == bits(st.hands[1])


@pytest.mark.partnership
def test_rule3_rook_may_be_led_and_played_any_time():
    st = state_in_play({0: "Rook R14 Y5"}, "black")
    assert L.rook in bits(st.legal_mask())  # leading
    st2 = state_in_play({0: "Y14", 1: "Y5 Rook"}, "black")
    st2.apply(L.parse_card("Y14"))
    assert L.rook in bits(st2.legal_mask())  # could follow, may still play the Rook


@pytest.mark.partnership
def test_rule4_led_rook_is_a_trump_lead():
    st = state_in_play({0: "Rook", 1: "G5 G6 B5 B14 R5 R6 R7 R8 R9", 2: "R10 R11 Y5 Y6 Y7 Y8 Y9 Y10 B6"}, "green")
    st.apply(L.rook)
    assert mask_names(st.legal_mask()) == ["G5", "G6"]  # must play trump (green), nothing else
    st.apply(L.parse_card("G5"))
    assert bits(st.legal_mask()) == bits(st.hands[2])  # no trump: anything
    st.apply(L.parse_card("B6"))
    st.apply(min(bits(st.legal_mask())))
    assert len(st.tricks) == 1 and st.leader == 0  # the led Rook wins


@pytest.mark.partnership
def test_rule5_trump_led_and_rook_only_trump_must_play_it():
    st = state_in_play({0: "B14", 1: "Rook R5 R6 Y5"}, "black")
    st.apply(L.parse_card("B14"))
    assert mask_names(st.legal_mask()) == ["Rook"]
    st2 = state_in_play({0: "B14", 1: "Rook B5 B6 R5"}, "black")
    st2.apply(L.parse_card("B14"))
    assert mask_names(st2.legal_mask()) == ["B5", "B6", "Rook"]


@pytest.mark.partnership
def test_no_other_card_may_be_played_when_following_is_possible():
    st = state_in_play({0: "G9", 1: "G5 B14 B13 R14"}, "black")  # trump black
    st.apply(L.parse_card("G9"))
    assert mask_names(st.legal_mask()) == ["G5"]  # a trump may not be played while holding green


@pytest.mark.partnership
@pytest.mark.parametrize(
    "trick,winner",
    [
        ("Y14 Y5 Rook Y10", 2),  # the Rook wins any trick it is in
        ("Y14 B5 Y13 B6", 3),  # the highest trump
        ("Y9 R14 Y13 G14", 2),  # no trump: the highest of the led colour, off-colour 14s do not win
        ("Rook B14 B13 B12", 0),  # a led Rook
        ("B5 Y14 R14 G14", 0),  # trump led, others cannot follow
        ("Y5 Y6 Y7 B5", 3),
    ],
)
def test_trick_winner(trick, winner):
    st = RookState()
    st.trump = 3
    assert st.trick_winner_index(ids(trick)) == winner


@pytest.mark.partnership
def test_winner_leads_next_trick_and_nine_tricks_are_played():
    e = rook_env.raw_env()
    play_designed_hand(e, DEAL_90_30, 85)
    game = e.unwrapped.game
    assert len(game.tricks) == 9
    leaders = [lead for lead, _ in game.tricks]
    assert leaders == [0, 0, 2, 2, 0, 3, 3, 2, 2]


# ------------------------------------------------------------------------------ game end
def _game_env(**flags):
    return rook_env.raw_env(episode="game", reward="win_loss", **flags)


@pytest.mark.partnership
def test_game_end_both_over_target_higher_wins():
    e = _game_env()
    play_designed_hand(e, DEAL_90_30, 85, scores=[255, 275])  # -> 345 vs 305
    game = e.unwrapped.game
    assert game.scores == [345, 305] and game.winner == 0 and game.phase == OVER
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": 1, "player_1": -1, "player_2": 1, "player_3": -1}
    assert e.infos["player_0"]["hand"]["game_winner"] == 0


@pytest.mark.partnership
def test_game_tie_at_target_plays_another_hand():
    e = _game_env()
    play_designed_hand(e, DEAL_90_30, 85, scores=[210, 270])  # -> 300 vs 300
    game = e.unwrapped.game
    assert game.scores == [300, 300] and game.winner == -1
    assert game.phase == BID and game.dealer == 0 and game.hands_played == 1  # dealer rotated
    assert not any(e.terminations.values())
    assert all(r == 0 for r in e.rewards.values())
    assert e.infos["player_0"]["hand"]["hand_scores"] == [90, 30]
    assert e.agent_selection == "player_1"  # bidding starts left of the new dealer
    assert e.unwrapped.decode("player_3").scores == (300, 300)


@pytest.mark.partnership
def test_game_won_by_the_defenders_even_when_they_did_not_bid():
    e = _game_env()
    play_designed_hand(e, DEAL_80_40, 85, scores=[250, 270])  # -85 / +40 -> 165 vs 310
    game = e.unwrapped.game
    assert game.scores == [165, 310] and game.winner == 1 and game.phase == OVER
    assert e.rewards["player_1"] == 1 and e.rewards["player_0"] == -1


@pytest.mark.partnership
def test_game_continues_below_target():
    e = _game_env()
    play_designed_hand(e, DEAL_90_30, 85, scores=[0, 0])
    game = e.unwrapped.game
    assert game.scores == [90, 30] and game.winner == -1 and game.phase == BID and game.dealer == 0


# ============================================================================== call-your-partner Rook
DEALS = [("full", 4, 5, 13), ("full", 5, 7, 10), ("full", 6, 3, 9),
         ("no_twos_to_fours", 4, 5, 10), ("no_twos_to_fours", 5, 5, 8), ("no_twos_to_fours", 6, 3, 7)]


def new_state(players=5, deck="full", dealer=None, hands=None, nest=None, scores=None, seed=0, **flags):
    st = CallPartnerState(CallPartnerConfig(players=players, deck=deck, **flags), seed=seed)
    st.new_game(dealer=dealer, hands=hands, nest=nest, scores=scores)
    return st


# ------------------------------------------------------------------------------- C2-C3 deck, deal
@pytest.mark.call_partner
@pytest.mark.parametrize("deck,players,nest,hand", DEALS)
def test_deal_sizes_per_player_count_and_deck(deck, players, nest, hand):
    """RULES.md C3.1: nest and hand sizes; every card dealt exactly once."""
    st = new_state(players, deck, seed=7)
    L = st.L
    assert L.n_cards == (57 if deck == "full" else 45)
    assert [h.bit_count() for h in st.hands] == [hand] * players
    assert st.nest.bit_count() == nest
    union = st.nest
    for h in st.hands:
        assert not union & h
        union |= h
    assert union == L.all_cards


@pytest.mark.call_partner
@pytest.mark.parametrize("deck,players,nest,hand", DEALS)
def test_deal_order_one_card_at_a_time_nest_after_the_first_rounds(deck, players, nest, hand):
    """RULES.md C3.2: clockwise from the dealer's left, a nest card after each of the first k rounds."""
    class NoShuffle(random.Random):
        def shuffle(self, x):  # the deck stays in id order
            pass

    st = CallPartnerState(CallPartnerConfig(players=players, deck=deck))
    st.rng = NoShuffle()
    st.new_game(dealer=2)
    expected_hands = [0] * players
    expected_nest = 0
    card = 0
    for rnd in range(hand):
        for i in range(1, players + 1):
            expected_hands[(2 + i) % players] |= 1 << card
            card += 1
        if rnd < nest:
            expected_nest |= 1 << card
            card += 1
    assert st.hands == expected_hands and st.nest == expected_nest
    assert st.current == 3 % players  # the auction opens left of the dealer


@pytest.mark.call_partner
@pytest.mark.parametrize("deck", ["full", "no_twos_to_fours"])
def test_counters_are_180_plus_20_for_the_last_trick(deck):
    """RULES.md C2.2: 1s 15, 14s and 10s 10, 5s 5, Rook 20; with the last trick 200 per hand."""
    L = layout_for(CallPartnerConfig(deck=deck))
    assert L.counter_points == 180 and L.total_points == 200
    assert L.card_points[L.parse_card("Y1")] == 15 and L.card_points[L.parse_card("Rook")] == 20
    assert L.card_points[L.parse_card("G13")] == 0
    if deck == "no_twos_to_fours":
        with pytest.raises(ValueError, match="unknown card"):
            L.parse_card("R3")


@pytest.mark.call_partner
def test_malformed_deals_are_refused():
    cfg = CallPartnerConfig(players=5)
    hands, nest = cp_deal(cfg)
    with pytest.raises(ValueError, match="must hold 5 lists"):
        new_state(hands=hands[:4] + [], nest=nest)
    with pytest.raises(ValueError, match="nest must hold 7 cards"):
        new_state(hands=hands, nest=nest[:5])
    bad = [list(h) for h in hands]
    bad[1][0] = bad[0][0]
    with pytest.raises(ValueError, match="dealt twice"):
        new_state(hands=bad, nest=nest)
    with pytest.raises(ValueError, match="dealer must be a seat 0..4"):
        new_state(dealer=5)
    with pytest.raises(ValueError, match="scores must be 5 integers"):
        new_state(scores=[0, 0])


# ------------------------------------------------------------------------------- config
@pytest.mark.call_partner
def test_config_validation_names_field_and_values():
    with pytest.raises(ValueError, match=r"players=3 is not allowed; allowed values: 4, 5, 6"):
        CallPartnerConfig(players=3)
    with pytest.raises(ValueError, match=r"deck='tournament' is not allowed; allowed values: full, no_twos_to_fours"):
        CallPartnerConfig(deck="tournament")
    with pytest.raises(ValueError, match="rook_rank.*does not apply"):
        make_config(rook_rank="low")
    with pytest.raises(ValueError, match="unknown call-your-partner flag"):
        make_config(player=5)
    with pytest.raises(ValueError, match="target_score=0 must be positive"):
        CallPartnerConfig(target_score=0)
    cfg = make_config()
    assert (cfg.players, cfg.deck, cfg.target_score, cfg.bids[0], cfg.bids[-1]) == (5, "full", 500, 100, 200)
    assert CallPartnerConfig(players=6).n_called == 2 and cfg.n_called == 1


# ------------------------------------------------------------------------------- C4 auction
@pytest.mark.call_partner
def test_auction_ends_when_all_but_one_passed_after_a_bid():
    """RULES.md C4.1-C4.2: pass is final, the auction ends when all but one have passed."""
    st = new_state(5, dealer=4)
    L = st.L
    st.apply(L.bid_action(100))  # seat 0
    st.apply(L.bid_action(120))  # seat 1
    st.apply(L.PASS)  # seat 2
    st.apply(L.PASS)  # seat 3
    st.apply(L.bid_action(125))  # seat 4
    st.apply(L.PASS)  # seat 0
    assert st.current == 1
    st.apply(L.bid_action(130))  # seat 1; seat 2 and 3 are skipped
    assert st.current == 4 and st.phase == cp.BID
    st.apply(L.PASS)
    assert st.phase == cp.DISCARD and st.bidder == 1 and L.bids[st.high_bid] == 130
    assert st.hands[1].bit_count() == L.hand_size + L.nest_size  # the nest is picked up


@pytest.mark.call_partner
def test_all_pass_dealer_stuck_at_the_minimum_and_max_bid_ends_at_once():
    """RULES.md C4.3: all pass -> the dealer's only bid is 100; a bid of 200 ends the auction."""
    st = new_state(6, dealer=0, no_counter_redeal="off")
    L = st.L
    for _ in range(5):
        st.apply(L.PASS)
    assert st.current == 0 and st.legal_actions() == [L.bid_action(100)]
    st.apply(L.bid_action(100))
    assert st.phase == cp.DISCARD and st.bidder == 0
    st = new_state(4, dealer=3)
    st.apply(st.L.bid_action(200))
    assert st.phase == cp.DISCARD and st.bidder == 0


@pytest.mark.call_partner
def test_no_counter_redeal_only_without_counters():
    """RULES.md C4.4: a player holding no counter may call a redeal on their own turn."""
    cfg = CallPartnerConfig(players=4, deck="no_twos_to_fours")
    L = layout_for(cfg)
    blanks = "R6 R7 R8 R9 R11 R12 R13 Y6 Y7 Y8"
    hands, nest = cp_deal(cfg, {0: blanks})
    st = new_state(4, "no_twos_to_fours", dealer=3, hands=hands, nest=nest)
    assert L.REDEAL in st.legal_actions()
    deals = st.deals
    st.apply(L.REDEAL)
    assert st.deals == deals + 1 and st.dealer == 3 and st.phase == cp.BID and st.current == 0
    st = new_state(4, "no_twos_to_fours", dealer=0, hands=hands, nest=nest)
    assert L.REDEAL not in st.legal_actions()  # seat 1 holds counters


# ------------------------------------------------------------------------------- C5-C6 nest, call
@pytest.mark.call_partner
def test_nest_counter_announcement_is_set_after_the_discard():
    """RULES.md C5.2: the same number of cards laid down; the table is told yes/no."""
    cfg = CallPartnerConfig(players=5)
    hands, nest = cp_deal(cfg, {0: "R5 R6 R7 R8 R9 R11 R12 R13 Y6 Y7"})
    st = new_state(5, dealer=4, hands=hands, nest=nest)
    scripted_setup(st, discards=cp_ids("R6 R7 R8 R9 R11 R12 R13", st.L))
    assert not st.nest_has_counters
    st = new_state(5, dealer=4, hands=hands, nest=nest)
    scripted_setup(st, discards=cp_ids("R5 R6 R7 R8 R9 R11 R12", st.L))
    assert st.nest_has_counters and st.discards.bit_count() == 7


@pytest.mark.call_partner
def test_phase_order_and_the_call_masks_out_the_bidders_own_cards():
    """RULES.md C6.1-C6.3: trump, Rook high or low, then the call of a card not in one's hand."""
    st = new_state(5, dealer=4, seed=3)
    L = st.L
    st.apply(L.bid_action(100))
    for _ in range(4):
        st.apply(L.PASS)
    nest_cards = bits_of(st.nest)
    for c in nest_cards:
        assert st.phase == cp.DISCARD
        st.apply(c)
    assert st.phase == cp.TRUMP and st.legal_mask() == L.trump_mask
    st.apply(L.parse_action("trump green"))
    assert st.phase == cp.ROOK and st.legal_actions() == [L.ROOK_HIGH, L.ROOK_LOW]
    st.apply(L.parse_action("rook low"))
    assert st.phase == cp.CALL
    legal = st.legal_mask()
    assert legal == L.all_cards & ~st.hands[0]
    assert all(legal >> c & 1 for c in nest_cards)  # own discards may be called (going alone)
    with pytest.raises(ValueError, match=r"illegal action .* phase 'call'; legal actions:"):
        st.apply(bits_of(st.hands[0])[0])
    target = bits_of(st.hands[2])[-1]
    st.apply(target)
    assert st.phase == cp.PLAY and st.called == [target] and st.partners == (2,)


@pytest.mark.call_partner
def test_german_discard_names_trump_first():
    st = new_state(4, dealer=3, nest_discard="no_counters_unless_forced", seed=5)
    L = st.L
    st.apply(L.bid_action(100))
    for _ in range(3):
        st.apply(L.PASS)
    assert st.phase == cp.TRUMP
    st.apply(L.TRUMP0 + 1)
    assert st.phase == cp.DISCARD
    assert not st.legal_mask() & L.counter_mask  # 18 cards: enough non-counters, non-trumps
    for _ in range(L.nest_size):
        st.apply(st.legal_actions()[0])
    assert st.phase == cp.ROOK


@pytest.mark.call_partner
def test_going_alone_when_the_called_card_is_in_the_nest():
    """RULES.md C6.4-C6.5: the bidder lays down the card it calls -> no partner; scores alone."""
    cfg = CallPartnerConfig(players=5)
    hands, nest = cp_deal(cfg, {0: "R1 R14 R10 Y1 Y14 G1 G14 B1 B14 Rook"})
    st = new_state(5, dealer=4, hands=hands, nest=nest)
    L = st.L
    discards = [c for c in bits_of(st.nest)[:6]] + [L.parse_card("R10")]
    scripted_setup(st, bid=120, discards=discards, trump=0, rook="high", called=[L.parse_card("R10")])
    assert st.partners == () and st.side == (0,)
    play_random(st, random.Random(1))
    r = st.hand_result
    assert r["alone"] and r["partners"] == [] and r["side"] == [0]
    p = st.points[0]
    assert r["side_points"] == p
    assert r["hand_scores"][0] == (p if p >= 120 else -120)
    assert r["hand_scores"][1:] == [200 - p] * 4


@pytest.mark.call_partner
@pytest.mark.parametrize("case", ["two", "one_holds_both", "both_in_nest"])
def test_two_called_cards_with_six_players(case):
    """RULES.md C6.3: six players call two different cards; both holders are partners, one
    partner when one player holds both, the bidder alone when both lie in the nest."""
    cfg = CallPartnerConfig(players=6)
    fixed = {0: "R6 R7 R8", 2: "Y1", 4: "G1"} if case == "two" else {0: "R6 R7 R8", 3: "Y1 G1"}
    hands, nest = cp_deal(cfg, fixed, nest="R9 R11 R12")
    st = new_state(6, dealer=5, hands=hands, nest=nest)
    L = st.L
    if case == "both_in_nest":
        called = cp_ids("R6 R7", L)
        discards = cp_ids("R6 R7 R8", L)
    else:
        called = cp_ids("Y1 G1", L)
        discards = None
    st.apply(L.bid_action(100))
    for _ in range(5):
        st.apply(L.PASS)
    for c in discards or bits_of(st.nest):
        st.apply(c)
    st.apply(L.TRUMP0)
    st.apply(L.ROOK_HIGH)
    st.apply(called[0])
    assert st.phase == cp.CALL and not st.legal_mask() >> called[0] & 1  # two different cards
    with pytest.raises(ValueError, match="illegal action"):
        st.apply(called[0])
    st.apply(called[1])
    assert st.phase == cp.PLAY and st.called == called
    expected = {"two": (2, 4), "one_holds_both": (3,), "both_in_nest": ()}[case]
    assert st.partners == expected
    play_random(st, random.Random(0))
    r = st.hand_result
    side = sorted({0, *expected})
    assert r["side"] == side and r["alone"] == (case == "both_in_nest")
    p = sum(st.points[s] for s in side)
    for s in range(6):
        assert r["hand_scores"][s] == ((p if p >= 100 else -100) if s in side else 200 - p)


# ------------------------------------------------------------------------------- C7 play
@pytest.mark.call_partner
def test_rook_high_and_low_and_a_led_rook_is_a_trump_lead():
    """RULES.md C6.2, C7.3: Rook high above the trump 1, Rook low below the lowest trump; a led
    Rook is a trump lead."""
    L = layout_for(CallPartnerConfig(players=4))
    R, c = L.rook, L.parse_card
    red = 0
    assert trick_winner_index(L, [c("R2"), R, c("R1"), c("Y14")], red, True) == 1
    assert trick_winner_index(L, [c("R2"), R, c("R1"), c("Y14")], red, False) == 2
    assert trick_winner_index(L, [c("Y1"), R, c("R2"), c("Y14")], red, False) == 2  # low Rook < trump 2
    assert trick_winner_index(L, [c("Y1"), R, c("G14"), c("Y14")], red, False) == 1  # still a trump
    assert trick_winner_index(L, [R, c("Y1"), c("G14"), c("Y14")], red, False) == 0  # led: trump lead
    assert trick_winner_index(L, [R, c("Y1"), c("R3"), c("Y14")], red, False) == 2
    L45 = layout_for(CallPartnerConfig(players=4, deck="no_twos_to_fours"))
    c45 = L45.parse_card
    assert trick_winner_index(L45, [c45("R5"), L45.rook, c45("G1")], 0, False) == 0  # below trump 5


@pytest.mark.call_partner
def test_the_rook_follows_trump_and_may_not_be_played_any_time():
    """RULES.md C7.1-C7.2: follow the led colour when able; the Rook counts as a trump."""
    cfg = CallPartnerConfig(players=4)
    hands, nest = cp_deal(cfg, {0: "Y5", 1: "Y6 Rook G5", 2: "R2 Y7", 3: "G6 G7"})
    st = new_state(4, dealer=3, hands=hands, nest=nest)
    L = st.L
    scripted_setup(st, trump=0, rook="high")  # trump red, seat 0 leads
    st.apply(L.parse_card("Y5"))
    assert st.legal_mask() == L.colour_mask[1] & st.hands[1]  # yellow only: no Rook
    st2 = new_state(4, dealer=3, hands=hands, nest=nest)
    scripted_setup(st2, trump=0, rook="high")
    st2.apply(st2.L.parse_card("Y5"))
    st2.apply(st2.L.parse_card("Y6"))
    st2.apply(st2.L.parse_card("Y7"))
    assert st2.legal_mask() == st2.hands[3]  # seat 3 holds no yellow: anything


# ------------------------------------------------------------------------------- C8 scoring
def oracle_points(st: CallPartnerState) -> list[int]:
    """Points per seat from the trick record, written from RULES.md C7.3 and C8.1."""
    L, n = st.L, st.n
    pts = [0] * n
    for k, (lead, cards) in enumerate(st.tricks):
        led = st.trump if cards[0] == L.rook else L.card_colour[cards[0]]

        def strength(c):
            if c == L.rook:
                return (1, 16 if st.rook_high else 1)
            if L.card_colour[c] == st.trump:
                return (1, 15 if L.card_rank[c] == 1 else L.card_rank[c])
            if L.card_colour[c] == led:
                return (0, 15 if L.card_rank[c] == 1 else L.card_rank[c])
            return (-1, 0)

        i = max(range(n), key=lambda j: strength(cards[j]))
        w = (lead + i) % n
        pts[w] += sum(L.card_points[c] for c in cards)
        if k == len(st.tricks) - 1:
            pts[w] += sum(L.card_points[c] for c in bits_of(st.discards)) + 20
    return pts


@pytest.mark.call_partner
@pytest.mark.parametrize("deck,players", [(d, p) for d, p, _, _ in [(x[0], x[1], 0, 0) for x in DEALS]])
def test_points_and_individual_scores_of_both_sides(deck, players):
    """RULES.md C8: 200 points per hand with the last trick's 20 and the nest; the side scores
    P or -bid each, each defender 200 - P. Made and set contracts are both covered."""
    seen = set()
    for seed in range(60):
        st = new_state(players, deck, seed=seed, scores=[10 * s for s in range(players)])
        if seed % 2:  # a cheap contract, so that some are made
            scripted_setup(st)
        play_random(st, random.Random(seed))
        r = st.hand_result
        assert sum(st.points) == 200
        assert st.points == oracle_points(st)
        w = st.last_trick_winner
        assert r["last_trick_winner"] == w and st.points[w] >= 20
        side = sorted({st.bidder, *st.partners})
        p = sum(st.points[s] for s in side)
        bid = r["bid"]
        for s in range(players):
            expect = (p if p >= bid else -bid) if s in side else 200 - p
            assert r["hand_scores"][s] == expect
            assert r["scores"][s] == 10 * s + expect
        seen.add(r["made"])
    assert seen == {True, False}


@pytest.mark.call_partner
def test_scoring_exact_numbers():
    """Bid 150 made with 160: +160 to the bidder and partner, +40 to each defender; set with 140:
    -150 each, +60 to each defender."""
    for side_pts, expect_side, expect_def in [(160, 160, 40), (140, -150, 60), (150, 150, 50)]:
        st = new_state(5, dealer=4, seed=1)
        L = st.L
        scripted_setup(st, bid=150)
        st.partners = (2,)  # the scoring does not depend on who holds what
        st.points = [side_pts - 10, 0, 10, 200 - side_pts, 0]
        st._finish_hand()
        assert st.hand_result["hand_scores"] == [expect_side, expect_def, expect_side, expect_def, expect_def]
        assert L.total_points == 200


# ------------------------------------------------------------------------------- C9 game end
@pytest.mark.call_partner
def test_game_to_500_and_a_tie_at_the_top_plays_on():
    """RULES.md C9: the highest total at or above 500 wins; a tie at the top plays another hand."""
    # Defenders 2, 3 and 4 start at 490: each scores 200 - P, so they tie at the top.
    for seed in range(20):
        st = new_state(5, dealer=4, seed=seed, scores=[0, 0, 490, 490, 490], episode="game")
        scripted_setup(st, called=[bits_of(st.hands[1])[0]])
        assert st.partners == (1,)
        rng = random.Random(seed)
        while st.hands_played == 0:
            st.apply(rng.choice(st.legal_actions()))
        r = st.hand_result
        if r["side_points"] <= 190:
            break
    top = r["scores"][2]
    assert top >= 500 and r["scores"][2:] == [top] * 3 and r["scores"][0] < top
    assert st.winner == -1 and r["game_winner"] == -1
    assert st.phase == cp.BID and st.dealer == 0 and st.deals == 2  # the next hand is dealt
    # A unique top at or above 500 wins.
    for seed in range(20):
        st = new_state(5, dealer=4, seed=seed, scores=[0, 0, 495, 0, 0], episode="game")
        scripted_setup(st, called=[bits_of(st.hands[1])[0]])
        play_random(st, random.Random(seed))
        if st.hand_result["side_points"] <= 195:
            break
    assert st.phase == cp.OVER and st.winner == 2 and st.hand_result["game_winner"] == 2


@pytest.mark.call_partner
def test_hand_episode_reports_the_game_winner_and_stops():
    st = new_state(4, dealer=3, seed=0, scores=[600, 0, 0, 0])
    play_random(st, random.Random(0))
    assert st.phase == cp.OVER
    top = max(st.scores)
    assert st.winner == (st.scores.index(top) if top >= 500 and st.scores.count(top) == 1 else -1)
    assert st.hand_result["game_winner"] == st.winner


@pytest.mark.call_partner
def test_clone_is_independent_and_to_dict_is_complete():
    st = new_state(6, seed=4)
    rng = random.Random(4)
    for _ in range(30):
        st.apply(rng.choice(st.legal_actions()))
    cl = st.clone()
    a = cl.legal_actions()[0]
    before = st.to_dict()
    cl.apply(a)
    assert st.to_dict() == before
    d = cl.to_dict()
    assert set(d) >= {"hands", "nest", "discards", "called", "partners", "rook", "scores", "bid_history"}
    st.apply(a)
    assert st.to_dict() == d


# ============================================================================== every game
# Each game's pure rules modules: its flags, its cards and action ids, its rules state.
PURE = per_game({"partnership": ("config", "cards", "rules"), "call_partner": ("config", "layout", "rules")})
CORE_PURE = ("deck", "flags", "rules")  # the shared trick-taking core's pure modules (rook_env.core)
STDLIB = {"__future__", "random", "typing", "dataclasses", "functools", "operator"}


def _imports(path: pathlib.Path):
    """(relative module or None, absolute module names) of every import of the file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            yield node.level, node.module
        elif isinstance(node, ast.Import):
            yield 0, [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            yield 0, [node.module]


@pytest.mark.parametrize("game", GAMES)
def test_rules_modules_import_only_the_standard_library(game):
    """A game's rules (config, cards or layout, rules) need no numpy or gymnasium: they import the standard
    library, each other and the pure modules of the shared trick-taking core (rook_env.core), which import
    the standard library and each other only."""
    folder = pathlib.Path(importlib.import_module(get_game(game).load("state").__module__).__file__).parent
    core = pathlib.Path(rook_env.__file__).parent / "core"
    for name in PURE[game]:
        for level, mods in _imports(folder / f"{name}.py"):
            if level:
                assert level == 1 and mods in PURE[game], f"{name}.py imports {'.' * level}{mods}"
                continue
            for m in mods:
                assert m.split(".")[0] in STDLIB or m in {f"rook_env.core.{c}" for c in CORE_PURE}, \
                    f"{name}.py imports {m}"
    for name in CORE_PURE:
        for level, mods in _imports(core / f"{name}.py"):
            if level:
                assert level == 1 and mods in CORE_PURE, f"core/{name}.py imports {'.' * level}{mods}"
            else:
                assert all(m.split(".")[0] in STDLIB for m in mods), f"core/{name}.py imports {mods}"
