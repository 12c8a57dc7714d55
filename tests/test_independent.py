"""The independent search player (``"pimc"``, rook_env.agents.independent): always legal under the rule flags,
blind to hidden cards, deterministic for a seed, never calls the heuristic or the project's search, samples
worlds uniformly within what the seat knows, reads voids soundly, bids from simulated hand values, and its spec
gives clear errors."""

from __future__ import annotations

import ast
import copy
import itertools
import os
import random
from collections import Counter

import numpy as np
import pytest
from helpers import actions_of, complete_deal, ids, play_with_hidden_twins, seat_observation

import rook_env
from rook_env.agents import make_agent
from rook_env.agents.independent import PIMCAgent, parse_pimc
from rook_env.agents.independent.sampler import DealSampler, Holder
from rook_env.agents.random_agent import RandomAgent
from rook_env.games.partnership.cards import bits, layout_for
from rook_env.games.partnership.config import make_config
from rook_env.games.partnership.observation import decode_masks
from rook_env.games.partnership.rules import BID, DISCARD, OVER, PLAY, TRUMP, RookState, contract_tables
from rook_env.vector import RookVectorEnv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORLDS = 4  # small searches: the tests check behaviour, not strength

FLAG_VARIANTS = [
    {},
    {"deck": "full", "rook_rank": "low"},
    {"rook_rank": "ten_and_half", "first_lead": "bidder", "last_trick_bonus": 20},
    {"nest_discard": "no_counters_unless_forced", "first_lead": "left_of_bidder", "majority_tricks_bonus": 20},
    {"deck": "full", "nest_discard": "no_counters_unless_forced", "all_pass": "redeal", "no_counter_redeal": "off"},
    {"episode": "game", "target_score": 150, "reward": "win_loss"},
    {"deck": "full", "trump_calls": "extended", "black_two_trump": "on", "red_two_little_rook": "on"},
    {"preset": "regular_partnership"},  # no nest, no Rook Bird, full deck
]


def strict_pimc(seed: int = 0, worlds: int = WORLDS, **flags) -> PIMCAgent:
    """A PIMCAgent whose internal errors raise instead of falling back."""
    agent = PIMCAgent(seed=seed, worlds=worlds, **flags)
    agent.strict = True
    return agent


# ============================================================================ legality
@pytest.mark.parametrize("flags", FLAG_VARIANTS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "default")
def test_always_legal_under_rule_flags(flags):
    """Whole hands through raw_env (which raises on an illegal action), pimc seats beside random ones so that odd
    positions occur; every phase is decided, and nothing falls back."""
    e = rook_env.raw_env(**flags)
    pimc = [strict_pimc(seed=s, **flags) for s in range(4)]
    rnd = [RandomAgent(seed=s) for s in range(4)]
    phases = Counter()
    for h in range(3):
        e.reset(seed=100 + h)
        g = e.game
        steps = 0
        while g.phase != OVER and steps < 400:
            s = g.current
            obs = e.observe(e.agent_selection)
            agent = pimc[s] if (s + h) % 4 != 3 else rnd[s]  # one random seat a hand
            if agent is pimc[s] and np.count_nonzero(obs["action_mask"]) > 1:
                phases[g.phase] += 1
            a = agent.act(obs)
            assert obs["action_mask"][a] == 1
            e.step(a)
            steps += 1
            if flags.get("episode") == "game" and g.hands_played >= 1:
                break
    assert phases[PLAY] > 20 and phases[BID] > 0
    assert sum(a.fallbacks for a in pimc) == 0


def test_plays_whole_matches_without_illegal_actions_or_fallbacks():
    from rook_env.evaluation import play_match

    res = play_match("pimc:worlds=4", "heuristic", deals=2, seed=7, strict=True)
    assert res.illegal == {"A": 0, "B": 0} and res.fallbacks["A"] == 0
    assert res.hands == 4


# ============================================================================ information
@pytest.mark.parametrize("flags", [{}, {"nest_discard": "no_counters_unless_forced", "deck": "full"},
                                   {"rook_rank": "low", "first_lead": "bidder"}])
