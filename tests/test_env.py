"""Environment behaviour of every game: illegal and malformed input, seeding, copying, the global state,
rewards and infos (call-your-partner Rook's at 4, 5 and 6 players), rendering as text."""

import copy
import pickle
import random
import warnings

import numpy as np
import pytest
from helpers import (
    DEAL_90_30,
    GAMES,
    L,
    complete_deal,
    cp_deal,
    make_env,
    over_games,
    per_game,
    play_designed_hand,
    step_text,
    walk,
)

import rook_env
from rook_env.games import call_partner
from rook_env.games.call_partner.config import CallPartnerConfig
from rook_env.games.call_partner.rules import OVER as CP_OVER
from rook_env.games.partnership.cards import bits

MAKERS = [rook_env.raw_env, rook_env.env]
# A game's rule flags for a table that plays whole games to a low target.
GAME_EPISODES = per_game({"partnership": {"episode": "game", "target_score": 150},
                          "call_partner": {"players": 4, "episode": "game", "target_score": 150}})


def fresh(make=rook_env.raw_env, **flags):
    e = make(**flags)
    e.reset(seed=0)
    return e


# ------------------------------------------------------------------------------ illegal actions
@pytest.mark.partnership
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


@pytest.mark.partnership
def test_raw_env_illegal_card_in_play_lists_legal_cards():
    e = rook_env.raw_env()
    hands, nest = complete_deal({0: "R14", 1: "R5 Y5"})
    e.reset(options={"hands": hands, "nest": nest, "dealer": 3})
    step_text(e, "bid 70", "pass", "pass", "pass", *[L.card_name(c) for c in nest], "trump black", "R14")
    with pytest.raises(ValueError) as exc:
        step_text(e, "Y5")
    msg = str(exc.value)
    assert "Y5" in msg and "'play'" in msg and "R5" in msg and "Y6" not in msg.split("legal actions")[1]


@pytest.mark.partnership
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


@pytest.mark.partnership
def test_env_illegal_reward_configurable():
    e = rook_env.env(illegal_reward=-7)
    e.reset(seed=1)
    offender = e.agent_selection
    with pytest.warns(UserWarning):
        e.step(L.TRUMP0)  # naming trump in the auction
    assert e.rewards[offender] == -7


# Actions outside each game's action space (58 and 86 actions at the default tables) or not integers.
BAD_ACTIONS = per_game({"partnership": [58, -1, 1000, 3.5, "3", None, [41]],
                        "call_partner": [86, -1, 1000, 3.5, "3", None, [57]]})


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("game, action", over_games(BAD_ACTIONS, ids=repr))
def test_out_of_range_or_non_integer_actions_raise(make, game, action):
    e = fresh(make, game=game)
    with pytest.raises(ValueError):
        e.step(action)
    assert not any(e.terminations.values())


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("game", GAMES)
def test_numpy_integer_actions_accepted(make, game):
    e = fresh(make, game=game)
    e.step(np.int64(e.unwrapped.layout.PASS))
    assert len(e.unwrapped.game.bid_history) == 1


@pytest.mark.parametrize("game", GAMES)
def test_env_step_and_observe_before_reset_raise(game):
    e = rook_env.env(game=game)
    with pytest.raises(RuntimeError, match="reset"):
        e.step(e.unwrapped.layout.PASS)
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


@pytest.mark.partnership
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


@pytest.mark.partnership
@pytest.mark.parametrize("scores", [[1, 2, 3], [1.5, 0], "00", [True, 0], 300])
def test_malformed_scores_raise(scores):
    with pytest.raises(ValueError, match="scores"):
        rook_env.raw_env().reset(options={"scores": scores})


@pytest.mark.partnership
@pytest.mark.parametrize("hands,nest", [(5, [0, 1, 2, 3, 4]), ([[0] * 9] * 4, 7)])
def test_non_sequence_deal_raises_value_error(hands, nest):
    with pytest.raises(ValueError, match="lists of card ids"):
        rook_env.raw_env().reset(options={"hands": hands, "nest": nest})


@pytest.mark.partnership
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


