"""Every configuration flag of RULES.md, each with a test that fails when the flag is ignored,
and the validation of flag names and values: the partnership game's (R1-R10, F1-F21) and the 2s flags of
call-your-partner Rook (RULES.md F17, F18 applied to section C: the black 2 takes a trick the Rook Bird
would win; the red 2 is the little rook, a trump above every other trump and under a high Rook Bird);
the 2s need the full deck in every game."""

import random

import numpy as np
import pytest
from helpers import (
    DEAL_75_45,
    DEAL_80_40,
    DEAL_90_30,
    L,
    complete_deal,
    cp_deal,
    cp_ids,
    ids,
    over_games,
    per_game,
    play_designed_hand,
    play_random,
    scripted_setup,
    state_in_play,
    step_text,
)

import rook_env
from rook_env.games import get_game
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.config import make_config as cp_make_config
from rook_env.games.call_partner.layout import layout_for as cp_layout_for
from rook_env.games.call_partner.rules import CallPartnerState, trick_winner_index
from rook_env.games.partnership.cards import bits, layout_for
from rook_env.games.partnership.config import CHOICES, FLAG_NAMES, RookConfig, make_config
from rook_env.games.partnership.rules import BID, DISCARD, OVER, PLAY, TRUMP, RookState

NO_COUNTER_HAND = "R6 R7 R8 R9 R11 R12 R13 Y6 Y7"


def legal_names(e):
    lay = e.unwrapped.layout
    m = e.observe(e.agent_selection)["action_mask"]
    return sorted(lay.action_name(int(a)) for a in m.nonzero()[0])


def mask_names(st):
    return sorted(st.L.action_name(a) for a in bits(st.legal_mask()))


# ------------------------------------------------------------------------------ validation
@pytest.mark.partnership
@pytest.mark.parametrize("flag", sorted(CHOICES))
def test_bad_enum_value_names_flag_and_allowed_values(flag):
    with pytest.raises(ValueError) as exc:
        rook_env.raw_env(**{flag: "bogus"})
    msg = str(exc.value)
    assert flag in msg and "bogus" in msg
    for allowed in CHOICES[flag]:
        assert allowed in msg


@pytest.mark.partnership
def test_unknown_flag_name_lists_known_flags():
    with pytest.raises(ValueError) as exc:
        rook_env.env(rook_rnak="high")
    msg = str(exc.value)
    assert "rook_rnak" in msg
    for name in FLAG_NAMES:
        assert name in msg


@pytest.mark.partnership
@pytest.mark.parametrize(
    "flags,name",
    [
        ({"target_score": 0}, "target_score"),
        ({"target_score": -300}, "target_score"),
        ({"target_score": "300"}, "target_score"),
        ({"bid_step": 0}, "bid_step"),
        ({"min_bid": 0}, "min_bid"),
        ({"min_bid": 100, "max_bid": 90}, "max_bid"),
        ({"min_bid": 70, "max_bid": 120, "bid_step": 15}, "bid_step"),
        ({"majority_tricks_bonus": -20}, "majority_tricks_bonus"),
        ({"last_trick_bonus": 2.5}, "last_trick_bonus"),
        ({"min_bid": True}, "min_bid"),
    ],
)
def test_bad_numeric_values(flags, name):
    with pytest.raises(ValueError, match=name):
        make_config(**flags)


@pytest.mark.partnership
def test_defaults_are_the_bold_values_of_rules_md():
    c = RookConfig()
    assert (c.target_score, c.min_bid, c.max_bid, c.bid_step) == (300, 70, 120, 5)
    assert (c.all_pass, c.no_counter_redeal, c.nest_discard, c.first_lead, c.rook_rank, c.deck) == (
        "dealer_forced", "on", "any", "left_of_dealer", "high", "tournament")
    assert (c.majority_tricks_bonus, c.last_trick_bonus) == (0, 0)
    assert make_config(no_counter_redeal=False).no_counter_redeal == "off"


