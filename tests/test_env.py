"""Environment behaviour: illegal and malformed input, seeding, copying, the global state, infos."""

import copy
import pickle
import random
import warnings

import numpy as np
import pytest
from helpers import DEAL_90_30, L, complete_deal, play_designed_hand, step_text

import rook_env
from rook_env.games.partnership.cards import bits

MAKERS = [rook_env.raw_env, rook_env.env]


def fresh(make=rook_env.raw_env, **flags):
    e = make(**flags)
    e.reset(seed=0)
    return e


# ------------------------------------------------------------------------------ illegal actions
def test_raw_env_illegal_action_raises_with_details():
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "bid 90")
    bad = L.parse_action("bid 85")
    with pytest.raises(ValueError) as exc:
        e.step(bad)
    msg = str(exc.value)
    assert str(bad) in msg and "bid 85" in msg  # the action
    assert "'bid'" in msg and "player_1" in msg  # the phase and the seat
    assert "41 (pass)" in msg and "bid 95" in msg and "bid 120" in msg  # the legal actions
    # Nothing changed: player_1 may still act.
    assert e.agent_selection == "player_1" and len(e.unwrapped.game.bid_history) == 1
    card = hands[1][0]
    with pytest.raises(ValueError, match=L.card_name(card)):
        e.step(card)  # a card in the auction


def test_raw_env_illegal_card_in_play_lists_legal_cards():
    e = rook_env.raw_env()
    hands, nest = complete_deal({0: "R14", 1: "R5 Y5"})
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "bid 70", "pass", "pass", "pass", *[L.card_name(c) for c in nest], "trump black", "R14")
    with pytest.raises(ValueError) as exc:
        step_text(e, "Y5")
    msg = str(exc.value)
    assert "Y5" in msg and "'play'" in msg and "R5" in msg and "Y6" not in msg.split("legal actions")[1]


def test_env_illegal_action_ends_episode_with_penalty():
    e = rook_env.env()
    e.reset(seed=1)
    offender = e.agent_selection
    legal = set(np.flatnonzero(e.observe(offender)["action_mask"]).tolist())
    bad = next(a for a in range(L.n_actions) if a not in legal)
    with pytest.warns(UserWarning, match="illegal action"):
        e.step(bad)
    assert all(e.terminations.values())
    assert e.rewards[offender] == -1 and all(r == 0 for a, r in e.rewards.items() if a != offender)
    assert e._cumulative_rewards[offender] == -1
    assert e.infos[offender]["illegal_action"] == {"agent": offender, "action": bad}
    # The episode winds down with None steps.
    n = 0
    while e.agents:
        assert e.last()[2] or e.last()[3]
        e.step(None)
        n += 1
    assert n == 4


def test_env_illegal_reward_configurable():
    e = rook_env.env(illegal_reward=-7)
    e.reset(seed=1)
    offender = e.agent_selection
    with pytest.warns(UserWarning):
        e.step(L.TRUMP0)  # naming trump in the auction
    assert e.rewards[offender] == -7


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("action", [58, -1, 1000, 3.5, "3", None, [41]])
def test_out_of_range_or_non_integer_actions_raise(make, action):
    e = fresh(make)
    with pytest.raises(ValueError):
        e.step(action)
    assert not any(e.terminations.values())


@pytest.mark.parametrize("make", MAKERS)
def test_numpy_integer_actions_accepted(make):
    e = fresh(make)
    e.step(np.int64(L.PASS))
    assert len(e.unwrapped.game.bid_history) == 1


def test_env_step_and_observe_before_reset_raise():
    e = rook_env.env()
    with pytest.raises(RuntimeError, match="reset"):
        e.step(L.PASS)
    with pytest.raises(RuntimeError, match="reset"):
        e.observe("player_0")


# ------------------------------------------------------------------------------ malformed deals
def _deal():
    hands, nest = complete_deal({})
    return [list(h) for h in hands], list(nest)