@pytest.mark.partnership
def test_fixed_deal_is_used_as_given():
    hands, nest = complete_deal({2: "Rook B14 B13"}, nest="R5 R6 R7 R8 R9")
    e = rook_env.raw_env()
    e.reset(options={"hands": hands, "nest": nest, "dealer": 1})
    game = e.unwrapped.game
    assert [bits(m) for m in game.hands] == [sorted(h) for h in hands] and bits(game.nest) == sorted(nest)
    assert game.dealer == 1 and e.agent_selection == "player_2"


@pytest.mark.parametrize("game", GAMES)
def test_unknown_reset_option_warns(game):
    e = rook_env.raw_env(game=game)
    with pytest.warns(UserWarning, match="bogus"):
        e.reset(options={"bogus": 1})


# ------------------------------------------------------------------------------ seeding
def _deal_of(e):
    g = e.unwrapped.game
    return list(g.hands), g.nest, g.dealer


@pytest.mark.parametrize("game", GAMES)
def test_same_seed_same_deals(game):
    a, b = rook_env.raw_env(game=game), rook_env.raw_env(game=game)
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
    c = rook_env.raw_env(game=game)
    c.reset(seed=43)
    assert _deal_of(c) != _deal_of(b)


@pytest.mark.parametrize("game", GAMES)
def test_same_seed_same_episode(game):
    def trace(seed):
        e = rook_env.raw_env(game=game, **GAME_EPISODES[game])
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
@pytest.mark.parametrize("game", GAMES)
def test_deepcopy_continues_identically_and_independently(make, game):
    e = make(game=game, **GAME_EPISODES[game])
    e.reset(seed=8)
    walk(e, 8, 30)
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


# Tables away from each game's defaults, whole games.
PICKLED = per_game({"partnership": {"deck": "full", "rook_rank": "low", "episode": "game"},
                    "call_partner": {"players": 6, "deck": "no_twos_to_fours", "episode": "game"}})


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("game", GAMES)
def test_pickle_round_trip(make, game):
    e = make(game=game, **PICKLED[game])
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
@pytest.mark.partnership
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


@pytest.mark.partnership
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
@pytest.mark.partnership
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


@pytest.mark.partnership
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


@pytest.mark.partnership
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
@pytest.mark.parametrize("game", GAMES)
def test_step_and_observe_before_reset_raise_clearly(make, game):
    e = make(game=game)
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        e.observe("player_0")


@pytest.mark.parametrize("make", [rook_env.raw_env, rook_env.env])
@pytest.mark.parametrize("game", GAMES)
def test_bool_action_is_not_taken_for_an_id(make, game):
    e = make(game=game)
    e.reset(seed=0)
    with pytest.raises(ValueError, match="not an integer action id"):
        e.step(True)


@pytest.mark.partnership
def test_numpy_integer_flags_are_accepted():
    e = rook_env.raw_env(target_score=np.int64(200), min_bid=np.int32(70))
    assert e.config.target_score == 200 and type(e.config.target_score) is int


@pytest.mark.parametrize("game", GAMES)
def test_hand_info_is_cleared_once_the_seat_has_acted_after_it(game):
    e = make_env(game, episode="game", max_hands=3)
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


# ============================================================================== call-your-partner Rook
@pytest.mark.call_partner
@pytest.mark.parametrize("players", [4, 5, 6])
@pytest.mark.parametrize("reward", ["score_diff", "team_score", "win_loss"])
def test_rewards_and_infos_at_hand_end(players, reward):
    e = walk("call_partner", players, flags={"players": players, "reward": reward})
    game = e.game
    infos_at_end = {a: e.infos[a] for a in e.agents}
    r = game.hand_result
    delta = r["hand_scores"]
    for s, a in enumerate(e.agents):
        mean_others = (sum(delta) - delta[s]) / (players - 1)
        expect = {"score_diff": delta[s] - mean_others, "team_score": delta[s],
                  "win_loss": np.sign(delta[s] - mean_others)}[reward]
        assert e.rewards[a] == pytest.approx(expect)
        info = infos_at_end[a]["hand"]
        assert info["bidder"] == game.bidder and info["partners"] == list(game.partners)
        assert info["bid"] == r["bid"] and info["hand_scores"] == delta and info["scores"] == game.scores
    if reward == "score_diff":
        assert sum(e.rewards.values()) == pytest.approx(0.0)


