"""The heuristic agent of every game (the registry's ``heuristic`` spec): always legal over whole games, acts
on its observation only, plays by its documented rules in crafted situations, clearly beats random play.

The partnership game's HeuristicAgent: legal under every rule flag, blind to hidden cards, its crafted
situations and card counting, and act_batch chooses exactly what act chooses. Call-your-partner Rook's
CallPartnerHeuristic: bids, calls and plays by its documented rules, beats random play."""

from __future__ import annotations

import copy
import itertools
import random

import numpy as np
import pytest
from helpers import (
    GAMES,
    complete_deal,
    cp_deal,
    legal_mask_array,
    over_games,
    per_game,
    play_with_hidden_twins,
    scripted_setup,
)

import rook_env
from rook_env.agents import make_agent
from rook_env.agents.heuristic import HeuristicAgent
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic, measure
from rook_env.agents.random_agent import RandomAgent
from rook_env.games import get_game
from rook_env.games.call_partner import rules as cp
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.observation import encode as cp_encode
from rook_env.games.call_partner.rules import CallPartnerState
from rook_env.games.partnership.cards import bits, layout_for
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.observation import encode
from rook_env.games.partnership.rules import BID, DISCARD, OVER, PLAY, TRUMP, RookState

FLAG_VALUES = {
    "deck": ("tournament", "full"),
    "rook_rank": ("high", "low", "ten_and_half"),
    "nest_discard": ("any", "no_counters_unless_forced"),
    "first_lead": ("left_of_dealer", "left_of_bidder", "bidder"),
    "all_pass": ("dealer_forced", "redeal"),
    "no_counter_redeal": ("on", "off"),
    "majority_tricks_bonus": (0, 20),
    "last_trick_bonus": (0, 20),
}
ALL_COMBOS = [dict(zip(FLAG_VALUES, vals)) for vals in itertools.product(*FLAG_VALUES.values())]
EXTRA_FLAGS = [
    {"min_bid": 80, "max_bid": 100, "bid_step": 10},
    {"min_bid": 70, "max_bid": 70},
    {"deck": "full", "rook_rank": "low", "majority_tricks_bonus": 20},
    {"deck": "full", "min_bid": 120, "max_bid": 150, "bid_step": 15, "all_pass": "redeal"},
    {"episode": "game", "target_score": 150},
    {"target_score": 500, "reward": "team_score", "nest_discard": "no_counters_unless_forced"},
]


def strict_agent(seed=0, **flags) -> HeuristicAgent:
    ag = HeuristicAgent(seed=seed, **flags)
    ag.strict = True  # internal errors raise instead of falling back
    return ag


def play_hands(flags, n_hands, seed, mix_random=True):
    """Play ``n_hands`` through raw_env (which raises on an illegal action); heuristic seats
    alternate with random ones so that odd situations (random auctions, bad discards) occur."""
    e = rook_env.raw_env(**flags)
    heur = [strict_agent(seed=s, **flags) for s in range(4)]
    rnd = [RandomAgent(seed=seed * 10 + s) for s in range(4)]
    decisions = 0
    for h in range(n_hands):
        e.reset(seed=seed * 1000 + h)
        for a in heur:
            a.reset()
        g = e.game
        steps = 0
        while g.phase != OVER and steps < 2000:
            s = g.current
            obs = e.observe(e.agent_selection)
            use_heur = not mix_random or h % 3 == 0 or (s & 1) == h % 2
            ag = heur[s] if use_heur else rnd[s]
            a = ag.act(obs)
            assert obs["action_mask"][a] == 1
            e.step(a)
            decisions += use_heur
            steps += 1
    assert sum(a.fallbacks for a in heur) == 0, "the preferred action was illegal somewhere"
    return decisions


# ============================================================================ legality
@pytest.mark.partnership
@pytest.mark.parametrize("deck,rook_rank", list(itertools.product(FLAG_VALUES["deck"], FLAG_VALUES["rook_rank"])))
def test_always_legal_under_every_flag_combination(deck, rook_rank):
    combos = [f for f in ALL_COMBOS if f["deck"] == deck and f["rook_rank"] == rook_rank]
    total = 0
    for i, flags in enumerate(combos):
        total += play_hands(flags, n_hands=2, seed=i)
    assert total > 0


