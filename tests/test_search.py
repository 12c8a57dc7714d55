"""SearchAgent: always legal under the rule flags, blind to hidden cards, deterministic for a seed,
samples worlds exactly within what the seat knows (uniformly), and finds the right card where
the answer is known."""

from __future__ import annotations

import copy
import itertools
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

import rook_env
from rook_env.agents import make_agent
from rook_env.agents.heuristic import HeuristicAgent
from rook_env.agents.heuristic.play import known_voids
from rook_env.agents.heuristic.tables import card_tables, seat_reader
from rook_env.agents.random_agent import RandomAgent
from rook_env.agents.search import SearchAgent
from rook_env.agents.search.worlds import NEST, Holder, WorldSampler, holders_for, make_world, world_template
from rook_env.games.partnership.cards import bits, layout_for
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.observation import encode, obs_layout
from rook_env.games.partnership.rules import BID, DISCARD, OVER, PLAY, TRUMP, RookState
from helpers import actions_of, strict_search
from helpers import seat_observation as _obs
from helpers import shuffle_hidden as _shuffle_hidden  # the agents' hidden-card shuffle

FLAG_VARIANTS = [
    {},
    {"deck": "full", "rook_rank": "low"},
    {"rook_rank": "ten_and_half", "first_lead": "bidder", "last_trick_bonus": 20},
    {"nest_discard": "no_counters_unless_forced", "first_lead": "left_of_bidder", "majority_tricks_bonus": 20},
    {"deck": "full", "nest_discard": "no_counters_unless_forced", "all_pass": "redeal", "no_counter_redeal": "off"},
    {"episode": "game", "target_score": 150, "reward": "win_loss"},
    {"min_bid": 80, "max_bid": 100, "bid_step": 10, "reward": "team_score"},
]




# ============================================================================ legality
@pytest.mark.parametrize("flags", FLAG_VARIANTS)
def test_always_legal_under_rule_flags(flags):
    """Whole hands through raw_env (which raises on an illegal action), search seats mixed with
    random ones so that odd positions occur; no fallback anywhere."""
    e = rook_env.raw_env(**flags)
    search = [strict_search(seed=s, **flags) for s in range(4)]
    rnd = [RandomAgent(seed=s) for s in range(4)]
    decisions = 0
    for h in range(3):
        e.reset(seed=100 + h)
        g = e.game
        steps = 0
        while g.phase != OVER and steps < 400:
            s = g.current
            obs = e.observe(e.agent_selection)
            use = h == 0 or (s & 1) == h % 2
            a = (search[s] if use else rnd[s]).act(obs)
            assert obs["action_mask"][a] == 1
            decisions += use and g.phase == PLAY
            e.step(a)
            steps += 1
    assert decisions > 0
    assert sum(a.fallbacks for a in search) == 0


def test_make_agent_and_rollout_choices():
    ag = make_agent("search", seed=3, deck="full")
    assert isinstance(ag, SearchAgent) and ag.config.deck == "full" and ag.samples == 24
    calls = []

    def lowest(state, legal):
        calls.append(state.current)
        return (legal & -legal).bit_length() - 1

    for rollout in ("heuristic", lowest):
        e = rook_env.raw_env()
        agents = [strict_search(seed=s, samples=2, rollout=rollout) for s in range(4)]
        e.reset(seed=7)
        while not e.game.is_over:
            obs = e.observe(e.agent_selection)
            e.step(agents[e.game.current].act(obs))
    assert calls, "a callable rollout policy is used"


class _Recorder:
    """A base agent that plays the lowest legal action and records the phase of each call."""

    def __init__(self):
        self.phases: list[int] = []
        self.resets = 0

    def act(self, observation, info=None):
        self.phases.append(self.game.phase)
        return int(np.flatnonzero(observation["action_mask"])[0])

    def reset(self):
        self.resets += 1