def test_choices_do_not_depend_on_hidden_cards(flags):
    """The hidden-information test of the agents (tests/test_hidden_info.py's permutation): the cards a seat cannot
    see are permuted among the other hands (and the nest, where it is hidden); the seat's observation is the same,
    and so is its choice, in every phase: fresh agents of one seed, and a copy of one that carries its memory of
    the hand."""
    cfg = make_config(**flags)
    agents = [strict_pimc(seed=s, **flags) for s in range(4)]
    seen = Counter()
    changed = [0]

    def check(st, me, obs, twin, twin_obs):
        assert np.array_equal(obs["observation"], twin_obs["observation"])
        changed[0] += twin.hands != st.hands or twin.nest != st.nest or twin.discards != st.discards
        fresh1, fresh2 = strict_pimc(seed=9, **flags), strict_pimc(seed=9, **flags)
        assert fresh1.act(obs) == fresh2.act(twin_obs)
        assert fresh1.last_values == fresh2.last_values
        remembered = copy.deepcopy(agents[me])
        action = agents[me].act(obs)
        assert remembered.act(twin_obs) == action
        if np.count_nonzero(obs["action_mask"]) > 1:
            seen[st.phase] += 1
        return action

    play_with_hidden_twins(cfg, agents, deals=4, rng=random.Random(5), share=0.5, check=check)
    assert seen[PLAY] > 20 and seen[BID] > 3 and changed[0] > 10


def test_deterministic_for_a_seed_and_order_free():
    def play(seed):
        return actions_of([strict_pimc(seed=seed + s) for s in range(4)])

    assert play(1) == play(1)
    # one decision asked of two agents of one seed, one of them after other decisions: one answer
    e = rook_env.raw_env()
    e.reset(seed=3)
    a, b = strict_pimc(seed=4), strict_pimc(seed=4)
    obs = e.observe(e.agent_selection)
    b.act(seat_observation(e.game, e.game.current))
    assert a.act(obs) == b.act(obs)