def _bad_deals():
    out = []
    h, n = _deal()
    h[1][0] = h[0][0]
    out.append(("duplicate", h, n, 0, "twice"))
    h, n = _deal()
    n[0] = h[2][3]
    out.append(("duplicate in nest", h, n, 0, "twice"))
    h, n = _deal()
    h[0] = h[0][:8]
    out.append(("short hand", h, n + [], 0, "9 cards"))
    h, n = _deal()
    out.append(("short nest", h, n[:4], 0, "5 cards"))
    h, n = _deal()
    out.append(("three hands", h[:3], n, 0, "4"))
    h, n = _deal()
    h[3][0] = 41
    out.append(("unknown id", h, n, 0, "41"))
    h, n = _deal()
    h[3][0] = -1
    out.append(("negative id", h, n, 0, "-1"))
    h, n = _deal()
    h[3][0] = "R5"
    out.append(("name not id", h, n, 0, "R5"))
    h, n = _deal()
    out.append(("dealer 4", h, n, 4, "dealer"))
    out.append(("dealer -1", h, n, -1, "dealer"))
    out.append(("dealer str", h, n, "0", "dealer"))
    out.append(("hands without nest", h, None, 0, "nest"))
    return out


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("case", _bad_deals(), ids=lambda c: c[0])
def test_malformed_deals_raise(make, case):
    _, hands, nest, dealer, words = case
    e = make()
    options = {"hands": hands, "dealer": dealer}
    if nest is not None:
        options["nest"] = nest
    with pytest.raises(ValueError, match=words):
        e.reset(options=options)


@pytest.mark.parametrize("scores", [[1, 2, 3], [1.5, 0], "00", [True, 0], 300])
def test_malformed_scores_raise(scores):
    with pytest.raises(ValueError, match="scores"):
        rook_env.raw_env().reset(options={"scores": scores})


@pytest.mark.parametrize("hands,nest", [(5, [0, 1, 2, 3, 4]), ([[0] * 9] * 4, 7)])
def test_non_sequence_deal_raises_value_error(hands, nest):
    with pytest.raises(ValueError, match="lists of card ids"):
        rook_env.raw_env().reset(options={"hands": hands, "nest": nest})


def test_numpy_deal_dealer_and_scores_accepted():
    """Card ids, dealer and scores given as numpy integers (e.g. from a permutation) are ids, not errors."""
    perm = np.random.default_rng(0).permutation(41)
    e = rook_env.raw_env(episode="game")
    e.reset(options={"hands": [perm[i * 9:(i + 1) * 9] for i in range(4)], "nest": perm[36:],
                     "dealer": np.int64(2), "scores": np.array([10, -20])})
    game = e.unwrapped.game
    assert [bits(h) for h in game.hands] == [sorted(perm[i * 9:(i + 1) * 9].tolist()) for i in range(4)]
    assert game.dealer == 2 and type(game.dealer) is int and game.scores == [10, -20]
    assert all(type(x) is int for x in game.scores)
    assert e.unwrapped.decode("player_1").scores == (-20, 10)


def test_fixed_deal_is_used_as_given():
    hands, nest = complete_deal({2: "Rook B14 B13"}, nest="R5 R6 R7 R8 R9")
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 1})
    game = e.unwrapped.game
    assert [bits(m) for m in game.hands] == [sorted(h) for h in hands] and bits(game.nest) == sorted(nest)
    assert game.dealer == 1 and e.agent_selection == "player_2"


def test_unknown_reset_option_warns():
    e = rook_env.raw_env()
    with pytest.warns(UserWarning, match="bogus"):
        e.reset(options={"bogus": 1})


# ------------------------------------------------------------------------------ seeding
def _deal_of(e):
    g = e.unwrapped.game
    return list(g.hands), g.nest, g.dealer