@pytest.mark.partnership
@pytest.mark.parametrize("flags", EXTRA_FLAGS)
def test_always_legal_with_bonuses_bid_ranges_and_games(flags):
    play_hands(flags, n_hands=6, seed=3)


@pytest.mark.partnership
def test_all_heuristic_tables_many_hands():
    for flags in ({}, {"nest_discard": "no_counters_unless_forced"}, {"rook_rank": "ten_and_half"},
                  {"deck": "full", "rook_rank": "low", "majority_tricks_bonus": 20}):
        play_hands(flags, n_hands=40, seed=7, mix_random=False)


@pytest.mark.partnership
def test_factory_and_protocol():
    ag = make_agent("heuristic", seed=3, deck="full")
    assert isinstance(ag, HeuristicAgent) and ag.config.deck == "full"
    e = rook_env.env(deck="full")
    e.reset(seed=0)
    ag.reset()
    a = ag.act(e.observe(e.agent_selection), None)
    assert isinstance(a, int) and e.observe(e.agent_selection)["action_mask"][a] == 1
    with pytest.raises(ValueError):
        ag.act({"observation": e.observe("player_0")["observation"], "action_mask": np.zeros(80, np.int8)})


@pytest.mark.partnership
def test_garbage_observation_falls_back_to_a_legal_action():
    ag = HeuristicAgent()
    mask = np.zeros(58, np.int8)
    mask[[41, 45]] = 1
    assert ag.act({"observation": np.zeros(583, np.float32), "action_mask": mask}) in (41, 45)
    mask = np.zeros(58, np.int8)
    mask[[3, 17]] = 1
    before = ag.fallbacks
    garbage = np.full(583, 0.7, np.float32)  # every entry set: a bid phase whose only legal actions are cards
    assert ag.act({"observation": garbage, "action_mask": mask}) in (3, 17)
    assert ag.fallbacks == before + 1
    assert ag.act_batch(garbage[None], mask[None]).tolist() in ([3], [17])
    assert ag.fallbacks == before + 2


# ============================================================================ no peeking
@pytest.mark.partnership
@pytest.mark.parametrize("flags", [{}, {"nest_discard": "no_counters_unless_forced", "deck": "full"},
                                   {"rook_rank": "low", "first_lead": "bidder"}])
def test_choices_do_not_depend_on_hidden_cards(flags):
    rng = random.Random(5)
    agents = [strict_agent(seed=s, **flags) for s in range(4)]
    count = {"checked": 0, "changed": 0}

    def check(st, me, obs, other, obs2):
        count["changed"] += other.hands != st.hands or other.nest != st.nest or other.discards != st.discards
        # the seat's observation is the same; so must the agent's choice be, both for a
        # fresh agent and for one carrying what it remembered from this hand
        assert np.array_equal(obs["observation"], obs2["observation"])
        assert np.array_equal(obs["action_mask"], obs2["action_mask"])
        twins = [copy.deepcopy(agents[me]) for _ in range(3)]
        fresh1, fresh2 = strict_agent(seed=9, **flags), strict_agent(seed=9, **flags)
        assert fresh1.act(obs) == fresh2.act(obs2)
        a = agents[me].act(obs)
        assert twins[0].act(obs2) == a
        # act_batch too, with the same memory (act's, without keys)
        for twin, o in ((twins[1], obs), (twins[2], obs2)):
            assert twin.act_batch(o["observation"][None], o["action_mask"][None]).tolist() == [a]
        count["checked"] += 1
        return a

    play_with_hidden_twins(make_config(**flags), agents, 20, rng, 0.4, check)
    assert count["checked"] > 50 and count["changed"] > 0.8 * count["checked"]


# ============================================================================ crafted situations
L = layout_for(make_config())


def state_at(fixed, trump, plays="", bidder=0, nest="", config=None):
    """Dealer 3: seat 0 bids first and leads. ``bidder`` bids the minimum, the others pass, the
    bidder lays the nest down again and names ``trump``; then ``plays`` (card names) are played."""
    cfg = config or make_config()
    Lc = layout_for(cfg)
    hands, nest_ids = complete_deal(fixed, nest, Lc)
    st = RookState(cfg)
    st.new_game(dealer=3, hands=hands, nest=nest_ids)
    while st.phase == BID:
        st.apply(Lc.BID0 if st.current == bidder else Lc.PASS)
    assert st.bidder == bidder
    setup = nest_ids + [Lc.parse_action(f"trump {trump}")]
    if cfg.nest_discard == "no_counters_unless_forced":
        setup = setup[-1:] + setup[:-1]
    for a in setup:
        st.apply(a)
    for name in plays.split():
        st.apply(Lc.parse_card(name))
    return st