# ------------------------------------------------------------------------------ target_score
@pytest.mark.partnership
def test_target_score_ends_the_game():
    e = rook_env.raw_env(episode="game", target_score=90)
    play_designed_hand(e, DEAL_90_30, 85)  # 90 vs 30
    assert e.unwrapped.game.winner == 0 and e.unwrapped.game.phase == OVER
    e = rook_env.raw_env(episode="game", target_score=95)
    play_designed_hand(e, DEAL_90_30, 85)
    assert e.unwrapped.game.winner == -1 and e.unwrapped.game.phase == BID


@pytest.mark.partnership
def test_target_score_scales_observed_scores():
    e = rook_env.raw_env(episode="game", target_score=500)
    e.reset(options={"scores": [250, -100]})
    ol = e.unwrapped.obs_layout
    obs = e.observe("player_1")["observation"]
    np.testing.assert_allclose(obs[ol.slices["scores"]], [-0.2, 0.5], rtol=1e-6)
    assert e.unwrapped.decode("player_0").scores == (250, -100)


# ------------------------------------------------------------------------------ bid bounds
@pytest.mark.partnership
def test_min_max_bid_step():
    e = rook_env.raw_env(min_bid=80, max_bid=100, bid_step=10)
    lay = e.unwrapped.layout
    assert lay.bids == (80, 90, 100) and lay.n_actions == 41 + 1 + 3 + 4 + 1
    assert e.action_space("player_0").n == lay.n_actions
    hands, nest = complete_deal({})  # player_0 and player_1 hold counters
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    assert legal_names(e) == sorted(["pass", "bid 80", "bid 90", "bid 100"])
    step_text(e, "bid 90")
    assert legal_names(e) == ["bid 100", "pass"]
    step_text(e, "bid 100")  # the maximum ends the auction at once
    assert e.unwrapped.game.phase == DISCARD and e.unwrapped.game.bidder == 1


@pytest.mark.partnership
def test_dealer_forced_bid_is_min_bid():
    hands, nest = complete_deal({})
    e = rook_env.raw_env(min_bid=85)
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "pass", "pass", "pass")
    assert legal_names(e) == ["bid 85"]


@pytest.mark.partnership
def test_max_bid_below_total_is_respected_by_the_mask():
    e = rook_env.raw_env(max_bid=100)
    e.reset(seed=1)
    names = legal_names(e)
    assert "bid 100" in names and not any(n in names for n in ("bid 105", "bid 120"))


# ------------------------------------------------------------------------------ all_pass
@pytest.mark.partnership
def test_all_pass_redeal_redeals_by_same_dealer():
    hands, nest = complete_deal({})
    e = rook_env.raw_env(all_pass="redeal", episode="game")
    e.reset(seed=2, options={"hands": hands, "nest": nest, "dealer": 2, "scores": [30, 60]})
    step_text(e, "pass", "pass")
    assert e.agent_selection == "player_1"
    step_text(e, "pass")  # the third pass with no bid: redeal at once, the dealer never bids
    game = e.unwrapped.game
    assert game.deals == 2 and game.dealer == 2 and game.scores == [30, 60] and game.phase == BID
    assert game.bid_history == [] and e.agent_selection == "player_3"
    assert game.hands != [sum(1 << c for c in h) for h in hands]
    assert all(r == 0 for r in e.rewards.values()) and not any(e.terminations.values())


@pytest.mark.partnership
def test_all_pass_redeal_still_lets_the_fourth_bid_after_a_bid():
    hands, nest = complete_deal({})
    e = rook_env.raw_env(all_pass="redeal")
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "pass", "pass", "bid 70", "pass")
    assert e.unwrapped.game.phase == DISCARD and e.unwrapped.game.bidder == 2


# ------------------------------------------------------------------------------ no_counter_redeal
@pytest.mark.partnership
@pytest.mark.parametrize("value,expect", [("on", True), ("off", False), (True, True), (False, False)])
def test_no_counter_redeal_flag(value, expect):
    hands, nest = complete_deal({0: NO_COUNTER_HAND})
    e = rook_env.raw_env(no_counter_redeal=value)
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    assert ("redeal" in legal_names(e)) is expect
    if not expect:
        with pytest.raises(ValueError):
            step_text(e, "redeal")