def test_base_agent_bids_discards_and_names_trump():
    """search:<spec>: the base agent makes every decision outside card play, search every card (with no
    fallback); the spec builds the base from the registry; a base without act() is refused."""
    e = rook_env.raw_env()
    base = _Recorder()
    ag = strict_search(seed=1, samples=2, base=base)
    played = 0
    for h in range(3):
        e.reset(seed=40 + h)
        base.game = e.game
        while not e.game.is_over:
            obs = e.observe(e.agent_selection)
            phase, calls = e.game.phase, len(base.phases)
            a = ag.act(obs)
            assert obs["action_mask"][a] == 1
            if phase == PLAY:
                assert len(base.phases) == calls  # cards are the search's
                played += 1
            else:
                assert base.phases[-1] == phase and a == np.flatnonzero(obs["action_mask"])[0]
            e.step(a)
    assert played == 3 * 36 and set(base.phases) == {BID, DISCARD, TRUMP}  # 36 cards a hand; the rest: the base
    assert ag.fallbacks == 0
    ag.reset()
    assert base.resets == 1
    assert make_agent("search:random", seed=2).base.__class__ is RandomAgent
    assert make_agent("search:heuristic", seed=2, deck="full").base.config.deck == "full"
    with pytest.raises(ValueError, match="unknown agent spec 'nothing'"):
        make_agent("search:nothing")
    with pytest.raises(ValueError, match="base must be an agent"):
        SearchAgent(base=object())


@pytest.mark.parametrize("kwargs, match", [
    ({"samples": 0}, "samples"), ({"samples": -3}, "samples"), ({"samples": 2.5}, "samples"),
    ({"samples": True}, "samples"), ({"samples": "24"}, "samples"), ({"rollout": "best"}, "rollout"),
    ({"rollout": 3}, "rollout"), ({"seed": "x"}, "seed"), ({"deck": "huge"}, "deck"),
    ({"trumps": 4}, "unknown rule flag"),
])
def test_bad_arguments_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SearchAgent(**kwargs)


def test_make_agent_validates_flags():
    with pytest.raises(ValueError, match="unknown rule flag"):
        make_agent("search", rook_rnak="low")
    with pytest.raises(ValueError, match="rook_rank"):
        make_agent("search", rook_rank="middle")


def test_empty_mask_rejected():
    e = rook_env.raw_env()
    e.reset(seed=0)
    obs = e.observe("player_0")
    with pytest.raises(ValueError, match="empty"):
        SearchAgent(seed=0).act({"observation": obs["observation"], "action_mask": np.zeros(58, np.int8)})


def test_garbage_observation_falls_back_to_a_legal_action():
    ag = SearchAgent(seed=0)
    mask = np.zeros(58, np.int8)
    mask[[3, 17]] = 1
    garbage = np.full(583, 0.7, np.float32)  # every entry set: nothing consistent to search
    assert ag.act({"observation": garbage, "action_mask": mask}) in (3, 17)
    assert ag.fallbacks == 1
    # a card-play observation whose card counts do not add up (a played card erased): no deal fits,
    # so the heuristic's card is played and counted
    e = rook_env.raw_env()
    e.reset(seed=3)
    h = HeuristicAgent()
    while e.game.phase != PLAY or len(e.game.tricks) < 3 or bin(e.game.legal_mask()).count("1") < 2:
        e.step(h.act(e.observe(e.agent_selection)))
    obs = e.observe(e.agent_selection)
    vec = obs["observation"].copy()
    played = obs_layout(e.game.config).slices["played"]
    vec[played.start + np.flatnonzero(vec[played])[0]] = 0.0
    ag = SearchAgent(seed=0)
    assert obs["action_mask"][ag.act({"observation": vec, "action_mask": obs["action_mask"]})] == 1
    assert ag._fallbacks == 1


# ============================================================================ information
@pytest.mark.parametrize("flags", [{}, {"nest_discard": "no_counters_unless_forced", "deck": "full"},
                                   {"rook_rank": "low", "first_lead": "bidder"}])