def choose(st, flags=None) -> str:
    flags = flags or {}
    ag = strict_agent(**flags)
    me = st.current
    a = ag.act({"observation": encode(st, me), "action_mask": legal_mask_array(st)})
    return st.L.action_name(a)


# Crafted play situations (dealer 3, seat 0 leads; seat 0 bids unless ``bidder`` says otherwise): the hands,
# trump, the cards played so far, the seat that decides, the cards it may choose.
CRAFTED = {
    # seat 0 leads Y7, partner (seat 1) Y11, seat 2 Y6; seat 3 holds Y13 and Y8 (Y14 unseen).
    "does_not_overtake_a_winning_partner_when_last": (
        {0: "Y7", 1: "Y11", 2: "Y6 Y14 Rook", 3: "Y13 Y8 R6 R7 G6 G7 G8 B6 B7"}, "Y7 Y11 Y6", 0, 3, ("Y8",)),
    "plays_lowest_winning_card_when_last": (
        {0: "G6", 1: "G7", 2: "G9", 3: "G11 G12 G13 R6 R7 Y6 Y7 B6 B7"}, "G6 G7 G9", 0, 3, ("G11",)),
    "ruffs_a_counter_trick_with_the_lowest_trump_when_last": (
        {0: "G14", 1: "G6", 2: "G7", 3: "B6 B13 R6 R7 R8 Y6 Y7 Y8 Y9"}, "G14 G6 G7", 0, 3, ("B6",)),
    # partner (seat 1) plays the Rook Bird (highest, cannot be beaten): seat 3 throws its 10.
    "feeds_a_counter_to_a_partner_who_is_sure_to_win": (
        {0: "Y7", 1: "Rook", 2: "Y8", 3: "Y10 Y6 R6 R7 G6 G7 G8 B6 B7"}, "Y7 Rook Y8", 0, 3, ("Y10",)),
    # seat 2 wins with the Rook Bird; seat 3 cannot follow green and keeps its counters.
    "throws_off_a_non_counter_to_an_opponents_trick": (
        {0: "G6", 1: "G7", 2: "Rook", 3: "R10 R5 R6 Y14 Y9 B10 B6 B7 B8"}, "G6 G7 Rook", 0, 3, ("R6", "Y9")),
    # seat 0 (an opponent of seat 1) leads G6; seat 1 holds G13 (G14 unseen) and G7.
    "second_hand_low": ({0: "G6", 1: "G13 G7 R6 R7 Y6 Y7 B6 B7 B8", 2: "G14"}, "G6", 0, 1, ("G7",)),
    "bidder_pulls_trumps": ({0: "B14 B13 B12 B11 Rook B9 R14 Y6 G6", 1: "B5 B6", 3: "B7 B10"}, "", 0, 0,
                            ("B14", "B13", "B12", "B11", "Rook", "B9")),
    # seat 0 is a defender (seat 1 bid) and leads trick one (left of the dealer); it holds Y14 and the Rook
    # Bird, so Y14 can only be beaten by a player already void in yellow
    "cashes_a_sure_side_winner_as_defender": (
        {0: "Y14 Y6 R6 R7 G6 G7 G8 B6 Rook", 1: "B14 B13 B12 B11"}, "", 1, 0, ("Y14",)),
}


@pytest.mark.partnership
@pytest.mark.parametrize("fixed, plays, bidder, seat, choices", CRAFTED.values(), ids=CRAFTED.keys())
def test_crafted_play_situation(fixed, plays, bidder, seat, choices):
    st = state_at(fixed, "black", plays, bidder=bidder)
    assert st.current == seat
    assert choose(st) in choices