@pytest.mark.partnership
def test_no_counter_redeal_off_forced_dealer_has_only_the_minimum():
    hands, nest = complete_deal({3: NO_COUNTER_HAND})
    for value, expect in (("on", ["bid 70", "redeal"]), ("off", ["bid 70"])):
        e = rook_env.raw_env(no_counter_redeal=value)
        e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
        step_text(e, "pass", "pass", "pass")
        assert legal_names(e) == expect


# ------------------------------------------------------------------------------ nest_discard
def _bidder_with(cards14: str, flags):
    """player_0 (dealer 3) wins at 70 holding ``cards14`` after taking the nest (its last five)."""
    names = cards14.split()
    hands, nest = complete_deal({0: " ".join(names[:9])}, nest=" ".join(names[9:]), layout=L)
    e = rook_env.raw_env(**flags)
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "bid 70", "pass", "pass", "pass")
    return e


GERMAN = {"nest_discard": "no_counters_unless_forced"}


@pytest.mark.partnership
def test_german_discard_names_trump_first():
    e = _bidder_with("R6 R7 R8 G6 G7 G8 B6 B7 B8 Y6 Y7 Y8 Y9 R5", GERMAN)
    game = e.unwrapped.game
    assert game.phase == TRUMP and e.agent_selection == "player_0"
    assert legal_names(e) == ["trump black", "trump green", "trump red", "trump yellow"]
    step_text(e, "trump black")
    assert game.phase == DISCARD and e.agent_selection == "player_0"  # nobody acts in between
    # Non-counters only (non-counter trumps included): R5 may not be laid down.
    assert legal_names(e) == sorted("R6 R7 R8 G6 G7 G8 B6 B7 B8 Y6 Y7 Y8 Y9".split())
    step_text(e, "R6", "R7", "R8", "G6", "G7")
    assert game.phase == PLAY and not game.nest_has_counters
    for agent in e.agents:
        assert not e.unwrapped.decode(agent).nest_has_counters


@pytest.mark.partnership
def test_german_discard_counters_only_when_forced_and_announced():
    # Trump black; besides counters and trumps only Y6 and Y7.
    e = _bidder_with("Y6 Y7 B6 B7 R5 R10 R14 G5 G10 G14 B5 B10 B14 Rook", GERMAN)
    game = e.unwrapped.game
    step_text(e, "trump black")
    assert legal_names(e) == ["B6", "B7", "Y6", "Y7"]
    step_text(e, "Y6")
    with pytest.raises(ValueError, match="R5"):
        step_text(e, "R5")
    step_text(e, "Y7")
    # Every card left is a counter or a trump: now anything may be laid down.
    assert legal_names(e) == sorted("B6 B7 R5 R10 R14 G5 G10 G14 B5 B10 B14 Rook".split())
    for agent in e.agents:  # not announced before the discard is complete
        assert not e.unwrapped.decode(agent).nest_has_counters
    step_text(e, "R5", "R10", "B6")
    assert game.phase == PLAY and game.nest_has_counters
    for agent in e.agents:  # told to everyone that the nest holds counters, not which
        view = e.unwrapped.decode(agent)
        assert view.nest_has_counters
        if agent != "player_0":
            assert view.nest == [] and view.discards == []


@pytest.mark.partnership
def test_any_discard_allows_counters_and_announces_nothing():
    e = _bidder_with("Y6 Y7 B6 B7 R5 R10 R14 G5 G10 G14 B5 B10 B14 Rook", {})
    game = e.unwrapped.game
    assert game.phase == DISCARD  # discard first, trump after
    assert len(legal_names(e)) == 14
    step_text(e, "R5", "R10", "R14", "Rook", "B5", "trump green")
    assert game.phase == PLAY and not game.nest_has_counters
    assert not any(e.unwrapped.decode(a).nest_has_counters for a in e.agents)


@pytest.mark.partnership
def test_german_discard_with_other_trump_choice_changes_the_mask():
    # The restriction depends on the trump colour named first.
    e = _bidder_with("Y6 Y7 B6 B7 R5 R10 R14 G5 G10 G14 B5 B10 B14 Rook", GERMAN)
    step_text(e, "trump yellow")
    assert legal_names(e) == ["B6", "B7", "Y6", "Y7"]
    step_text(e, "B6", "B7")
    # Only yellow (trump) non-counters and counters left: counters may go now.
    assert len(legal_names(e)) == 12