def test_choices_do_not_depend_on_hidden_cards(flags):
    """The heuristic's test: permuting the cards a seat cannot see leaves its observation and
    its choice unchanged (fresh agents of one seed, and one carrying its memory of the hand)."""
    cfg = make_config(**flags)
    rng = random.Random(5)
    agents = [strict_search(seed=s, **flags) for s in range(4)]
    checked = changed = 0
    for h in range(6):
        st = RookState(cfg, seed=h)
        st.new_game()
        for a in agents:
            a.reset()
        while not st.is_over:
            me = st.current
            obs = _obs(st, me)
            if st.phase == PLAY and rng.random() < 0.5:
                other = _shuffle_hidden(st, me, rng)
                obs2 = _obs(other, me)
                changed += other.hands != st.hands or other.discards != st.discards
                assert np.array_equal(obs["observation"], obs2["observation"])
                twin = copy.deepcopy(agents[me])
                fresh1, fresh2 = strict_search(seed=9, **flags), strict_search(seed=9, **flags)
                assert fresh1.act(obs) == fresh2.act(obs2)
                a = agents[me].act(obs)
                assert twin.act(obs2) == a
                checked += 1
            else:
                a = agents[me].act(obs)
            st.apply(a)
    assert checked > 20 and changed > 10


def test_deterministic_for_a_seed_and_order_free():
    def play(seed):
        return actions_of([strict_search(seed=seed + s, samples=6) for s in range(4)])

    assert play(1) == play(1)
    # one decision asked twice of agents of one seed, in any order, gets one answer
    e = rook_env.raw_env()
    e.reset(seed=3)
    h = HeuristicAgent()
    while e.game.phase != PLAY or len(e.game.tricks) < 2:
        e.step(h.act(e.observe(e.agent_selection)))
    obs = e.observe(e.agent_selection)
    a, b = strict_search(seed=4, samples=8), strict_search(seed=4, samples=8)
    b.act(obs)  # b has made this decision before
    assert a.act(obs) == b.act(obs)


# ============================================================================ worlds
def _random_constraints(rng: random.Random, n_cards: int = 24, need_counter: bool | None = None):
    """A true deal of ``n_cards`` cards among three seats and a nest, and constraints it satisfies."""
    cards = list(range(n_cards))
    rng.shuffle(cards)
    nest_size = rng.randint(0, min(5, n_cards))
    rest = n_cards - nest_size
    cut1 = rng.randint(0, rest)
    cut2 = rng.randint(cut1, rest)
    parts = [cards[:cut1], cards[cut1:cut2], cards[cut2:rest], cards[rest:]]
    masks = [sum(1 << c for c in p) for p in parts]
    counters = sum(1 << c for c in range(n_cards) if rng.random() < 0.3)
    holders = []
    for i, m in enumerate(masks):
        outside = ((1 << n_cards) - 1) & ~m
        forbidden = outside & rng.getrandbits(n_cards) & rng.getrandbits(n_cards)  # a random part of what it lacks
        needs = i == 3 and bool(m & counters) and (need_counter if need_counter is not None else rng.random() < 0.5)
        holders.append(Holder(NEST if i == 3 else i + 1, len(parts[i]), forbidden, needs))
    return (1 << n_cards) - 1, holders, counters, masks


def _check_deal(unseen, holders, counters, deal):
    union = 0
    for h, m in zip(holders, deal):
        assert m & union == 0, "a card is dealt twice"
        union |= m
        assert m.bit_count() == h.size
        assert m & h.forbidden == 0
        if h.needs_counter:
            assert m & counters
    assert union == unseen


@settings(max_examples=60, deadline=None)
@given(st_.integers(0, 2**32 - 1), st_.integers(1, 30))
def test_sampled_deals_respect_every_constraint(seed, n_cards):
    rng = random.Random(seed)
    unseen, holders, counters, truth = _random_constraints(rng, n_cards)
    sampler = WorldSampler(unseen, holders, counters)
    assert sampler.total >= 1
    for _ in range(10):
        _check_deal(unseen, holders, counters, sampler.sample(rng))


def _brute_force(unseen, holders, counters):
    """Every consistent deal, by enumerating each holder's card combinations in turn."""
    out = []

    def rec(i, left, deal):
        if i == len(holders):
            try:
                _check_deal(unseen, holders, counters, deal)
                out.append(tuple(deal))
            except AssertionError:
                pass
            return
        for combo in itertools.combinations(bits(left), holders[i].size):
            m = sum(1 << c for c in combo)
            rec(i + 1, left & ~m, deal + [m])

    rec(0, unseen, [])
    return out


