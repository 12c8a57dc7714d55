"""Determinised search for call-your-partner Rook (``call_partner_search``): legal moves under the tables' flags,
the same decisions when the cards the seat cannot see are moved, deterministic for a seed, its rollouts are the
heuristic's card play, its deals are uniform under the constraints, and its spec's errors say what is wrong."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pytest

from helpers import bits_of
from rook_env.agents import make_agent
from rook_env.agents.call_partner_search import CallPartnerSearch, parse_spec
from rook_env.agents.call_partner_search import worlds as worlds_module
from rook_env.agents.call_partner_search.agent import _World
from rook_env.agents.call_partner_search.worlds import Deals
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic
from rook_env.agents.independent.sampler import Holder
from rook_env.games.call_partner import CallPartnerState, encode, make_config
from rook_env.games.call_partner.rules import BID, PLAY

pytestmark = pytest.mark.call_partner

TABLES = [{"players": 4}, {"players": 5}, {"players": 6},
          {"players": 5, "nest_discard": "no_counters_unless_forced"},
          {"players": 5, "deck": "no_twos_to_fours", "first_lead": "bidder"},
          {"players": 5, "black_two_trump": "on", "red_two_little_rook": "on"}]


def observation(st: CallPartnerState, seat: int) -> dict:
    m = st.legal_mask() if st.current == seat else 0
    return {"observation": encode(st, seat),
            "action_mask": np.array([(m >> a) & 1 for a in range(st.L.n_actions)], np.int8)}


def strict(seed: int = 0, worlds: int = 4, **flags) -> CallPartnerSearch:
    agent = CallPartnerSearch(seed=seed, worlds=worlds, **flags)
    agent.strict = True
    return agent


def play(flags: dict, deals: range, agents: list, on_decision=None) -> None:
    """Hands dealt by ``CallPartnerState(config, seed=d)`` played by ``agents`` (one a seat); ``on_decision(st,
    seat, obs, action)`` sees every decision."""
    config = make_config(**flags)
    for d in deals:
        st = CallPartnerState(config, seed=d)
        st.new_game()
        for a in agents:
            a.reset()
        while not st.is_over:
            seat = st.current
            obs = observation(st, seat)
            action = agents[seat].act(obs)
            assert obs["action_mask"][action] == 1, (d, seat, action)
            if on_decision:
                on_decision(st, seat, obs, action)
            st.apply(action)


@pytest.mark.parametrize("flags", TABLES, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
def test_legal_actions_under_every_table(flags):
    agents = [strict(seed=s, **flags) for s in range(flags["players"])]
    phases = Counter()
    play(flags, range(3), agents, lambda st, seat, obs, a: phases.update([st.phase]))
    assert phases[PLAY] == 3 * make_config(**flags).players * CallPartnerState(make_config(**flags)).L.n_tricks
    assert all(a.fallbacks == 0 for a in agents)


def test_rollouts_play_the_heuristics_card():
    # the rollout rule on the state chooses what the heuristic chooses on the seat's observation
    for players in (4, 5, 6):
        h = CallPartnerHeuristic(players=players)
        agent = CallPartnerSearch(seed=0, players=players)
        seen = [0]

        def check(st, seat, obs, action):
            if st.phase != PLAY:
                return
            revealed = 0
            for c in st.called:
                if st.played >> c & 1:
                    revealed |= 1 << st.played_by[c]
            w = _World(list(st.hands), st.leader, list(st.trick), st.played, list(st.points), revealed,
                       st.L.n_tricks - len(st.tricks))
            mine = agent._policy(agent._table(st.trump, st.rook_high == 1), seat, w, st.bidder,
                                 sum(1 << c for c in st.called), st.discards)
            assert mine == action
            seen[0] += 1

        play({"players": players}, range(8), [h] * players, check)
        assert seen[0] > 50


def _twin(st: CallPartnerState, me: int, rng: random.Random) -> CallPartnerState | None:
    """A copy of ``st`` with the cards ``me`` cannot see permuted among their places, keeping what the table was
    told (the nest announcement; the bidder holds no called card); None when none was found."""
    seen = st.hands[me] | st.played
    if me == st.bidder and st.phase != BID:
        seen |= st.nest | st.discards
    unseen = bits_of(st.L.all_cards & ~seen)
    for _ in range(30):
        image = unseen[:]
        rng.shuffle(image)
        sigma = dict(zip(unseen, image))

        def apply(mask):
            return sum(1 << sigma.get(c, c) for c in bits_of(mask))

        new = st.clone()
        new.hands = [h if s == me else apply(h) for s, h in enumerate(st.hands)]
        new.nest, new.discards = apply(st.nest), apply(st.discards)
        if st.discards.bit_count() == st.L.nest_size and bool(new.discards & st.L.counter_mask) != st.nest_has_counters:
            continue
        if st.phase != BID and any(new.hands[st.bidder] >> c & 1 for c in st.called):
            continue
        if len(st.called) == st.config.n_called:
            new.partners = new.called_holders()
        if new.hands != st.hands:
            return new
    return None


@pytest.mark.parametrize("players", [5, 6])
def test_decisions_do_not_depend_on_cards_the_seat_cannot_see(players):
    # the agent decides the same from the seat's observation of a twin where the hidden cards lie elsewhere (its
    # memory of the hand comes from the same observations)
    rng = random.Random(7)
    flags = {"players": players}
    agents = [strict(seed=s, **flags) for s in range(players)]
    checked = Counter()
    config = make_config(**flags)
    for d in range(4):
        st = CallPartnerState(config, seed=100 + d)
        st.new_game()
        for a in agents:
            a.reset()
        while not st.is_over:
            me = st.current
            obs = observation(st, me)
            twin = _twin(st, me, rng) if st.phase != BID and rng.random() < 0.5 else None
            if twin is not None:
                twin_obs = observation(twin, me)
                assert np.array_equal(twin_obs["observation"], obs["observation"])
                probe = strict(seed=me, **flags)
                probe._memory = dict(agents[me]._memory)
                probe._plans = dict(agents[me]._plans)
                a_twin = probe.act(twin_obs)
                action = agents[me].act(obs)
                assert a_twin == action, (d, me, st.phase)
                checked[st.phase] += 1
            else:
                action = agents[me].act(obs)
            st.apply(action)
    assert checked[PLAY] >= 20


def test_deterministic_for_a_seed_and_seeds_matter():
    def record(seed):
        out = []
        agents = [strict(seed=seed + s, worlds=3) for s in range(5)]
        play({"players": 5}, range(3), agents, lambda st, seat, obs, a: out.append(a))
        return out

    assert record(1) == record(1)
    agent, other = strict(seed=1, worlds=3), strict(seed=2, worlds=3)
    config = make_config(players=5)
    values = []
    for d in range(6):  # the sampled worlds depend on the seed: the values of a first lead differ
        st = CallPartnerState(config, seed=d)
        st.new_game()
        h = CallPartnerHeuristic(players=5)
        while st.phase != PLAY:
            st.apply(h.act(observation(st, st.current)))
        obs = observation(st, st.current)
        agent.act(obs)
        other.act(obs)
        values.append(agent.last_values != other.last_values)
    assert any(values)


def test_a_failed_decision_is_counted_and_played_legally(monkeypatch):
    agent = CallPartnerSearch(seed=0, worlds=2, players=5)

    def broken(*args, **kwargs):
        raise RuntimeError("no world")

    monkeypatch.setattr(agent, "_play", broken)
    actions = []
    play({"players": 5}, range(1), [agent] + [CallPartnerHeuristic(players=5)] * 4,
         lambda st, seat, obs, a: actions.append((seat, st.phase)))
    assert agent.fallbacks > 0
    agent.strict = True
    st = CallPartnerState(make_config(players=5), seed=0)
    st.new_game()
    h = CallPartnerHeuristic(players=5)
    while not (st.phase == PLAY and st.current == 0 and st.legal_mask().bit_count() > 1):
        st.apply(h.act(observation(st, st.current)))
    with pytest.raises(RuntimeError, match="no world"):
        agent.act(observation(st, 0))
    with pytest.raises(ValueError, match="action mask is empty"):
        agent.act(observation(st, 1))


def test_the_sampler_is_uniform_among_the_deals_that_fit(monkeypatch):
    # six cards, three holders (one void in cards 0-1, one needing a counter among 4-5): every fitting deal about
    # equally often, by rejection and by the exact count alike
    holders = [Holder(2, forbidden=0b000011), Holder(2), Holder(2, needs_counter=True)]
    unseen, counters = 0b111111, 0b110000
    fits = []
    for perm in itertools.permutations(range(6)):
        deal = [sum(1 << c for c in perm[2 * i:2 * i + 2]) for i in range(3)]
        if not deal[0] & 0b11 and deal[2] & counters and deal not in fits:
            fits.append(deal)
    for quick in (64, 0):
        monkeypatch.setattr(worlds_module, "QUICK", quick)
        rng = random.Random(3)
        deals = Deals(unseen, holders, counters)
        counts = Counter(tuple(deals.sample(rng)) for _ in range(6000))
        assert set(counts) == {tuple(d) for d in fits}
        expected = 6000 / len(fits)
        assert all(abs(c - expected) < 5 * expected ** 0.5 for c in counts.values()), counts
    with pytest.raises(ValueError, match="no holder may take card"):
        Deals(0b11, [Holder(1, forbidden=0b11), Holder(1, forbidden=0b10)])
    with pytest.raises(ValueError, match="do not add up"):
        Deals(0b111, [Holder(1), Holder(1)])


def test_the_spec_builds_the_agent_and_its_errors_say_what_is_wrong():
    agent = make_agent("call_partner_search[worlds=8,contract=base]:ppo", seed=3, game="call_partner", players=5)
    assert isinstance(agent, CallPartnerSearch) and agent.worlds == 8 and agent.contract == "base"
    assert type(agent.base).__name__ == "PPOAgent"
    agent = make_agent("call_partner_search", players=6)  # the spec implies its game
    assert agent.worlds == 16 and isinstance(agent.base, CallPartnerHeuristic) and agent.n == 6
    assert parse_spec("call_partner_search[worlds=32]") == ({"worlds": 32}, "")
    for spec, words in [("call_partner_search[worlds=0]", "worlds must be a whole number in 1..1000"),
                        ("call_partner_search[worlds=x]", "worlds must be"),
                        ("call_partner_search[samples=3]", "bad call_partner_search option 'samples=3'"),
                        ("call_partner_search[worlds=3,worlds=4]", "given twice"),
                        ("call_partner_search[contract=maybe]", "contract must be one of search, base"),
                        ("call_partner_search[worlds=3", "write 'call_partner_search'"),
                        ("call_partner_search:", "write 'call_partner_search'")]:
        with pytest.raises(ValueError, match=words):
            make_agent(spec, game="call_partner", players=5)
    with pytest.raises(ValueError, match="unknown agent spec 'nothing'"):
        make_agent("call_partner_search:nothing", game="call_partner", players=5)
    with pytest.raises(ValueError, match="plays the call_partner game"):
        make_agent("call_partner_search", game="partnership")
    with pytest.raises(ValueError, match="worlds must be"):
        CallPartnerSearch(worlds=True)
    with pytest.raises(ValueError, match="base must be an agent"):
        CallPartnerSearch(base="heuristic")