# ------------------------------------------------------------------------------ first_lead
@pytest.mark.partnership
@pytest.mark.parametrize("first_lead,leader", [("left_of_dealer", 1), ("left_of_bidder", 3), ("bidder", 2)])
def test_first_lead(first_lead, leader):
    hands, nest = complete_deal({})
    e = rook_env.raw_env(first_lead=first_lead)
    e.reset(options={"hands": hands, "nest": nest, "dealer": 0})
    step_text(e, "pass", "bid 70", "pass", "pass")  # player_2 wins
    step_text(e, *[L.card_name(c) for c in nest], "trump red")
    game = e.unwrapped.game
    assert game.phase == PLAY and game.bidder == 2
    assert e.agent_selection == f"player_{leader}" and game.leader == leader
    assert e.unwrapped.decode("player_0").leader == leader


# ------------------------------------------------------------------------------ rook_rank
@pytest.mark.partnership
@pytest.mark.parametrize(
    "rank,trick,winner",
    [
        ("high", "B14 Rook B13 B12", 1),
        ("high", "B5 Rook Y5 Y6", 1),
        ("low", "B5 Rook Y5 Y6", 0),  # below the trump 5
        ("low", "Y14 Rook Y5 Y6", 1),  # still a trump: beats the led colour
        ("low", "Rook Y14 Y13 Y12", 0),  # led, nobody trumps
        ("low", "Rook Y14 B5 Y12", 2),
        ("ten_and_half", "B10 Rook B9 B8", 1),  # above the trump 10
        ("ten_and_half", "B11 Rook B5 B6", 0),  # below the trump 11
        ("ten_and_half", "R14 R13 Rook B10", 2),
    ],
)
def test_rook_rank_trick_winner(rank, trick, winner):
    st = RookState(RookConfig(rook_rank=rank))
    st.trump = 3
    assert st.trick_winner_index(ids(trick)) == winner


@pytest.mark.partnership
@pytest.mark.parametrize("rank", ["high", "low", "ten_and_half"])
def test_rook_rank_play_any_time_privilege_only_for_high(rank):
    cfg = RookConfig(rook_rank=rank)
    hand1 = "Y5 Rook R5 R6 R7 R8 R9 R10 R11"  # player_1's whole hand: one yellow, no green, no black
    st = state_in_play({0: "Y14", 1: hand1}, "black", config=cfg)
    st.apply(L.parse_card("Y14"))
    expect = ["Rook", "Y5"] if rank == "high" else ["Y5"]
    assert mask_names(st) == expect
    # Void in the led colour: anything, the Rook included, in every mode.
    st = state_in_play({0: "G14", 1: hand1}, "black", config=cfg)
    st.apply(L.parse_card("G14"))
    assert mask_names(st) == sorted(hand1.split())
    # Trump led: the Rook is a trump and the only one -> must be played; with other trumps, any.
    st = state_in_play({0: "B14", 1: hand1}, "black", config=cfg)
    st.apply(L.parse_card("B14"))
    assert mask_names(st) == ["Rook"]
    st = state_in_play({0: "B14", 1: hand1.replace("Y5", "B5")}, "black", config=cfg)
    st.apply(L.parse_card("B14"))
    assert mask_names(st) == ["B5", "Rook"]


@pytest.mark.partnership
def test_rook_rank_low_rook_trick_in_play():
    """Through a real trick: a low Rook loses to the trump 5."""
    cfg = RookConfig(rook_rank="low")
    # player_0 holds every black card but the B14 (in the nest): nobody else can trump.
    st = state_in_play({0: "B5 B6 B7 B8 B9 B10 B11 B12 B13", 1: "Rook"}, "black", nest="B14 G6 G7 G8 G9", config=cfg)
    st.apply(L.parse_card("B5"))
    assert mask_names(st) == ["Rook"]  # the only trump of player_1
    st.apply(L.rook)
    st.apply(min(bits(st.legal_mask())))
    st.apply(min(bits(st.legal_mask())))
    assert st.leader == 0 and st.points[0] >= 25 and st.points[1] == 0


