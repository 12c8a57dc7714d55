"""Call-your-partner Rook (RULES.md section C): scenario tests of the rules state.

Each test names the rule it checks. Fixed deals are written with card names; the rest of the
deck is filled in id order (``call_partner_helpers.cp_deal``)."""

import random

import pytest
from helpers import bits_of, cp_deal, cp_ids, play_random, scripted_setup

from rook_env.games.call_partner.config import CallPartnerConfig, make_config
from rook_env.games.call_partner.layout import layout_for
from rook_env.games.call_partner.rules import (
    BID, CALL, DISCARD, OVER, PLAY, ROOK, TRUMP, CallPartnerState, trick_winner_index,
)

DEALS = [("full", 4, 5, 13), ("full", 5, 7, 10), ("full", 6, 3, 9),
         ("no_twos_to_fours", 4, 5, 10), ("no_twos_to_fours", 5, 5, 8), ("no_twos_to_fours", 6, 3, 7)]


def new_state(players=5, deck="full", dealer=None, hands=None, nest=None, scores=None, seed=0, **flags):
    st = CallPartnerState(CallPartnerConfig(players=players, deck=deck, **flags), seed=seed)
    st.new_game(dealer=dealer, hands=hands, nest=nest, scores=scores)
    return st


# ------------------------------------------------------------------------------- C2-C3 deck, deal
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
    assert st.current == 4 and st.phase == BID
    st.apply(L.PASS)
    assert st.phase == DISCARD and st.bidder == 1 and L.bids[st.high_bid] == 130
    assert st.hands[1].bit_count() == L.hand_size + L.nest_size  # the nest is picked up


def test_all_pass_dealer_stuck_at_the_minimum_and_max_bid_ends_at_once():
    """RULES.md C4.3: all pass -> the dealer's only bid is 100; a bid of 200 ends the auction."""
    st = new_state(6, dealer=0, no_counter_redeal="off")
    L = st.L
    for _ in range(5):
        st.apply(L.PASS)
    assert st.current == 0 and st.legal_actions() == [L.bid_action(100)]
    st.apply(L.bid_action(100))
    assert st.phase == DISCARD and st.bidder == 0
    st = new_state(4, dealer=3)
    st.apply(st.L.bid_action(200))
    assert st.phase == DISCARD and st.bidder == 0


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
    assert st.deals == deals + 1 and st.dealer == 3 and st.phase == BID and st.current == 0
    st = new_state(4, "no_twos_to_fours", dealer=0, hands=hands, nest=nest)
    assert L.REDEAL not in st.legal_actions()  # seat 1 holds counters


# ------------------------------------------------------------------------------- C5-C6 nest, call
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


def test_phase_order_and_the_call_masks_out_the_bidders_own_cards():
    """RULES.md C6.1-C6.3: trump, Rook high or low, then the call of a card not in one's hand."""
    st = new_state(5, dealer=4, seed=3)
    L = st.L
    st.apply(L.bid_action(100))
    for _ in range(4):
        st.apply(L.PASS)
    nest_cards = bits_of(st.nest)
    for c in nest_cards:
        assert st.phase == DISCARD
        st.apply(c)
    assert st.phase == TRUMP and st.legal_mask() == L.trump_mask
    st.apply(L.parse_action("trump green"))
    assert st.phase == ROOK and st.legal_actions() == [L.ROOK_HIGH, L.ROOK_LOW]
    st.apply(L.parse_action("rook low"))
    assert st.phase == CALL
    legal = st.legal_mask()
    assert legal == L.all_cards & ~st.hands[0]
    assert all(legal >> c & 1 for c in nest_cards)  # own discards may be called (going alone)
    with pytest.raises(ValueError, match=r"illegal action .* phase 'call'; legal actions:"):
        st.apply(bits_of(st.hands[0])[0])
    target = bits_of(st.hands[2])[-1]
    st.apply(target)
    assert st.phase == PLAY and st.called == [target] and st.partners == (2,)


def test_german_discard_names_trump_first():
    st = new_state(4, dealer=3, nest_discard="no_counters_unless_forced", seed=5)
    L = st.L
    st.apply(L.bid_action(100))
    for _ in range(3):
        st.apply(L.PASS)
    assert st.phase == TRUMP
    st.apply(L.TRUMP0 + 1)
    assert st.phase == DISCARD
    assert not st.legal_mask() & L.counter_mask  # 18 cards: enough non-counters, non-trumps
    for _ in range(L.nest_size):
        st.apply(st.legal_actions()[0])
    assert st.phase == ROOK


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
    assert st.phase == CALL and not st.legal_mask() >> called[0] & 1  # two different cards
    with pytest.raises(ValueError, match="illegal action"):
        st.apply(called[0])
    st.apply(called[1])
    assert st.phase == PLAY and st.called == called
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
    assert st.phase == BID and st.dealer == 0 and st.deals == 2  # the next hand is dealt
    # A unique top at or above 500 wins.
    for seed in range(20):
        st = new_state(5, dealer=4, seed=seed, scores=[0, 0, 495, 0, 0], episode="game")
        scripted_setup(st, called=[bits_of(st.hands[1])[0]])
        play_random(st, random.Random(seed))
        if st.hand_result["side_points"] <= 195:
            break
    assert st.phase == OVER and st.winner == 2 and st.hand_result["game_winner"] == 2


def test_hand_episode_reports_the_game_winner_and_stops():
    st = new_state(4, dealer=3, seed=0, scores=[600, 0, 0, 0])
    play_random(st, random.Random(0))
    assert st.phase == OVER
    top = max(st.scores)
    assert st.winner == (st.scores.index(top) if top >= 500 and st.scores.count(top) == 1 else -1)
    assert st.hand_result["game_winner"] == st.winner


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


def test_rules_modules_import_only_the_standard_library():
    """The call-your-partner rules (config, layout, rules) need no numpy or gymnasium; they reuse
    the pure card helpers of rook_env.games.partnership.cards and the shared trick-taking core (rook_env.core)."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "rook_env" / "call_partner"
    pure = {"config", "layout", "rules"}
    stdlib = {"__future__", "random", "typing", "dataclasses", "functools", "operator"}
    for name in pure:
        for node in ast.walk(ast.parse((root / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = node.module if node.level == 1 else f"..{node.module}"
                assert target in pure or target == "..cards" or target.startswith("..core."), f"{name}.py imports {target}"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                assert all(m.split(".")[0] in stdlib for m in mods), f"{name}.py imports {mods}"