@pytest.mark.partnership
def test_discard_creates_a_void_and_keeps_trumps():
    # seat 0 will hold 14 cards: six black trumps, the Rook Bird, R14 R13, Y6 Y7, G6 G8 G9.
    hands, nest = complete_deal({0: "B14 B13 B12 B11 B9 B8 Rook R14 R13", 1: "Y14 G14"}, nest="Y6 Y7 G6 G8 G9")
    for flags in ({}, {"nest_discard": "no_counters_unless_forced"}):
        cfg = make_config(**flags)
        st = RookState(cfg)
        st.new_game(dealer=3, hands=hands, nest=nest)
        st.apply(L.BID0)
        for _ in range(3):
            st.apply(L.PASS)
        ag = strict_agent(**flags)
        while st.phase in (DISCARD, TRUMP):
            st.apply(ag.act({"observation": encode(st, 0), "action_mask": legal_mask_array(st)}))
        assert st.trump == 3  # black
        kept = st.hands[0]
        assert not kept & L.colour_mask[1], "yellow should be void"
        assert kept & L.colour_mask[3] == L.colour_mask[3] & sum(1 << c for c in hands[0])
        assert kept & L.rook_bit


@pytest.mark.partnership
def test_dealer_forced_bid_and_redeal():
    # the three others pass; the dealer (seat 3) must bid the minimum
    hands, nest = complete_deal({3: "R14 R13 B6 B7 B8 Y6 Y7 G6 G7"})
    st = RookState(make_config())
    st.new_game(dealer=3, hands=hands, nest=nest)
    for _ in range(3):
        st.apply(L.PASS)
    assert st.current == 3
    assert choose(st) == "bid 70"
    # a hand without a counter: weak, so the dealer calls a redeal when that is allowed
    weak = "R6 R7 R8 Y6 Y7 G6 G7 B6 B7"
    for flag, expected in (("on", "redeal"), ("off", "bid 70")):
        cfg = make_config(no_counter_redeal=flag)
        hands, nest = complete_deal({3: weak})
        st = RookState(cfg)
        st.new_game(dealer=3, hands=hands, nest=nest)
        for _ in range(3):
            st.apply(L.PASS)
        assert choose(st, {"no_counter_redeal": flag}) == expected


@pytest.mark.partnership
def test_bidding_strong_weak_and_partner():
    strong = "B14 B13 B12 B11 B10 Rook R14 Y14 G14"
    weak = "R6 R7 R9 Y6 Y8 G6 G7 B5 B8"
    for hand, should_bid in ((strong, True), (weak, False)):
        hands, nest = complete_deal({0: hand})
        st = RookState(make_config())
        st.new_game(dealer=3, hands=hands, nest=nest)
        a = choose(st)
        assert a.startswith("bid") if should_bid else a == "pass"
    # partner (seat 0) holds the bid at 100: seat 2 with a fair hand passes rather than overcall
    hands, nest = complete_deal({2: "R14 R13 R12 R11 R6 Y6 G6 B6 B7"})
    st = RookState(make_config())
    st.new_game(dealer=3, hands=hands, nest=nest)
    st.apply(L.parse_action("bid 100"))
    st.apply(L.PASS)
    assert st.current == 2
    assert choose(st) == "pass"


# ============================================================================ strength
def _duplicate_vs_random(n_deals, flags, seed=0):
    """Mean (heuristic team score - random team score) per hand over duplicate deals."""
    e = rook_env.raw_env(**flags)
    diffs = []
    for d in range(n_deals):
        st = RookState(e.config, seed=seed * 7919 + d)
        st.new_game(dealer=d % 4)
        opts = {"hands": [bits(h) for h in st.hands], "nest": bits(st.nest), "dealer": d % 4}
        for heur_team in (0, 1):
            agents = [
                strict_agent(seed=d * 4 + s, **flags) if (s & 1) == heur_team else RandomAgent(seed=d * 4 + s)
                for s in range(4)
            ]
            e.reset(seed=d, options=opts)
            while e.game.phase != OVER:
                s = e.game.current
                e.step(agents[s].act(e.observe(e.agent_selection)))
            hs = e.infos["player_0"]["hand"]["hand_scores"]
            diffs.append(hs[heur_team] - hs[1 - heur_team])
    return float(np.mean(diffs))


@pytest.mark.partnership
@pytest.mark.parametrize("flags,margin", [({}, 120.0), ({"deck": "full", "rook_rank": "low"}, 150.0)])
def test_beats_random_clearly(flags, margin):
    # measured means are far higher (about +185 per hand in the default game); the deals and
    # agents are seeded, so this cannot flake
    assert _duplicate_vs_random(30, flags) > margin