# ------------------------------------------------------------------------------ deck
@pytest.mark.partnership
def test_full_deck_layout_and_counters():
    cfg = RookConfig(deck="full")
    lay = layout_for(cfg)
    assert lay.n_cards == 57 and lay.rook == 56 and lay.hand_size == 13 and lay.n_tricks == 13
    assert lay.total_points == 180
    assert [lay.card_points[lay.parse_card(n)] for n in ("R1", "Y1", "G5", "B10", "R14", "Rook", "B13")] == [
        15, 15, 5, 10, 10, 20, 0]
    assert cfg.bids == tuple(range(100, 181, 5))
    assert lay.n_actions == 57 + 1 + 17 + 4 + 1
    st = RookState(cfg)
    st.trump = 0
    assert st.trick_winner_index([lay.parse_card(n) for n in "Y14 Y1 Y13 Y2".split()]) == 1  # 1 above 14
    assert st.trick_winner_index([lay.parse_card(n) for n in "R2 Y1 R1 Rook".split()]) == 3
    # 1-High: a low Rook is the lowest trump, below the trump 2 too; ten_and_half sits below the 11.
    low = RookState(RookConfig(deck="full", rook_rank="low"))
    low.trump = 0
    assert low.trick_winner_index([lay.parse_card(n) for n in "Y14 Rook R2 Y1".split()]) == 2
    assert low.trick_winner_index([lay.parse_card(n) for n in "Y14 Rook Y1 Y13".split()]) == 1
    half = RookState(RookConfig(deck="full", rook_rank="ten_and_half"))
    half.trump = 0
    assert half.trick_winner_index([lay.parse_card(n) for n in "R10 Rook R2 R4".split()]) == 1
    assert half.trick_winner_index([lay.parse_card(n) for n in "R10 Rook R11 R1".split()]) == 3


@pytest.mark.partnership
def test_full_deck_hand():
    e = rook_env.raw_env(deck="full")
    e.reset(seed=4)
    game = e.unwrapped.game
    assert [h.bit_count() for h in game.hands] == [13] * 4 and game.nest.bit_count() == 5
    names = legal_names(e)
    assert "bid 100" in names and "bid 180" in names and "bid 95" not in names
    rng = random.Random(0)
    while not game.is_over:
        e.step(rng.choice(game.legal_actions()))
    res = game.hand_result
    assert len(game.tricks) == 13 and sum(res["counters"]) == 180
    assert res["bid"] in range(100, 181, 5)


@pytest.mark.partnership
def test_full_deck_fixed_deal_needs_thirteen_cards():
    e = rook_env.raw_env(deck="full")
    with pytest.raises(ValueError, match="13"):
        e.reset(options={"hands": [list(range(9))] * 4, "nest": [0, 1, 2, 3, 4]})


@pytest.mark.partnership
def test_one_high_partnership_variant():
    """deck=full, rook_rank=low, majority_tricks_bonus=20: bonus counted, 180 + 20 in all."""
    st = RookState(RookConfig(deck="full", rook_rank="low", majority_tricks_bonus=20), seed=9)
    st.new_game()
    for _ in play_random(st, random.Random(9)):
        pass
    res = st.hand_result
    assert sum(res["counters"]) == 180 and sorted(res["bonus"]) == [0, 20]
    assert res["bonus"][0 if res["tricks_won"][0] > res["tricks_won"][1] else 1] == 20


# ------------------------------------------------------------------------------ bonuses
@pytest.mark.partnership
def test_majority_tricks_bonus():
    e = rook_env.raw_env(majority_tricks_bonus=20)
    play_designed_hand(e, DEAL_90_30, 85)  # team 0 takes 7 of 9 tricks
    hand = e.infos["player_0"]["hand"]
    assert hand["tricks_won"] == [7, 2] and hand["bonus"] == [20, 0]
    assert hand["counters"] == [90, 30] and hand["hand_scores"] == [110, 30]


@pytest.mark.partnership
def test_majority_tricks_bonus_counts_toward_the_bid():
    """The implemented decision: bonuses join the bidding team's captured points when judging the bid."""
    plain = rook_env.raw_env()
    play_designed_hand(plain, DEAL_80_40, 85)
    assert plain.infos["player_0"]["hand"]["hand_scores"] == [-85, 40]
    e = rook_env.raw_env(majority_tricks_bonus=20)
    play_designed_hand(e, DEAL_80_40, 85)  # 80 + 20 >= 85
    hand = e.infos["player_0"]["hand"]
    assert hand["made"] and hand["hand_scores"] == [100, 40]