@pytest.mark.parametrize("seed", [0, 1, 16, 19, 30])  # cases of 31..110 deals, voids and a nest that needs a counter
def test_sampler_counts_exactly_and_draws_uniformly(seed):
    rng = random.Random(seed)
    unseen, holders, counters, _ = _random_constraints(rng, n_cards=7, need_counter=True)
    deals = _brute_force(unseen, holders, counters)
    assert len(deals) > 20 and any(h.needs_counter for h in holders)
    sampler = WorldSampler(unseen, holders, counters)
    assert sampler.total == len(deals)
    n = 200 * len(deals)
    freq = Counter(tuple(sampler.sample(rng)) for _ in range(n))
    assert set(freq) <= set(deals)
    # chi-square against uniform: far below the 0.1% critical value for these degrees of freedom
    expected = n / len(deals)
    chi2 = sum((freq.get(d, 0) - expected) ** 2 / expected for d in deals)
    dof = max(len(deals) - 1, 1)
    assert chi2 < dof + 6 * (2 * dof) ** 0.5 + 10


def test_impossible_constraints_raise():
    with pytest.raises(ValueError, match="add up"):
        WorldSampler(0b111, [Holder(1, 2), Holder(2, 2)])
    with pytest.raises(ValueError, match="no deal"):
        WorldSampler(0b111, [Holder(1, 2, forbidden=0b011), Holder(2, 1)])


@pytest.mark.parametrize("flags", [{}, {"nest_discard": "no_counters_unless_forced"},
                                   {"deck": "full", "rook_rank": "low"}])
def test_the_true_deal_is_always_consistent_and_worlds_match_the_observation(flags):
    """In real play the constraints a seat derives (voids from its memory, sizes, the nest rule)
    always admit the true deal, and every sampled world looks the same to the seat."""
    cfg = make_config(**flags)
    tab, reader = card_tables(cfg), seat_reader(cfg)
    heur = [HeuristicAgent(**flags) for _ in range(4)]
    search = strict_search(seed=0, samples=2, **flags)
    rng = random.Random(1)
    checked = 0
    for h in range(8):
        st = RookState(cfg, seed=50 + h)
        st.new_game()
        memories = {}
        while not st.is_over:
            me = st.current
            obs = _obs(st, me)
            if st.phase == PLAY:
                view = reader.read(obs["observation"])
                voids = known_voids(tab, view, view.trump, memories.get(me))
                search._memory.clear()
                if me in memories:
                    search._memory[memories[me].hand] = memories[me]
                unseen, holders = holders_for(tab, view, voids)
                truth = []
                for hd in holders:
                    truth.append(st.discards if hd.who == NEST else st.hands[(me + hd.who) % 4])
                _check_deal(unseen, holders, tab.counter_mask, truth)
                sampler = WorldSampler(unseen, holders, tab.counter_mask)
                ol = reader.ol
                counters = tuple(round(float(obs["observation"][ol.COUNTERS + i]) * tab.total_points) for i in (0, 1))
                template = world_template(cfg, view, counters)
                for _ in range(3):
                    deal = sampler.sample(rng)
                    _check_deal(unseen, holders, tab.counter_mask, deal)
                    world = make_world(template, holders, deal)
                    seen = encode(world, 0)
                    mine = obs["observation"]
                    for name, a, z in ol.sections:
                        if name not in ("scores", "dealer", "bids", "passes"):  # the auction is not kept
                            assert np.allclose(seen[a:z], mine[a:z]), name
                    assert world.legal_mask() == st.legal_mask()
                a = search.act(obs)
                memories[me] = search._memory[st.hands[me] & ~(1 << a)]
                checked += 1
            else:
                a = heur[me].act(obs)
            st.apply(a)
    assert checked > 100