@pytest.mark.call_partner
def test_score_diff_worked_example():
    """The docstring's example: bid 150 made with 160 by the bidder and one partner of five."""
    e = call_partner.raw_env()
    e.reset(seed=0)
    game = e.game
    game.high_bid = game.L.bids.index(150)
    game.bidder, game.partners, game.rook_high = 0, (2,), 1
    game.points = [100, 0, 60, 40, 0]
    game._finish_hand()
    e._hand_finished()
    assert [e.rewards[a] for a in e.agents] == [90, -60, 90, -60, -60]


@pytest.mark.call_partner
def test_win_loss_in_game_episodes():
    e = call_partner.raw_env(players=4, episode="game", reward="win_loss", target_score=150)
    e.reset(seed=3)
    rng = random.Random(3)
    total = {a: 0 for a in e.agents}
    while not all(e.terminations.values()):
        e.step(rng.choice(e.game.legal_actions()))
        for a in e.agents:
            total[a] += e.rewards[a]
    w = e.game.winner
    assert w >= 0 and e.game.phase == CP_OVER
    assert [total[a] for a in e.agents] == [1 if s == w else -1 for s in range(4)]


@pytest.mark.call_partner
def test_illegal_action_raw_raises_and_checked_ends_episode():
    e = call_partner.raw_env()
    e.reset(seed=1)
    with pytest.raises(ValueError, match=r"illegal action 0 \(R1\) for player_\d in phase 'bid'; legal actions: 57"):
        e.step(0)
    with pytest.raises(ValueError, match="outside the action space Discrete\\(86\\)"):
        e.step(86)
    with pytest.raises(ValueError, match="not an integer"):
        e.step("pass")
    c = call_partner.env()
    c.reset(seed=1)
    offender = c.agent_selection
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c.step(0)
    assert any("illegal action 0" in str(x.message) for x in w)
    assert all(c.terminations.values())
    assert c._cumulative_rewards[offender] == -1.0
    assert all(c._cumulative_rewards[a] == 0 for a in c.agents if a != offender)


@pytest.mark.call_partner
def test_fixed_deal_and_options():
    cfg = CallPartnerConfig(players=6)
    hands, nest = cp_deal(cfg, {0: "R1 Rook"})
    e = call_partner.raw_env(players=6)
    e.reset(options={"hands": hands, "nest": nest, "dealer": 5, "scores": [1, 2, 3, 4, 5, 6]})
    assert e.agent_selection == "player_0" and e.game.hands[0] == sum(1 << c for c in hands[0])
    assert e.game.scores == [1, 2, 3, 4, 5, 6]
    with pytest.raises(ValueError, match=r"hands\[0\] must hold 9 cards"):
        e.reset(options={"hands": [h[:-1] for h in hands], "nest": nest})
    with pytest.warns(UserWarning, match="ignoring unknown reset option"):
        e.reset(options={"hand": 1})
    with pytest.raises(ValueError, match="players=7 is not allowed"):
        call_partner.raw_env(players=7)
    with pytest.raises(ValueError, match="rook_rank"):
        call_partner.env(rook_rank="low")


@pytest.mark.call_partner
def test_make_env_dispatch_and_spaces():
    e = call_partner.make_env(players=6, deck="no_twos_to_fours")
    assert isinstance(e, call_partner.CheckedCallPartnerEnv)
    e.reset(seed=0)
    assert e.possible_agents == [f"player_{i}" for i in range(6)]
    assert e.action_space("player_0").n == 45 + 1 + 21 + 4 + 2 + 1
    assert e.observation_space("player_3")["observation"].shape == (e.obs_layout.size,)
    assert type(call_partner.make_env(checked=False)) is call_partner.raw_env
    assert e.state().shape == e.state_space.shape


@pytest.mark.call_partner
def test_render_ansi_and_private_view():
    e = call_partner.raw_env(render_mode="ansi")
    e.reset(seed=2)
    rng = random.Random(2)
    while e.game.phase != CP_OVER and not e.game.called:
        e.step(rng.choice(e.game.legal_actions()))
    text = e.render()
    assert "call-your-partner Rook, 5 players" in text and "called:" in text and "P4 hand" in text
    from rook_env.games.call_partner.render import render_text

    b = e.game.bidder
    private = render_text(e.game, seat=b)
    assert f"P{b} hand" in private and f"P{(b + 1) % 5} hand" not in private
    assert "partners: unknown" in private or "partners: P" in private
