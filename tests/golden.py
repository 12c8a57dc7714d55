"""Golden traces: what both games deal, observe, mask, step and reward, recorded once and replayed.

``python tests/golden.py`` records ``tests/data/golden.json`` from the code as it stands (done once,
on main before the trick-taking core was shared between the games); ``tests/test_golden.py`` replays
every case against today's code. A case is one table (game, player count, rule flags) played for
several seeded episodes, by seeded random legal actions or by a trained network (``best_auction.pt``, the network ``"best"`` bids
with, which was the shipped ``make_agent("ppo")`` when the traces were recorded).
Per episode one SHA-1 chains, step by step: every seat's observation vector and action mask, the
global ``state()``, rewards, cumulative rewards, terminations, truncations, the JSON form of the
infos and the action taken; the ppo cases also keep the list of the actions the agent chose.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).parent / "data" / "golden.json"
EPISODES = 6  # per case and driver
MAX_STEPS = 3000  # a safety net: no episode in these cases comes near it

# (name, game, flags): the partnership flags cover RULES.md F1 to F21 and its presets; the
# call-your-partner cases cover 4, 5 and 6 players and every one of its flags.
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("p_default", "partnership", {}),
    ("p_game", "partnership", {"episode": "game", "max_hands": 6, "reward": "win_loss"}),
    ("p_redeal", "partnership", {"all_pass": "redeal", "no_counter_redeal": "off", "reward": "team_score"}),
    ("p_german", "partnership", {"nest_discard": "no_counters_unless_forced", "first_lead": "bidder"}),
    ("p_rank", "partnership", {"rook_rank": "ten_and_half", "first_lead": "left_of_bidder", "last_trick_bonus": 20}),
    ("p_full", "partnership", {"deck": "full", "rook_rank": "low", "majority_tricks_bonus": 20}),
    ("p_twos", "partnership", {"deck": "full", "black_two_trump": "on", "red_two_little_rook": "on"}),
    ("p_nonest", "partnership", {"deck": "full", "ones": "low", "rook_bird": "off", "nest": "off"}),
    ("p_extended", "partnership", {"trump_calls": "extended", "card_names": "standard"}),
    ("p_circus", "partnership", {"circus_rook": "on", "episode": "game", "max_hands": 3}),
    ("p_preset_one_high", "partnership", {"preset": "one_high_partnership"}),
    ("p_preset_kentucky", "partnership", {"preset": "kentucky_discard_original"}),
    ("p_preset_regular", "partnership", {"preset": "regular_partnership"}),
    ("cp4", "call_partner", {"players": 4}),
    ("cp5", "call_partner", {"players": 5}),
    ("cp6", "call_partner", {"players": 6}),
    ("cp5_small", "call_partner", {"players": 5, "deck": "no_twos_to_fours", "reward": "team_score"}),
    ("cp6_german", "call_partner", {"players": 6, "nest_discard": "no_counters_unless_forced",
                                    "first_lead": "bidder", "all_pass": "redeal", "no_counter_redeal": "off"}),
    ("cp4_game", "call_partner", {"players": 4, "episode": "game", "max_hands": 4, "reward": "win_loss",
                                  "target_score": 300, "first_lead": "left_of_bidder"}),
    ("cp5_bids", "call_partner", {"players": 5, "min_bid": 80, "max_bid": 160, "bid_step": 10}),
]
PPO_CASES = ("p_default", "p_game")  # the network plays the default table
# the network the ppo traces were recorded with: shipped as make_agent("ppo") until 0.6.0, named so since
RECORDED_NETWORK = str(Path(__file__).resolve().parent.parent / "rook_env" / "agents" / "checkpoints" / "best_auction.pt")


def make(game: str, flags: dict[str, Any]):
    """The raw environment of a case, through the entry points that existed when it was recorded."""
    import rook_env

    if game == "call_partner":
        from rook_env.games.call_partner import raw_env

        return raw_env(**flags)
    return rook_env.raw_env(**flags)


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, sort_keys=True, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def _absorb(h: "hashlib._Hash", env: Any) -> None:
    for agent in env.possible_agents:
        ob = env.observe(agent)
        h.update(np.ascontiguousarray(ob["observation"], np.float32).tobytes())
        h.update(np.ascontiguousarray(ob["action_mask"], np.int8).tobytes())
    h.update(np.ascontiguousarray(env.state(), np.float32).tobytes())
    h.update(json.dumps(_jsonable({
        "sel": env.agent_selection, "agents": list(env.agents), "rew": env.rewards,
        "cum": env._cumulative_rewards, "term": env.terminations, "trunc": env.truncations, "infos": env.infos,
    }), sort_keys=True).encode())


def run_episode(game: str, flags: dict[str, Any], seed: int, driver: str) -> dict[str, Any]:
    """Play one seeded episode and return its digest (and the ppo agent's actions)."""
    env = make(game, flags)
    env.reset(seed=seed)
    h = hashlib.sha1()
    _absorb(h, env)
    rng = random.Random(seed * 7919 + 1)
    agents = None
    if driver == "ppo":
        from rook_env.agents import make_agent

        rules = {k: v for k, v in flags.items() if k != "max_hands"}
        agents = [make_agent(f"ppo:{RECORDED_NETWORK}", seed=seed * 4 + s, **rules)
                  for s in range(len(env.possible_agents))]
        for a in agents:
            if callable(getattr(a, "reset", None)):
                a.reset()
    actions: list[int] = []
    for _ in range(MAX_STEPS):
        agent = env.agent_selection
        if not env.agents:
            break
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            h.update(b"dead")
            _absorb(h, env) if env.agents else None
            continue
        ob = env.observe(agent)
        if agents is None:
            action = rng.choice(np.flatnonzero(ob["action_mask"]).tolist())
        else:
            action = int(agents[env.possible_agents.index(agent)].act(ob, env.infos[agent]))
        actions.append(int(action))
        env.step(int(action))
        h.update(str(int(action)).encode())
        if env.agents:
            _absorb(h, env)
    else:
        raise AssertionError(f"episode did not end in {MAX_STEPS} steps")
    out: dict[str, Any] = {"digest": h.hexdigest(), "steps": len(actions)}
    if driver == "ppo":
        out["actions"] = actions
    return out


def record() -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, game, flags in CASES:
        drivers = ["random"] + (["ppo"] if name in PPO_CASES else [])
        for driver in drivers:
            eps = [run_episode(game, flags, seed, driver) for seed in range(EPISODES)]
            data[f"{name}/{driver}"] = {"game": game, "flags": flags, "episodes": eps}
            print(name, driver, sum(e["steps"] for e in eps), "steps", file=sys.stderr)
    return data


if __name__ == "__main__":
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(record(), indent=0, sort_keys=True) + "\n")
    print(DATA, DATA.stat().st_size, "bytes")
