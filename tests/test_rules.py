"""The default rules of RULES.md: its worked examples as scenarios, the auction, the nest, the
play rules and scoring, driven by action id through the environment or the pure RookState."""

import random

import pytest
from helpers import (
    DEAL_75_45,
    DEAL_80_40,
    DEAL_90_30,
    DEAL_100_20,
    DEAL_105_15,
    NEST,
    L,
    complete_deal,
    deal_from_tricks,
    ids,
    play_designed_hand,
    play_tricks,
    state_in_play,
    step_text,
)

import rook_env
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
def test_deck_and_counters():
    assert L.n_cards == 41 and L.rook == 40 and L.hand_size == 9 and L.n_tricks == 9
    assert sorted(L.card_name(c) for c in bits(L.counter_mask)) == sorted(COUNTERS.split())
    assert sum(L.card_points) == L.total_points == 120
    assert [L.card_points[c] for c in ids("R5 Y10 G14 Rook B9 R11")] == [5, 10, 10, 20, 0, 0]


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


@pytest.mark.parametrize("opener", range(4))
def test_auction_ends_when_someone_bids_the_maximum(opener):
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": (opener + 3) % 4})
    step_text(e, "bid 120")
    game = e.unwrapped.game
    assert game.phase == DISCARD and game.bidder == opener and e.agent_selection == f"player_{opener}"
    assert len(game.bid_history) == 1


def test_auction_ends_after_three_passes_following_a_bid():
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "pass", "pass", "bid 70")
    assert e.unwrapped.game.phase == BID
    step_text(e, "pass")  # the third pass after a bid ends it: player_2 wins at 70
    game = e.unwrapped.game
    assert game.phase == DISCARD and game.bidder == 2 and L.bids[game.high_bid] == 70


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


def test_redeal_in_a_hand_episode_keeps_the_episode_going():
    hands, nest = complete_deal({0: NO_COUNTER_HAND})
    e = rook_env.raw_env()
    e.reset(seed=1, options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "redeal")
    game = e.unwrapped.game
    assert game.phase == BID and game.dealer == 3 and game.deals == 2 and game.scores == [0, 0]
    assert not any(e.terminations.values())


def test_redeal_is_not_an_action_outside_the_auction():
    st = state_in_play({0: "R6 R7 R8 R9 R11 R12 R13 Y6 Y7"}, "black", nest="G6 G7 G8 G9 G11")
    assert st.phase == PLAY and not st.hands[0] & L.counter_mask
    assert not st.legal_mask() >> L.REDEAL & 1


# ------------------------------------------------------------------------------ nest and trump
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
def test_rule1_follow_led_colour_or_rook():
    st = state_in_play({0: "R14", 1: "R5 R6 Y5 B14 Rook"}, "black")
    st.apply(L.parse_card("R14"))
    assert mask_names(st.legal_mask()) == ["R5", "R6", "Rook"]


def test_rule2_void_in_led_colour_may_play_anything():
    st = state_in_play({0: "R14", 1: "Y5 Y6 Y7 Y8 Y9 G5 G6 B5 B6"}, "black")
    st.apply(L.parse_card("R14"))
    assert bits(st.legal_mask()) == bits(st.hands[1])


def test_rule3_rook_may_be_led_and_played_any_time():
    st = state_in_play({0: "Rook R14 Y5"}, "black")
    assert L.rook in bits(st.legal_mask())  # leading
    st2 = state_in_play({0: "Y14", 1: "Y5 Rook"}, "black")
    st2.apply(L.parse_card("Y14"))
    assert L.rook in bits(st2.legal_mask())  # could follow, may still play the Rook


def test_rule4_led_rook_is_a_trump_lead():
    st = state_in_play({0: "Rook", 1: "G5 G6 B5 B14 R5 R6 R7 R8 R9", 2: "R10 R11 Y5 Y6 Y7 Y8 Y9 Y10 B6"}, "green")
    st.apply(L.rook)
    assert mask_names(st.legal_mask()) == ["G5", "G6"]  # must play trump (green), nothing else
    st.apply(L.parse_card("G5"))
    assert bits(st.legal_mask()) == bits(st.hands[2])  # no trump: anything
    st.apply(L.parse_card("B6"))
    st.apply(min(bits(st.legal_mask())))
    assert len(st.tricks) == 1 and st.leader == 0  # the led Rook wins


def test_rule5_trump_led_and_rook_only_trump_must_play_it():
    st = state_in_play({0: "B14", 1: "Rook R5 R6 Y5"}, "black")
    st.apply(L.parse_card("B14"))
    assert mask_names(st.legal_mask()) == ["Rook"]
    st2 = state_in_play({0: "B14", 1: "Rook B5 B6 R5"}, "black")
    st2.apply(L.parse_card("B14"))
    assert mask_names(st2.legal_mask()) == ["B5", "B6", "Rook"]


def test_no_other_card_may_be_played_when_following_is_possible():
    st = state_in_play({0: "G9", 1: "G5 B14 B13 R14"}, "black")  # trump black
    st.apply(L.parse_card("G9"))
    assert mask_names(st.legal_mask()) == ["G5"]  # a trump may not be played while holding green


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


def test_game_end_both_over_target_higher_wins():
    e = _game_env()
    play_designed_hand(e, DEAL_90_30, 85, scores=[255, 275])  # -> 345 vs 305
    game = e.unwrapped.game
    assert game.scores == [345, 305] and game.winner == 0 and game.phase == OVER
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": 1, "player_1": -1, "player_2": 1, "player_3": -1}
    assert e.infos["player_0"]["hand"]["game_winner"] == 0


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


def test_game_won_by_the_defenders_even_when_they_did_not_bid():
    e = _game_env()
    play_designed_hand(e, DEAL_80_40, 85, scores=[250, 270])  # -85 / +40 -> 165 vs 310
    game = e.unwrapped.game
    assert game.scores == [165, 310] and game.winner == 1 and game.phase == OVER
    assert e.rewards["player_1"] == 1 and e.rewards["player_0"] == -1


def test_game_continues_below_target():
    e = _game_env()
    play_designed_hand(e, DEAL_90_30, 85, scores=[0, 0])
    game = e.unwrapped.game
    assert game.scores == [90, 30] and game.winner == -1 and game.phase == BID and game.dealer == 0