def test_same_seed_same_deals():
    a, b = rook_env.raw_env(), rook_env.raw_env()
    a.reset(seed=42)
    b.reset(seed=42)
    assert _deal_of(a) == _deal_of(b)
    a.reset(seed=42)
    first = _deal_of(a)
    assert first == _deal_of(b)
    # Unseeded resets continue the stream: new deals, still equal across the two envs.
    a.reset()
    b.reset()
    assert _deal_of(a) == _deal_of(b) and _deal_of(a) != first
    c = rook_env.raw_env()
    c.reset(seed=43)
    assert _deal_of(c) != _deal_of(b)


def test_same_seed_same_episode():
    def trace(seed):
        e = rook_env.raw_env(episode="game", target_score=150)
        e.reset(seed=seed)
        rng = random.Random(0)
        out = []
        for _ in range(300):
            if all(e.terminations.values()):
                break
            a = rng.choice(e.unwrapped.game.legal_actions())
            e.step(a)
            out.append((a, tuple(e.rewards.values()), e.unwrapped.game.deals))
        return out

    assert trace(5) == trace(5)
    assert trace(5) != trace(6)


# ------------------------------------------------------------------------------ copying
@pytest.mark.parametrize("make", MAKERS)
def test_deepcopy_continues_identically_and_independently(make):
    e = make(episode="game", target_score=150)
    e.reset(seed=8)
    rng = random.Random(8)
    for _ in range(30):
        e.step(rng.choice(e.unwrapped.game.legal_actions()))
    before = {a: e.observe(a)["observation"].copy() for a in e.agents}
    c = copy.deepcopy(e)
    assert c.unwrapped.game is not e.unwrapped.game
    # Stepping the copy leaves the original alone.
    c.step(c.unwrapped.game.legal_actions()[0])
    assert all(np.array_equal(e.observe(a)["observation"], before[a]) for a in e.agents)
    c = copy.deepcopy(e)
    r1, r2 = random.Random(1), random.Random(1)
    for _ in range(400):  # across hand ends: the next deals come from the copied RNG
        done = all(e.terminations.values())
        assert done == all(c.terminations.values())
        if done:
            break
        assert e.agent_selection == c.agent_selection
        for a in e.agents:
            oe, oc = e.observe(a), c.observe(a)
            assert np.array_equal(oe["observation"], oc["observation"])
            assert np.array_equal(oe["action_mask"], oc["action_mask"])
        assert e.rewards == c.rewards and e.infos == c.infos
        e.step(r1.choice(e.unwrapped.game.legal_actions()))
        c.step(r2.choice(c.unwrapped.game.legal_actions()))
    assert e.unwrapped.game.hands_played >= 2 and e.unwrapped.game.scores == c.unwrapped.game.scores


@pytest.mark.parametrize("make", MAKERS)
def test_pickle_round_trip(make):
    e = make(deck="full", rook_rank="low", episode="game")
    e.reset(seed=3)
    e.step(e.unwrapped.game.legal_actions()[0])
    p = pickle.loads(pickle.dumps(e))
    assert type(p) is type(e) and p.unwrapped.config == e.unwrapped.config
    e.reset(seed=11)
    p.reset(seed=11)
    assert _deal_of(p) == _deal_of(e)
    for a in e.agents:
        assert np.array_equal(p.observe(a)["observation"], e.observe(a)["observation"])


# ------------------------------------------------------------------------------ global state
def test_state_contains_hidden_hands():
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    size, n = e.unwrapped.obs_layout.size, L.n_cards
    for me in range(4):
        s = e.unwrapped.state_for(f"player_{me}")
        assert s.shape == e.unwrapped.state_space.shape == (size + 5 * n,)
        assert np.array_equal(s[:size], e.observe(f"player_{me}")["observation"])
        for k in (1, 2, 3):
            block = s[size + (k - 1) * n: size + k * n]
            assert sorted(np.flatnonzero(block).tolist()) == sorted(hands[(me + k) % 4])
        assert sorted(np.flatnonzero(s[size + 3 * n: size + 4 * n]).tolist()) == sorted(nest)
        assert not s[size + 4 * n:].any()
    assert np.array_equal(e.unwrapped.state(), e.unwrapped.state_for("player_0"))
    d = e.unwrapped.game.to_dict()
    assert d["hands"] == [sorted(h) for h in hands] and d["nest"] == sorted(nest)