# ============================================================================ card counting
def _shown_voids(st: RookState, me: int) -> list[int]:
    """Voids (effective-suit bits by seat relative to ``me``) shown by failures to follow so far."""
    L_ = st.L
    rook_high = st.config.rook_rank == "high"
    T = st.trump
    tricks = [cards for _, cards in st.tricks] + ([tuple(st.trick)] if st.trick else [])
    leaders = [lead for lead, _ in st.tricks] + ([st.leader] if st.trick else [])
    out = [0, 0, 0, 0]

    def eff(c):
        return T if c == L_.rook else L_.card_colour[c]

    for lead, cards in zip(leaders, tricks):
        s = eff(cards[0])
        for i, c in enumerate(cards[1:], 1):
            if eff(c) != s and not (rook_high and c == L_.rook):
                out[((lead + i) - me) % 4] |= 1 << s
    return out


@pytest.mark.partnership
@pytest.mark.parametrize("flags", [{}, {"rook_rank": "low"}, {"deck": "full", "rook_rank": "ten_and_half"}])
def test_void_inference_matches_the_tricks(flags):
    cfg = make_config(**flags)
    for h in range(6):
        st = RookState(cfg, seed=100 + h)
        st.new_game()
        agents = [strict_agent(seed=s, **flags) for s in range(4)]
        while not st.is_over:
            me = st.current
            obs = {"observation": encode(st, me), "action_mask": legal_mask_array(st)}
            a = agents[me].act(obs)
            if st.phase == PLAY:
                truth = _shown_voids(st, me)
                after = st.hands[me] & ~(1 << a)
                if after:  # the agent remembers what it inferred, keyed by its next hand
                    memory = agents[me]._memory[after]
                    assert list(memory.voids[1:]) == truth[1:]
            st.apply(a)


@pytest.mark.partnership
def test_one_instance_can_serve_several_seats():
    """Memory is keyed by the seat's own hand, so sharing an instance changes nothing."""
    flags = {}
    cfg = make_config(**flags)
    for h in range(4):
        st1 = RookState(cfg, seed=h)
        st1.new_game()
        st2 = st1.clone()
        shared = strict_agent(seed=1)
        own = [strict_agent(seed=1) for _ in range(4)]
        while not st1.is_over:
            me = st1.current
            a1 = shared.act({"observation": encode(st1, me), "action_mask": legal_mask_array(st1)})
            a2 = own[me].act({"observation": encode(st2, me), "action_mask": legal_mask_array(st2)})
            assert a1 == a2
            st1.apply(a1)
            st2.apply(a2)


# ============================================================================ act_batch
def _lockstep(flags, n_tables, n_steps, seed, heuristic_seats=(0, 1, 2, 3)):
    """Tables stepped together: act_batch (keys = table * 4 + seat) decides the rows of every table
    whose current seat is a heuristic one; a scalar agent per table decides the same rows with act.
    Other seats play randomly. Yields (batch actions, act actions, phases) per step."""
    cfg = make_config(**flags)
    rng = random.Random(seed)
    tables = []
    for t in range(n_tables):
        st = RookState(cfg, seed=seed * 1000 + t)
        st.new_game()
        tables.append(st)
    scalar = [strict_agent(**flags) for _ in range(n_tables)]
    batch = strict_agent(seed=123, **flags)
    for _ in range(n_steps):
        rows = [t for t, st in enumerate(tables) if st.current in heuristic_seats]
        obs = np.array([encode(tables[t], tables[t].current) for t in rows], np.float32).reshape(len(rows), -1)
        masks = np.array([legal_mask_array(tables[t]) for t in rows], np.int8).reshape(len(rows), -1)
        keys = np.array([t * 4 + tables[t].current for t in rows], np.int64)
        got = batch.act_batch(obs, masks, keys) if rows else np.zeros(0, np.int64)
        assert got.dtype == np.int64 and got.shape == (len(rows),)
        want = [scalar[t].act({"observation": obs[i], "action_mask": masks[i]}) for i, t in enumerate(rows)]
        yield got.tolist(), want, [tables[t].phase for t in rows]
        chosen = dict(zip(rows, want))
        for t, st in enumerate(tables):
            if t in chosen and rng.random() < 0.8:
                st.apply(chosen[t])
            else:
                st.apply(rng.choice(st.legal_actions()))
            if st.is_over:
                st.new_game()
    assert batch.fallbacks == 0 and sum(a.fallbacks for a in scalar) == 0