# ============================================================================ crafted situations
def _state_in_last_two_tricks(cfg, hands, discards, trick, leader, bidder=0):
    """A card-play state with two tricks left: ``hands`` (rel to nothing: absolute seats), the
    bidder's ``discards``, the current ``trick`` (led by ``leader``); every other card was
    played earlier, round robin, and its points split between the teams."""
    L = layout_for(cfg)
    st = RookState(cfg, seed=0)
    st.new_game(dealer=3)
    st.hands = [sum(1 << L.parse_card(c) for c in h.split()) for h in hands]
    st.discards = sum(1 << L.parse_card(c) for c in discards.split())
    st.nest = st.discards
    trick_ids = [L.parse_card(c) for c in trick.split()]
    used = st.discards | sum(st.hands) | sum(1 << c for c in trick_ids)
    earlier = [c for c in range(L.n_cards) if not used >> c & 1]
    assert len(earlier) == 4 * (L.n_tricks - 2)
    st.phase, st.bidder, st.high_bid = PLAY, bidder, 0  # bid 70
    st.set_call(3)  # trump black
    st.leader, st.trick = leader, trick_ids
    st.current = (leader + len(trick_ids)) % 4
    st.tricks = [(-1, ())] * (L.n_tricks - 2)
    st.played = 0
    for i, c in enumerate(earlier + trick_ids):
        st.played |= 1 << c
        seat = i % 4 if i < len(earlier) else (leader + i - len(earlier)) % 4
        st.played_by[c] = seat
    pts = sum(L.card_points[c] for c in earlier)
    st.points = [pts // 2, pts - pts // 2]
    st.tricks_won = [4, 3]
    return st


def test_keeps_the_rook_for_the_last_trick_and_the_nest():
    """Last to play, two tricks left: ruffing a pointless trick with the Rook Bird gives up the last
    trick and the 50-point nest; throwing R6 keeps the Rook for the last trick, which it wins in
    every world. Search must throw R6."""
    cfg = make_config()
    st = _state_in_last_two_tricks(cfg, ["Rook R6", "B14", "R5", "G5"], "R10 Y10 G10 Y14 G14",
                                   trick="Y13 Y6 Y7", leader=1)
    L = st.L
    assert st.current == 0 and st.legal_mask() == (1 << L.rook) | (1 << L.parse_card("R6"))
    for seed in range(3):
        assert strict_search(seed=seed, samples=8).act(_obs(st, 0)) == L.parse_card("R6")


def test_keeps_the_master_trump_for_the_last_trick():
    """The bidder leads with two tricks left, holding B14 (the last trump) and R6: cashing B14 first
    leaves R6 to lose the last trick and the 50-point nest whenever an opponent holds a higher
    red; leading R6 first keeps B14 to take the last trick in every world. Search must lead R6."""
    cfg = make_config()
    st = _state_in_last_two_tricks(cfg, ["B14 R6", "R13 G6", "R5 G7", "R12 G8"], "R10 Y10 G10 Y14 G14",
                                   trick="", leader=0)
    L = st.L
    agent = strict_search(seed=0, samples=8)
    assert agent.act(_obs(st, 0)) == L.parse_card("R6")
    heur = HeuristicAgent()
    while not st.is_over:
        me = st.current
        st.apply((agent if me == 0 else heur).act(_obs(st, me)))
    assert st.last_trick_team == 0


@pytest.mark.parametrize("flags", [{"nest": "off", "rook_bird": "off"}, {"rook_bird": "off"}])
@pytest.mark.parametrize("engine", ["batched", "python"])
def test_search_plays_tables_whose_nest_is_not_five_cards(flags, engine, monkeypatch):
    """The nest's holder takes the table's nest size (none without a nest, 4 without the Rook Bird): strict
    search finds consistent worlds at every searched decision instead of falling back."""
    import rook_env
    from rook_env.agents.search import SearchAgent
    from rook_env.agents.search.batched import supported

    if engine == "batched" and not supported(rook_env.make_config(**flags)):
        pytest.skip("the batched engine needs numba")
    monkeypatch.setattr(SearchAgent, "strict", True)
    agent = SearchAgent(seed=1, samples=4, engine=engine, **flags)
    env = rook_env.raw_env(**flags)
    searched = 0
    for h in range(2):
        env.reset(seed=h)
        for _ in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(agent.act(obs, info))
            searched += agent.last_values is not None
    assert searched > 20 and agent.fallbacks == 0
