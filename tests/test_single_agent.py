"""The single-agent Gymnasium view (rook_env.single_agent) used by SB3/Tianshou-style libraries."""

import warnings

import numpy as np
import pytest

from rook_env.agents import make_agent
from rook_env.games.partnership.env import AGENTS
from rook_env.games.partnership.rules import OVER
from rook_env.single_agent import SingleAgentRookEnv


def play(env, policy, seed):
    obs, info = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        assert env.observation_space.contains(obs)
        assert info["seat"] in env.learner_seats
        mask = env.action_masks()
        assert mask.any() and np.array_equal(mask, info["action_mask"].astype(bool))
        action = policy.act({"observation": obs, "action_mask": info["action_mask"]})
        obs, reward, term, trunc, info = env.step(action)
        total += reward
        steps += 1
        done = term or trunc
    return total, steps, term, trunc


@pytest.mark.parametrize("seats", [(0, 2), (1, 3), (1,)])
def test_return_is_the_learner_teams_score_diff(seats):
    others = {s: make_agent("heuristic") for s in range(4) if s not in seats}
    env = SingleAgentRookEnv(others, learner_seats=seats)
    for seed in range(15):
        total, steps, term, trunc = play(env, make_agent("random", seed=seed), seed)
        assert term and not trunc and steps > 0
        res = env.aec.game.hand_result
        team = seats[0] & 1
        assert total == res["hand_scores"][team] - res["hand_scores"][1 - team]


def test_game_episode_sums_every_hand_and_truncates():
    env = SingleAgentRookEnv(make_agent("random", seed=3), episode="game", max_hands=4)
    total, _, term, trunc = play(env, make_agent("heuristic"), seed=11)
    scores = env.aec.game.scores
    assert env.aec.game.hands_played == 4 or term
    assert total == scores[0] - scores[1]  # the game started at 0-0
    assert trunc != term


def test_illegal_action_raise_mode_raises_and_leaves_the_state():
    env = SingleAgentRookEnv(make_agent("random", seed=0), illegal_action="raise")
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(illegal)
    assert np.array_equal(env.aec.observe(AGENTS[info["seat"]])["observation"], obs)  # nothing was played
    play(env, make_agent("random", seed=1), seed=0)
    assert env.aec.game.phase == OVER
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_illegal_action_terminate_mode_ends_with_the_penalty():
    env = SingleAgentRookEnv(make_agent("random", seed=0), illegal_reward=-3.0)  # "terminate" is the default
    obs, info = env.reset(seed=0)
    seat = info["seat"]
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match=f"illegal action {illegal}"):
        obs2, reward, term, trunc, info2 = env.step(np.int64(illegal))
    assert (reward, term, trunc) == (-3.0, True, False)
    assert info2["illegal_action"] == {"seat": seat, "action": illegal}
    assert not info2["action_mask"].any() and not env.action_masks().any()
    assert env.observation_space.contains(obs2)
    assert env.aec.game.phase != OVER  # the hand was not finished behind the learner's back
    with pytest.raises(RuntimeError, match="reset"):
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
    env.reset(seed=0)  # a new episode plays normally
    assert play(env, make_agent("random", seed=1), seed=0)[2]


@pytest.mark.parametrize("mode", ["terminate", "raise"])
def test_actions_outside_the_space_raise_in_both_modes(mode):
    env = SingleAgentRookEnv(make_agent("random", seed=0), illegal_action=mode)
    env.reset(seed=0)
    for bad in (env.action_space.n, -1, 1.5, None, True):
        with pytest.raises(ValueError):
            env.step(bad)


def test_step_and_masks_before_reset_raise():
    env = SingleAgentRookEnv(make_agent("random"))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        env.action_masks()


def test_registered_id_and_gymnasium_check_env():
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    from rook_env.single_agent import SINGLE_AGENT_ID

    env = gymnasium.make(SINGLE_AGENT_ID, opponents="random")
    assert isinstance(env.unwrapped, SingleAgentRookEnv)
    assert env.unwrapped.metadata["name"] == SINGLE_AGENT_ID == env.spec.id
    total, _, term, _ = play(env.unwrapped, make_agent("heuristic"), seed=3)
    assert term
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*\[rook_env\] illegal action")  # check_env steps samples
        check_env(gymnasium.make(SINGLE_AGENT_ID).unwrapped)  # raises on any failed check
        check_env(SingleAgentRookEnv("random", learner_seats=(1,), deck="full"))


def test_spec_opponents_are_reseeded_by_reset():
    def run(seed):
        env = SingleAgentRookEnv("random")
        return play(env, make_agent("heuristic"), seed=seed)

    assert run(7) == run(7)
    assert len({run(s) for s in range(6)}) > 1


def test_unknown_illegal_action_mode_is_refused():
    with pytest.raises(ValueError, match="illegal_action"):
        SingleAgentRookEnv("random", illegal_action="remap")


def test_same_seed_same_episode():
    def run():
        env = SingleAgentRookEnv(make_agent("heuristic"))
        return play(env, make_agent("random", seed=5), seed=42)

    assert run() == run()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"learner_seats": (0, 1)}, "one team"),
        ({"learner_seats": (0, 0)}, "distinct"),
        ({"learner_seats": (4,)}, "distinct seats"),
        ({"opponents": {1: object(), 3: object()}}, "act"),
        ({"opponents": {1: None}}, "missing"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    kwargs = {"opponents": make_agent("random"), **kwargs}
    with pytest.raises(ValueError, match=match):
        SingleAgentRookEnv(**kwargs)


def test_agents_list_is_the_aec_one():
    env = SingleAgentRookEnv(make_agent("random"))
    assert env.aec.possible_agents == list(AGENTS)


def test_max_hands_is_an_env_argument_not_a_rule_flag_of_the_opponents():
    """``max_hands`` goes to the environment (game episodes are cut after that many hands); the
    opponents built from a spec get the rule flags only."""
    import numpy as np

    env = SingleAgentRookEnv(opponents="random", episode="game", max_hands=2)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(1000):
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if term or trunc:
            break
    assert term or trunc
    assert env.aec.game.hands_played <= 2