@pytest.mark.partnership
def test_last_trick_bonus():
    e = rook_env.raw_env(last_trick_bonus=20)
    play_designed_hand(e, DEAL_80_40, 85)  # team 0 takes the last trick: 80 + 20 makes 85
    hand = e.infos["player_0"]["hand"]
    assert hand["bonus"] == [20, 0] and hand["made"] and hand["hand_scores"] == [100, 40]
    e = rook_env.raw_env(last_trick_bonus=20)
    play_designed_hand(e, DEAL_75_45, 95)  # team 1 takes the last trick
    hand = e.infos["player_0"]["hand"]
    assert hand["bonus"] == [0, 20] and not hand["made"] and hand["hand_scores"] == [-95, 65]


@pytest.mark.partnership
def test_both_bonuses():
    e = rook_env.raw_env(last_trick_bonus=20, majority_tricks_bonus=20)
    play_designed_hand(e, DEAL_75_45, 95)  # team 0: 6 tricks; team 1: last trick
    hand = e.infos["player_0"]["hand"]
    assert hand["bonus"] == [20, 20] and hand["made"] and hand["hand_scores"] == [95, 65]


# ------------------------------------------------------------------------------ episode / reward
@pytest.mark.partnership
def test_episode_hand_vs_game():
    e = rook_env.raw_env()
    play_designed_hand(e, DEAL_90_30, 85)
    assert e.unwrapped.game.phase == OVER and all(e.terminations.values())
    e = rook_env.raw_env(episode="game")
    play_designed_hand(e, DEAL_90_30, 85)
    game = e.unwrapped.game
    assert game.phase == BID and game.hands_played == 1 and not any(e.terminations.values())
    assert game.scores == [90, 30] and game.dealer == 0


@pytest.mark.partnership
@pytest.mark.parametrize(
    "reward,episode,expect",
    [
        ("score_diff", "hand", (-125, 125)),
        ("team_score", "hand", (-85, 40)),
        ("win_loss", "hand", (-1, 1)),
        ("win_loss", "game", (0, 0)),  # the game goes on
        ("team_score", "game", (-85, 40)),
    ],
)
def test_reward_modes(reward, episode, expect):
    e = rook_env.raw_env(reward=reward, episode=episode)
    play_designed_hand(e, DEAL_80_40, 85)
    a, b = expect
    assert e.rewards == {"player_0": a, "player_1": b, "player_2": a, "player_3": b}
    assert e._cumulative_rewards == e.rewards


@pytest.mark.partnership
def test_win_loss_hand_is_the_sign_of_the_score_difference():
    e = rook_env.raw_env(reward="win_loss")
    play_designed_hand(e, DEAL_90_30, 85)
    assert e.rewards["player_0"] == 1 and e.rewards["player_3"] == -1


@pytest.mark.partnership
def test_win_loss_game_end():
    e = rook_env.raw_env(reward="win_loss", episode="game")
    play_designed_hand(e, DEAL_80_40, 85, scores=[250, 270])  # 165 vs 310
    assert e.rewards == {"player_0": -1, "player_1": 1, "player_2": -1, "player_3": 1}


@pytest.mark.partnership
def test_observation_size_follows_flags():
    default = rook_env.raw_env().observation_space("player_0")["observation"].shape
    full = rook_env.raw_env(deck="full").observation_space("player_0")["observation"].shape
    assert default == (583,)
    n, b = 57, 17
    assert full == (5 + n + 4 * b + 4 * (b + 1) + 4 + b + 4 + 4 + 4 * n + 4 * n + n + n + 1 + 2 + 2 + 1 + 2 + 4,)
    obs = rook_env.raw_env(deck="full")
    obs.reset(seed=0)
    assert obs.observe("player_0")["observation"].shape == full
    assert np.isfinite(obs.observe("player_0")["observation"]).all()


# ============================================================================== the 2s in every game
# Each game's deck without the 2s, and the flags of a table with the full deck.
SMALL_DECK = per_game({"partnership": [("tournament", {"deck": "full"})],
                       "call_partner": [("no_twos_to_fours", {})]})