@pytest.mark.partnership
@pytest.mark.parametrize("flags,seats", [
    ({}, (0, 1, 2, 3)),
    ({}, (0, 2)),
    ({"deck": "full", "rook_rank": "low", "nest_discard": "no_counters_unless_forced"}, (0, 1, 2, 3)),
    ({"rook_rank": "ten_and_half", "majority_tricks_bonus": 20, "last_trick_bonus": 20}, (1, 3)),
    ({"deck": "full", "first_lead": "bidder", "all_pass": "redeal", "no_counter_redeal": "on"}, (0, 1, 2, 3)),
])
def test_act_batch_chooses_exactly_what_act_chooses(flags, seats):
    decisions = {BID: 0, DISCARD: 0, TRUMP: 0, PLAY: 0}
    for got, want, phases in _lockstep(flags, n_tables=24, n_steps=160, seed=len(decisions) + len(seats),
                                       heuristic_seats=seats):
        assert got == want
        for ph in phases:
            decisions[ph] += 1
    assert decisions[PLAY] > 1000 and min(decisions.values()) > 0, decisions


@pytest.mark.partnership
def test_act_batch_without_keys_continues_act_memory():
    """Without keys the rows use act's memory (filed by hand): one table's decisions, alternately
    through act and act_batch, equal those of an agent that only uses act."""
    cfg = make_config()
    for h in range(6):
        st = RookState(cfg, seed=300 + h)
        st.new_game()
        mixed, plain = strict_agent(), strict_agent()
        i = 0
        while not st.is_over:
            obs = {"observation": encode(st, st.current), "action_mask": legal_mask_array(st)}
            want = plain.act(obs)
            if i % 2:
                got = mixed.act(obs)
            else:
                got = int(mixed.act_batch(obs["observation"][None], obs["action_mask"][None])[0])
            assert got == want
            st.apply(want)
            i += 1


@pytest.mark.partnership
def test_act_batch_is_deterministic_and_ignores_the_seed():
    """No random tie-breaks: agents with different seeds choose the same actions."""
    runs = []
    for seed in (0, 1):
        cfg = make_config()
        st = RookState(cfg, seed=9)
        st.new_game()
        agent = HeuristicAgent(seed=seed)
        actions = []
        while not st.is_over:
            a = int(agent.act_batch(encode(st, st.current)[None], legal_mask_array(st)[None], keys=[st.current])[0])
            actions.append(a)
            st.apply(a)
        runs.append(actions)
    assert runs[0] == runs[1]


@pytest.mark.partnership
def test_act_batch_rejects_bad_input():
    ag = HeuristicAgent()
    obs = np.zeros((2, 583), np.float32)
    masks = np.zeros((2, 58), np.int8)
    masks[:, 41] = 1
    with pytest.raises(ValueError, match="observations have shape"):
        ag.act_batch(obs[:, :500], masks)
    with pytest.raises(ValueError, match="masks have shape"):
        ag.act_batch(obs, masks[:1])
    bad = masks.copy()
    bad[1] = 0
    with pytest.raises(ValueError, match=r"rows \[1\] have an empty action mask"):
        ag.act_batch(obs, bad)
    with pytest.raises(ValueError, match="distinct"):
        ag.act_batch(obs, masks, keys=[3, 3])
    with pytest.raises(ValueError, match="keys must be 2 integers"):
        ag.act_batch(obs, masks, keys=[0.5, 1.5])
    assert ag.act_batch(obs, masks, keys=[0, 1]).tolist() == [41, 41]


# ============================================================================ every game
# Tables at which each game's heuristic plays whole games through the checked env (an illegal action would end
# the episode with an "illegal_action" info).
WHOLE_GAMES = per_game({
    "partnership": [{}, {"episode": "game", "deck": "full", "rook_rank": "low", "max_hands": 4}],
    "call_partner": [
        {"players": 4, "max_hands": 4}, {"players": 5, "max_hands": 4}, {"players": 6, "max_hands": 4},
        {"players": 5, "deck": "no_twos_to_fours", "nest_discard": "no_counters_unless_forced", "episode": "game",
         "max_hands": 4},
    ],
})


def _heuristic(game: str, **flags):
    return make_agent(get_game(game).heuristic, game=game, **{k: v for k, v in flags.items() if k != "max_hands"})