def test_state_shows_discards_after_the_discard():
    hands, nest = complete_deal({})
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "bid 70", "pass", "pass", "pass")
    discards = hands[0][:5]
    for c in discards:
        e.step(c)
    s = e.unwrapped.state()
    size, n = e.unwrapped.obs_layout.size, L.n_cards
    assert sorted(np.flatnonzero(s[size + 4 * n:]).tolist()) == sorted(discards)


# ------------------------------------------------------------------------------ infos and flow
def test_infos_at_hand_end():
    e = rook_env.raw_env()
    play_designed_hand(e, DEAL_90_30, 85)
    for a in e.agents:
        hand = e.infos[a]["hand"]
        for key in ("bidder", "bid", "trump", "counters", "hand_scores", "made"):
            assert key in hand
        assert (hand["bidder"], hand["bid"], hand["trump"], hand["counters"], hand["hand_scores"], hand["made"]) == (
            0, 85, 3, [90, 30], [90, 30], True)
    reward, term, trunc, info = e.last()[1:]
    assert term and not trunc and info["hand"]["bid"] == 85


def test_rewards_only_at_hand_end_and_cleared_after():
    e = rook_env.raw_env(episode="game")
    e.reset(seed=4)
    rng = random.Random(4)
    game = e.unwrapped.game
    saw_end = False
    for _ in range(400):
        played = game.hands_played
        e.step(rng.choice(game.legal_actions()))
        if game.hands_played != played:
            saw_end = True
            res = game.hand_result
            d = res["hand_scores"]
            assert e.rewards["player_0"] == d[0] - d[1] and e.rewards["player_1"] == d[1] - d[0]
            # The next step clears them.
            e.step(rng.choice(game.legal_actions()))
            assert all(r == 0 for r in e.rewards.values())
            break
        assert all(r == 0 for r in e.rewards.values())
    assert saw_end


def test_agent_iter_runs_a_hand_and_terminates():
    e = rook_env.env()
    e.reset(seed=9)
    rng = random.Random(9)
    total = {a: 0.0 for a in e.possible_agents}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for agent in e.agent_iter(max_iter=500):
            obs, reward, term, trunc, info = e.last()
            total[agent] += reward
            if term or trunc:
                e.step(None)
            else:
                e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert not e.agents
    assert total["player_0"] == -total["player_1"] == total["player_2"] == -total["player_3"]


# ---------------------------------------------------------------- lead's follow-ups
@pytest.mark.parametrize("make", [rook_env.raw_env, rook_env.env])
def test_step_and_observe_before_reset_raise_clearly(make):
    e = make()
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        e.observe("player_0")


@pytest.mark.parametrize("make", [rook_env.raw_env, rook_env.env])
def test_bool_action_is_not_taken_for_an_id(make):
    e = make()
    e.reset(seed=0)
    with pytest.raises(ValueError, match="not an integer action id"):
        e.step(True)


def test_numpy_integer_flags_are_accepted():
    e = rook_env.raw_env(target_score=np.int64(200), min_bid=np.int32(70))
    assert e.config.target_score == 200 and type(e.config.target_score) is int


def test_hand_info_is_cleared_once_the_seat_has_acted_after_it():
    import random

    e = rook_env.raw_env(episode="game", max_hands=3)
    e.reset(seed=5)
    rng = random.Random(0)
    seen_at = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            continue
        if "hand" in info:
            seen_at[agent] = e.game.hands_played
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if e.agents and agent in e.infos and e.game.hands_played == seen_at.get(agent):
            assert e.infos[agent] == {}, "the finished hand's info must not linger after the seat acted"
    assert seen_at, "some seat saw a finished hand's info at its turn"
