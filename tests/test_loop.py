"""rook_env.core.loop: the one play loop (reset, observe, act, step) with its hooks and its error on an
illegal action; the agents registry (make_agent's errors) and the protocol module's imports."""

from __future__ import annotations

import ast
import os

import numpy as np
import pytest

import rook_env
from rook_env.agents import RandomAgent, make_agent
from rook_env.core.loop import IllegalActionError, play_episode, play_turns, reset_agents, seat_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Recording(RandomAgent):
    def __init__(self, seed=None):
        super().__init__(seed)
        self.resets = 0

    def reset(self):
        self.resets += 1


def test_play_episode_plays_a_hand_and_reports_every_step():
    env = rook_env.raw_env()
    agent = Recording(0)  # one object may play every seat
    steps = []
    n = play_episode(env, [agent] * 4, seed=3, on_step=steps.append)
    assert n == len(steps) > 9 * 4 and agent.resets == 1
    assert all(env.terminations.values()) and "hand" in env.infos["player_0"]
    for s in steps:
        assert s.agent == f"player_{s.seat}" and s.observation["action_mask"][s.action] == 1
    # a seat-indexed list and a mapping by agent name play the same hand from the same seeds
    by_list, by_name = [], []
    play_episode(env, [RandomAgent(s) for s in range(4)], seed=5, on_step=by_list.append)
    play_episode(env, {f"player_{s}": RandomAgent(s) for s in range(4)}, seed=5, on_step=by_name.append)
    assert [(s.seat, s.action) for s in by_list] == [(s.seat, s.action) for s in by_name]


def test_illegal_action_raises_naming_the_seat_or_goes_to_on_illegal():
    class Cheater:
        name = "cheater"

        def act(self, observation, info=None):
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    env = rook_env.raw_env()
    env.reset(seed=0)
    first = env.game.current
    agents = {s: RandomAgent(s) for s in range(4)}
    agents[first] = Cheater()
    with pytest.raises(IllegalActionError, match=rf"player_{first} \(seat {first}, agent cheater\) chose action") as exc:
        play_turns(env, agents)
    assert exc.value.seat == first and isinstance(exc.value, ValueError)
    seen = []

    def lowest_legal(step, error):
        seen.append((step.seat, str(error)))
        return int(np.flatnonzero(step.observation["action_mask"])[0])

    play_episode(env, agents, seed=0, on_illegal=lowest_legal)
    assert seen and all(s == first for s, _ in seen) and all(env.terminations.values())


def test_stop_hands_control_back_before_a_seat_acts():
    env = rook_env.raw_env()
    env.reset(seed=1)
    agents = [RandomAgent(s) for s in range(4)]
    while not all(env.terminations.values()):
        play_turns(env, agents, stop=lambda seat: seat == 0)
        if all(env.terminations.values()):
            break
        assert env.game.current == 0
        env.step(agents[0].act(env.observe("player_0")))


def test_seat_table_rejects_missing_or_unknown_seats():
    env = rook_env.raw_env()
    with pytest.raises(ValueError, match="one agent per seat"):
        seat_table(env, [RandomAgent()] * 3)
    with pytest.raises(ValueError, match="unknown seats"):
        seat_table(env, {7: RandomAgent()})
    with pytest.raises(ValueError, match="no act"):
        seat_table(env, [object()] * 4)
    reset_agents([object()])  # agents without reset() are fine


# ------------------------------------------------------------------------------ the agents package
@pytest.mark.parametrize("spec, error", [(None, TypeError), (3, TypeError), ("nonsense", ValueError)])
def test_make_agent_rejects_bad_specs_by_name(spec, error):
    with pytest.raises(error, match=repr(spec)):
        make_agent(spec)


@pytest.mark.parametrize("spec", ["random", "heuristic"])
def test_make_agent_rejects_a_misspelt_flag_for_every_agent(spec):
    with pytest.raises(ValueError, match="unknown rule flag.*decks"):
        make_agent(spec, decks="full")
    make_agent(spec, deck="full")  # the right name is accepted


def test_protocol_module_imports_no_agent_implementation():
    with open(os.path.join(ROOT, "rook_env", "agents", "base.py")) as f:
        tree = ast.parse(f.read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
    assert imported <= {"__future__", "typing", "numpy"}, imported


def test_rllib_spec_without_ray_names_the_missing_extra():
    """``make_agent("rllib:<dir>")`` goes to the RLlib loader; without ray the error says what is missing."""
    import importlib.util

    from rook_env.agents import make_agent

    if importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed here: tests/integrations/test_rllib.py covers the loader")
    with pytest.raises(ImportError, match="ray"):
        make_agent("rllib:/nonexistent/checkpoint")
