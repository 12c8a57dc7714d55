"""The shipped agents' actions on fixed observations: the fixture ``tests/data/agent_actions.npz`` and its check.

Hands are dealt by seed and driven by seeded random players (independent of the agents under test); every decision
of every seat is recorded as (hand, seat, observation, action mask). Each agent under test gets one instance per
seat and hand, sees that seat's decisions in order (forced ones included, as at a table: the heuristic's card
memory follows them) and its choices are stored per spec. ``tests/test_agents_actions.py`` replays the
observations and asserts the same choices; ``python tests/agent_actions.py`` rewrites the fixture (only when an
agent's play is meant to change).
"""

from __future__ import annotations

import os
import sys

import numpy as np

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "agent_actions.npz")
# game -> (table flags, hands, specs); "best" is search with 96 worlds, so it sees fewer hands
CASES = {
    "partnership": ({}, 6, ("heuristic", "ppo")),
    "partnership_best": ({}, 3, ("best",)),
    "call_partner": ({"game": "call_partner", "players": 5}, 4, ("call_partner_heuristic", "ppo", "best")),
}


def record_positions(flags: dict, hands: int, seed: int = 4400) -> dict[str, np.ndarray]:
    """Every decision of ``hands`` hands dealt from ``seed`` on, driven by seeded random players."""
    from rook_env.agents import RandomAgent
    from rook_env.games import get_game

    game = flags.get("game", "partnership")
    rules = {k: v for k, v in flags.items() if k != "game"}
    env = get_game(game).load("raw_env")(**rules)
    rows: dict[str, list] = {"hand": [], "seat": [], "observation": [], "action_mask": []}
    for hand in range(hands):
        env.reset(seed=seed + hand)
        drivers = {a: RandomAgent(seed=seed * 10 + hand * 7 + i) for i, a in enumerate(env.possible_agents)}
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            rows["hand"].append(hand)
            rows["seat"].append(env.possible_agents.index(name))
            rows["observation"].append(np.asarray(obs["observation"]).copy())
            rows["action_mask"].append(np.asarray(obs["action_mask"]).astype(bool))
            env.step(drivers[name].act(obs))
    return {k: np.asarray(v) for k, v in rows.items()}


def choices(spec: str, flags: dict, positions: dict[str, np.ndarray], seed: int = 7) -> np.ndarray:
    """``spec``'s action at every recorded decision: one agent per (hand, seat), fed that seat's decisions in order."""
    from rook_env.agents import make_agent

    out = np.full(len(positions["hand"]), -1, np.int64)
    agents: dict[tuple[int, int], object] = {}
    for i, (hand, seat) in enumerate(zip(positions["hand"].tolist(), positions["seat"].tolist())):
        key = (hand, seat)
        if key not in agents:
            agents[key] = make_agent(spec, seed=seed + 10 * hand + seat, **flags)
            reset = getattr(agents[key], "reset", None)
            if callable(reset):
                reset()
        obs = {"observation": positions["observation"][i], "action_mask": positions["action_mask"][i]}
        out[i] = agents[key].act(obs)
    return out


def build() -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for case, (flags, hands, specs) in CASES.items():
        positions = record_positions(flags, hands)
        for k, v in positions.items():
            arrays[f"{case}/{k}"] = v
        for spec in specs:
            arrays[f"{case}/actions/{spec}"] = choices(spec, flags, positions)
            print(f"{case}: {spec}: {len(positions['hand'])} decisions", file=sys.stderr)
    return arrays


if __name__ == "__main__":
    np.savez_compressed(FIXTURE, **build())
    print(FIXTURE)