@pytest.mark.parametrize("flag", ["black_two_trump", "red_two_little_rook"])
@pytest.mark.parametrize("game, small, full", over_games(SMALL_DECK))
def test_twos_need_the_full_deck(game, small, full, flag):
    make = get_game(game).load("config")
    with pytest.raises(ValueError, match=f"{flag}='on' needs deck='full'"):
        make(deck=small, **{flag: "on"})
    assert getattr(make(**full, **{flag: True}), flag) == "on"  # booleans as for every on/off flag
    with pytest.raises(ValueError, match=f"{flag}='maybe' is not allowed"):
        make(**full, **{flag: "maybe"})


# ============================================================================== call-your-partner Rook's 2s
RED, YELLOW, GREEN, BLACK = range(4)


def lay(**flags):
    return cp_layout_for(cp_make_config(players=4, **flags))


def winner(L, text, trump, rook_high=True):
    return trick_winner_index(L, cp_ids(text, L), trump, rook_high)


@pytest.mark.call_partner
def test_call_partner_black_two_takes_the_trick_the_rook_would_win():
    on, off = lay(black_two_trump="on"), lay()
    # Green trump, Rook high: the Rook would win; with the flag the black 2 takes it.
    assert winner(off, "G5 Rook B2 G1", GREEN) == 1
    assert winner(on, "G5 Rook B2 G1", GREEN) == 2
    # Rook low: the trump 1 wins, the Rook does not, so the black 2 takes nothing.
    assert winner(on, "G5 Rook B2 G1", GREEN, rook_high=False) == 3
    # Without the Rook in the trick the black 2 is a plain black 2 (the black 14 wins black).
    assert winner(on, "B5 B2 B14 R1", GREEN) == 2
    assert winner(on, "B5 B2 G2 R1", GREEN) == 2


@pytest.mark.call_partner
def test_call_partner_red_two_is_the_little_rook():
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


@pytest.mark.call_partner
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


@pytest.mark.call_partner
@pytest.mark.parametrize("seat1,legal_after_red_lead", [
    ("R2 R9", "R9"),  # holding a plain red card, the red 2 may not follow red
    ("R2 Y5", None),  # no plain red card: any card, the red 2 included
])
def test_play_mask_with_the_little_rook(seat1, legal_after_red_lead):
    cfg = cp_make_config(players=4, red_two_little_rook="on")
    L = cp_layout_for(cfg)
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


@pytest.mark.call_partner
@pytest.mark.parametrize("flag,forced", [("on", True), ("off", False)])
def test_german_discard_counts_the_little_rook_as_trump(flag, forced):
    # The bidder's non-counters are green (trump) and the red 2: with the little rook every
    # non-counter is a trump, so counters may go to the nest (F5 with F18); without it the red 2 is free.
    cfg = cp_make_config(players=4, red_two_little_rook=flag, nest_discard="no_counters_unless_forced")
    L = cp_layout_for(cfg)
    hands, nest = cp_deal(cfg, {1: "G2 G3 G4 G6 G7 G8 G9 G11 G12 G13 R2 R5 R10"}, "R14 R1 Y5 Y10 Rook")
    st = CallPartnerState(cfg)
    st.new_game(dealer=0, hands=hands, nest=nest)
    st.apply(L.bid_action(L.bids[0]))  # seat 1 bids, the others pass
    for _ in range(3):
        st.apply(L.PASS)
    st.apply(L.TRUMP0 + GREEN)  # trump before the discard (C5.1)
    hand = st.hands[1]
    assert st.legal_mask() == (hand if forced else hand & ~L.counter_mask)


@pytest.mark.call_partner
@pytest.mark.parametrize("players", [4, 5, 6])
def test_random_games_with_both_flags_keep_200_points_a_hand(players):
    cfg = CallPartnerConfig(players=players, black_two_trump="on", red_two_little_rook="on")
    for seed in range(20):
        st = CallPartnerState(cfg, seed=seed)
        st.new_game()
        play_random(st, random.Random(seed))
        assert sum(st.points) == 200
        assert st.hand_result["hand_scores"] == st.scores


@pytest.mark.call_partner
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