@pytest.mark.parametrize("game, flags", over_games(WHOLE_GAMES))
def test_always_legal_over_whole_games(game, flags):
    e = rook_env.env(game=game, **flags)
    agent = _heuristic(game, **flags)  # one instance serves every seat
    for seed in range(3):
        e.reset(seed=seed)
        for name in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            a = agent.act(obs)
            assert obs["action_mask"][a] == 1
            e.step(a)
        assert not any("illegal_action" in i for i in e.infos.values())


# Whether the game's heuristic keeps no memory between decisions (the partnership game's remembers its plan
# for the discard and what it has counted).
MEMORYLESS = per_game({"partnership": False, "call_partner": True})


@pytest.mark.parametrize("game", GAMES)
def test_acts_on_its_observation_only(game):
    """The same observation (a copy) gives the same action from an agent with the same memory; a memoryless
    agent gives it again."""
    e = rook_env.raw_env(game=game)
    e.reset(seed=4)
    rng = random.Random(4)
    agent = _heuristic(game)
    while not e.game.is_over:
        obs = e.observe(e.agent_selection)
        twin = copy.deepcopy(agent)
        a = agent.act(obs)
        assert twin.act({k: v.copy() for k, v in obs.items()}) == a
        if MEMORYLESS[game]:
            assert agent.act({k: v.copy() for k, v in obs.items()}) == a
        e.step(a if rng.random() < 0.8 else rng.choice(e.game.legal_actions()))


# ============================================================================ call-your-partner Rook
def cp_obs(state, seat):
    mask = np.zeros(state.L.n_actions, np.int8)
    if seat == state.current:
        for a in state.legal_actions():
            mask[a] = 1
    return {"observation": cp_encode(state, seat), "action_mask": mask}


@pytest.mark.call_partner
def test_calls_the_highest_trump_it_lacks():
    cfg = CallPartnerConfig(players=5)
    hands, nest = cp_deal(cfg, {0: "Rook R1 R14 R12 R11 R10 R9 Y1 G1 B1"})
    st = CallPartnerState(cfg)
    st.new_game(dealer=4, hands=hands, nest=nest)
    scripted_setup(st, trump=0, stop_at_call=True)
    assert st.phase == cp.CALL
    agent = CallPartnerHeuristic(players=5)
    assert agent.act(cp_obs(st, 0)) == st.L.parse_card("R13")
    cfg6 = CallPartnerConfig(players=6)
    hands6, nest6 = cp_deal(cfg6, {0: "R1 R14 R12 Y1 G1 B1"}, nest="G5 G6 G7")
    st6 = CallPartnerState(cfg6)
    st6.new_game(dealer=5, hands=hands6, nest=nest6)
    scripted_setup(st6, trump=0, stop_at_call=True)
    agent6 = CallPartnerHeuristic(players=6)
    first = agent6.act(cp_obs(st6, 0))
    assert first == st6.L.rook
    st6.apply(first)
    assert agent6.act(cp_obs(st6, 0)) == st6.L.parse_card("R13")


@pytest.mark.call_partner
def test_bids_strong_hands_higher_than_weak_ones():
    """Seat 0 opens at 140; seat 1 overcalls with a strong hand and passes with a weak one.
    (Any hand may open at 100: with a called top trump and the nest, simulated sides make 100
    about nine times in ten even with the weakest hands.)"""
    cfg = CallPartnerConfig(players=5)
    agent = CallPartnerHeuristic(players=5)
    for cards, expect in [("Rook R1 R14 R13 R12 R10 R5 Y1 G1 B1", "bid"), ("R2 R3 Y2 Y3 Y4 G2 G3 G4 B2 B3", "pass")]:
        hands, nest = cp_deal(cfg, {1: cards})
        st = CallPartnerState(cfg)
        st.new_game(dealer=4, hands=hands, nest=nest)
        st.apply(st.L.bid_action(140))
        assert st.L.action_kind(agent.act(cp_obs(st, 1))) == expect
        assert agent.estimate(st.hands[1]) > 140 if expect == "bid" else agent.estimate(st.hands[1]) < 150


@pytest.mark.call_partner
def test_beats_random():
    mean, se = measure(players=5, hands=100, seed=1)
    assert mean - 2 * se > 0, f"heuristic vs random: {mean:+.1f} +/- {se:.1f}"