def test_never_calls_the_heuristic_or_the_project_search(monkeypatch):
    """Every entry point of the heuristic and of the search agent raises: pimc still plays whole hands. Its modules
    import neither."""
    from rook_env.agents.heuristic.agent import HeuristicAgent
    from rook_env.agents.search.agent import SearchAgent

    def forbidden(*args, **kwargs):
        raise AssertionError("the independent player called the heuristic or the project's search")

    for cls in (HeuristicAgent, SearchAgent):
        for name in ("__init__", "act", "act_batch"):
            if hasattr(cls, name):
                monkeypatch.setattr(cls, name, forbidden)
    e = rook_env.raw_env()
    agents = [strict_pimc(seed=s) for s in range(4)]
    for h in range(2):
        e.reset(seed=20 + h)
        while not e.game.is_over:
            e.step(agents[e.game.current].act(e.observe(e.agent_selection)))
    folder = os.path.join(ROOT, "rook_env", "agents", "independent")
    for name in os.listdir(folder):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            imported = {(n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
            imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            assert not any("heuristic" in m or "search" in m or "learned" in m for m in imported), (name, imported)


def test_voids_are_sound_and_complete():
    """At every card-play decision of whole hands, the suits the agent holds each seat void in are exactly the
    suits that seat failed to follow in the hand's tricks so far (read from the rules state), and no sampled
    world deals a seat a card of a suit it is void in."""
    e = rook_env.raw_env()
    agents = [strict_pimc(seed=s) for s in range(4)]
    checked = nonempty = 0
    for h in range(4):
        e.reset(seed=40 + h)
        g = e.game
        while not g.is_over:
            me = g.current
            obs = e.observe(e.agent_selection)
            if g.phase == PLAY and g.call >= 0:
                ct = contract_tables(g.config)
                eff, any_time = ct.eff[g.call], ct.any_time[g.call]
                truth = [0, 0, 0, 0]
                for leader, cards in g.tricks + [(g.leader, tuple(g.trick))]:
                    if not cards:
                        continue
                    led = eff[cards[0]]
                    for i, c in enumerate(cards[1:], 1):
                        if eff[c] != led and not any_time >> c & 1:
                            truth[(leader + i - me) % 4] |= 1 << led
                truth[0] = 0  # the agent does not keep its own voids
                agent = agents[me]
                m = decode_masks(obs["observation"], g.config)
                mem = copy.deepcopy(agent._memory)
                got = agent._voids(m)
                agent._memory = mem
                assert got == truth, (h, len(g.tricks), got, truth)
                checked += 1
                nonempty += any(truth)
            e.step(agents[me].act(obs))
    assert checked > 50 and nonempty > 10


# ============================================================================ the sampler
def _enumerate(unseen, holders, counters=0):
    """Every deal of ``unseen`` among ``holders`` that fits (brute force)."""
    cards = bits(unseen)
    out = []
    for assign in itertools.product(range(len(holders)), repeat=len(cards)):
        masks = [0] * len(holders)
        for c, h in zip(cards, assign):
            masks[h] |= 1 << c
        ok = all(m.bit_count() == h.size and not m & h.forbidden for m, h in zip(masks, holders))
        ok = ok and all(m & counters for m, h in zip(masks, holders) if h.needs_counter)
        if ok:
            out.append(tuple(masks))
    return out


@pytest.mark.parametrize("case", range(3))
def test_sampler_counts_exactly_and_draws_uniformly(case):
    unseen = 0b1111111  # cards 0..6
    holders, counters = [
        ([Holder(3), Holder(2), Holder(2)], 0),
        ([Holder(3, forbidden=0b0000011), Holder(2, forbidden=0b1100000), Holder(2)], 0),
        ([Holder(3, forbidden=0b0000001), Holder(2), Holder(2, needs_counter=True)], 0b0000110),
    ][case]
    deals = _enumerate(unseen, holders, counters)
    sampler = DealSampler(unseen, holders, counters)
    assert sampler.total == len(deals)
    rng = random.Random(case)
    n = 200 * len(deals) if len(deals) < 60 else 20 * len(deals)
    counts = Counter(tuple(sampler.sample(rng)) for _ in range(n))
    assert set(counts) <= set(deals)  # every draw fits
    assert set(counts) == set(deals)  # every fitting deal is drawn
    expected = n / len(deals)
    chi2 = sum((counts[d] - expected) ** 2 / expected for d in deals)
    assert chi2 < len(deals) + 6 * np.sqrt(2 * len(deals))  # far inside a uniform draw's spread


def test_sampler_refuses_sizes_that_do_not_add_up_or_no_fitting_deal():
    with pytest.raises(ValueError, match="do not add up"):
        DealSampler(0b111, [Holder(1), Holder(1)])
    with pytest.raises(ValueError, match="no holder may take card 0"):
        DealSampler(0b11, [Holder(1, forbidden=1), Holder(1, forbidden=1)])
    with pytest.raises(ValueError, match="no deal"):
        DealSampler(0b11, [Holder(2, forbidden=1), Holder(0)])


# ============================================================================ bidding, discards, trump
def _auction_obs(hand_text: str, dealer: int = 3):
    """Seat 0's first bid of a deal where it holds ``hand_text`` (the other cards dealt at random)."""
    hands, nest = complete_deal({0: hand_text})
    st = RookState(make_config())
    st.new_game(dealer=dealer, hands=hands, nest=nest)
    assert st.current == 0 and st.phase == BID
    return seat_observation(st, 0)


def test_a_strong_hand_bids_and_a_weak_hand_does_not():
    L = layout_for(make_config())
    obs = _auction_obs("Rook R14 R13 R12 R11 R10 R5 Y14 G14")
    agent = strict_pimc(seed=1, worlds=16)
    action = agent.act(obs)
    assert L.BID0 <= action < L.BID0 + L.n_bids
    assert agent.last_values[action] > agent.last_values[L.PASS]
    obs = _auction_obs("R6 R7 Y6 Y7 Y8 G6 G7 B6 B5")  # one counter, nothing high
    agent = strict_pimc(seed=1, worlds=16)
    assert agent.act(obs) == L.PASS
    assert agent.last_values[L.PASS] >= max(v for a, v in agent.last_values.items() if a != L.PASS)


def test_the_auction_is_read_as_evidence_of_strength():
    """After the left opponent bid 100 and the partner passed, the worlds of a bid give that opponent more points
    as declarer, and the partner fewer, than uniform worlds do (resampled by the player's own valuation)."""
    L = layout_for(make_config())
    st = RookState(make_config(), seed=11)
    st.new_game(dealer=2)  # seat 3 bids first, then 0, 1, 2
    for action in (L.PASS, L.BID0 + 1, L.BID0 + L.bids.index(100), L.PASS):  # 3 passes, 0 bids 75, 1 bids 100, 2
        st.apply(action)
    assert st.current == 0 and st.phase == BID
    agent = strict_pimc(seed=5, worlds=40)
    m = decode_masks(seat_observation(st, 0)["observation"], st.config)
    sampler = DealSampler(L.all_cards & ~m.hand, [Holder(L.hand_size)] * 3 + [Holder(L.nest_size)])
    rng = random.Random(0)
    read = agent._auction_worlds(m, sampler, rng)
    assert len(read) == 40 and all(1 in known and 2 in known for _, known in read)
    uniform = [sampler.sample(rng) for _ in range(200)]
    opp = [agent._declare([m.hand, *d[:3]], d[3], 1, m.dealer, rng)[1] for d in uniform]
    mate = [agent._declare([m.hand, *d[:3]], d[3], 2, m.dealer, rng)[0] for d in uniform]
    assert np.mean([known[1][1] for _, known in read]) > np.mean(opp) + 5
    assert np.mean([known[2][0] for _, known in read]) < np.mean(mate)


def test_a_hand_without_counters_weighs_the_redeal():
    L = layout_for(make_config())
    obs = _auction_obs("R6 R7 Y6 Y7 Y8 G6 G7 B6 B7")
    assert obs["action_mask"][L.REDEAL] == 1
    agent = strict_pimc(seed=2, worlds=16)
    action = agent.act(obs)
    assert set(agent.last_values) == {L.PASS, L.REDEAL, L.BID0}
    assert action == max(agent.last_values, key=lambda a: (agent.last_values[a], a == L.PASS, a == L.REDEAL))


def test_the_bidder_names_its_long_suit_and_keeps_its_trumps():
    """A bidder with eight reds and the Rook Bird names red and lays down none of them (a side 14 may go: the nest
    is the last trick's, which eight trumps take)."""
    L = layout_for(make_config())
    hands, nest = complete_deal({0: "Rook R14 R13 R12 R11 R10 R9 Y14 G14"}, nest="R8 Y6 Y7 G6 B6")
    st = RookState(make_config())
    st.new_game(dealer=3, hands=hands, nest=nest)
    st.apply(L.BID0)  # seat 0 bids 70, the others pass
    for _ in range(3):
        st.apply(L.PASS)
    assert st.phase == DISCARD and st.bidder == 0
    agent = strict_pimc(seed=3, worlds=8)
    laid = []
    while st.phase == DISCARD:
        card = agent.act(seat_observation(st, 0))
        laid.append(card)
        st.apply(card)
    assert st.phase == TRUMP
    assert agent.act(seat_observation(st, 0)) == L.TRUMP0 + 0  # red
    assert len(laid) == 5 and not set(laid) & set(ids("Rook R14 R13 R12 R11 R10 R9 R8"))
    assert agent.last_values and max(agent.last_values.values()) > 0


def test_card_play_takes_the_card_of_the_best_mean_over_the_worlds():
    """At every card-play decision with a choice: the values are the distinct legal cards' (a card left out plays
    like a lower one kept), and the card played is one of the best value (ties: the cheaper card)."""
    e = rook_env.raw_env()
    agents = [strict_pimc(seed=s) for s in range(4)]
    checked = dropped = 0
    for h in range(2):
        e.reset(seed=60 + h)
        g = e.game
        while not g.is_over:
            obs = e.observe(e.agent_selection)
            agent = agents[g.current]
            a = agent.act(obs)
            if g.phase == PLAY and np.count_nonzero(obs["action_mask"]) > 1:
                values = agent.last_values
                legal = set(np.flatnonzero(obs["action_mask"]).tolist())
                assert set(values) <= legal and values[a] == max(values.values())
                dropped += len(legal) - len(values)
                checked += 1
            e.step(a)
    assert checked > 20 and dropped > 0


# ============================================================================ the spec
def test_spec_builds_the_agent_with_its_options():
    a = make_agent("pimc", seed=3)
    assert isinstance(a, PIMCAgent) and a.worlds == 24 and a.rollout == "greedy" and a.seed == 3
    b = make_agent("pimc:worlds=8,rollout=random", seed=3, deck="full")
    assert b.worlds == 8 and b.rollout == "random" and b.config.deck == "full"
    assert parse_pimc("pimc: worlds = 12 ") == {"worlds": 12}


@pytest.mark.parametrize("spec, message", [
    ("pimc:", "write 'pimc' or 'pimc:key=value"),
    ("pimc:worlds=0", "worlds must be a whole number in 1..1000"),
    ("pimc:worlds=many", "worlds must be a whole number"),
    ("pimc:worlds=2,worlds=3", "given twice"),
    ("pimc:rollout=heuristic", "rollout must be one of greedy, random"),
    ("pimc:samples=8", "bad pimc option 'samples=8'"),
    ("pimc:worlds", "bad pimc option 'worlds'"),
])
def test_bad_spec_options_give_clear_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


def test_bad_arguments_and_tables_give_clear_errors():
    with pytest.raises(ValueError, match="Circus Rook"):
        make_agent("pimc", circus_rook="on")
    with pytest.raises(ValueError, match="plays the partnership game"):
        make_agent("pimc", game="call_partner", players=5)
    with pytest.raises(ValueError, match="worlds must be"):
        PIMCAgent(worlds=True)
    with pytest.raises(ValueError, match="seed must be an integer"):
        PIMCAgent(seed="1")
    with pytest.raises(ValueError, match="unknown rule flag"):
        make_agent("pimc", colour="red")
    with pytest.raises(ValueError, match="action mask is empty"):
        PIMCAgent(seed=0).act({"observation": np.zeros(583, np.float32), "action_mask": np.zeros(58, np.int8)})


def test_an_unreadable_observation_falls_back_to_a_legal_action():
    agent = PIMCAgent(seed=0, worlds=2)
    e = rook_env.raw_env()
    e.reset(seed=1)
    obs = e.observe(e.agent_selection)
    bad = {"observation": obs["observation"][:100], "action_mask": obs["action_mask"]}
    assert obs["action_mask"][agent.act(bad)] == 1
    assert agent.fallbacks == 1


def test_act_batch_is_one_act_agent_per_key():
    """Many tables in one agent (the labels' opponent): each row decided as a seat's own act-agent decides it, the
    memories of the hand kept per key however many seats there are; bad batches are refused."""
    tables = 3
    env = RookVectorEnv(tables, backend="numpy")
    env.reset(seed=40)
    batch = strict_pimc(seed=9)
    batch._memory[0] = ("not this seat's",)  # act's own memories are left as they were
    seats = {k: strict_pimc(seed=9) for k in range(4 * tables)}
    done = np.zeros(tables, bool)
    plays = 0
    while not done.all():
        live = np.flatnonzero(~done)
        keys = live * 4 + env.current_player[live]
        acts = env.action_mask.argmax(1)  # a finished table plays on in a new hand, ignored
        acts[live] = batch.act_batch(env.observation[live], env.action_mask[live], keys)
        for t, k in zip(live.tolist(), keys.tolist()):
            alone = seats[k].act({"observation": env.observation[t], "action_mask": env.action_mask[t]})
            assert alone == acts[t]
            plays += env.phase[t] == PLAY
        _, _, term, trunc, _ = env.step(acts)
        done |= term | trunc
    assert plays > 60 and batch.fallbacks == 0 and batch._memory == {0: ("not this seat's",)}
    with pytest.raises(ValueError, match="keys must be distinct"):
        batch.act_batch(env.observation[:2], env.action_mask[:2], np.array([1, 1]))
    with pytest.raises(ValueError, match="expected \\(N, 583\\)"):
        batch.act_batch(np.zeros((2, 5), np.float32), env.action_mask[:2])
