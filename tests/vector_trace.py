"""Recorded traces of the batched engines (``tests/test_vector_golden.py``): seeded runs driven by
``sample_legal``, one digest per step of everything a step returns.

``python tests/vector_trace.py`` (from the repository root) records ``tests/data/vector_golden.json``
from the code as it stands (the recording was made on main before issue 22's single engine, whose
two classes were built directly, ``RookVectorEnv(N, backend=...)`` and ``CallPartnerVectorEnv(N)``); the test replays the runs and compares every digest. Record only when a
change of behaviour is intended, and say so in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

GOLDEN = Path(__file__).parent / "data" / "vector_golden.json"
STEPS = 240
NUM_ENVS = 12
# (name, game, constructor keywords); partnership runs on both backends, call-your-partner has one.
RUNS: list[tuple[str, str, dict[str, Any]]] = [
    ("default", "partnership", {}),
    ("game_full", "partnership", {"episode": "game", "target_score": 300, "deck": "full", "max_hands": 4,
                                  "reward": "win_loss", "all_pass": "redeal"}),
    ("german_extended", "partnership", {"nest_discard": "no_counters_unless_forced", "trump_calls": "extended",
                                        "first_lead": "left_of_bidder", "no_counter_redeal": "on"}),
    ("circus_terminate", "partnership", {"circus_rook": "on", "trump_calls": "extended", "majority_tricks_bonus": 20,
                                         "last_trick_bonus": 10, "illegal_action": "terminate",
                                         "illegal_reward": -2.5}),
    ("cp4", "call_partner", {"players": 4}),
    ("cp5_game", "call_partner", {"players": 5, "episode": "game", "max_hands": 3, "reward": "team_score"}),
    ("cp6_flags", "call_partner", {"players": 6, "deck": "no_twos_to_fours", "all_pass": "redeal",
                                   "nest_discard": "no_counters_unless_forced", "first_lead": "bidder"}),
]


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray):
            h.update(str((p.dtype.str, p.shape)).encode())
            h.update(np.ascontiguousarray(p).tobytes())
        elif isinstance(p, dict):
            for k in sorted(p):
                h.update(k.encode())
                h.update(_digest(p[k]).encode())
        elif isinstance(p, (list, tuple)):
            for x in p:
                h.update(_digest(x).encode())
        else:
            h.update(repr(p).encode())
    return h.hexdigest()[:16]


def trace(game: str, backend: str, kwargs: dict[str, Any],
          pick: Callable[[np.ndarray, np.random.Generator], np.ndarray] | None = None) -> list[str]:
    """Digests of a seeded run: reset, then ``STEPS`` steps; every 10th step also every seat's
    ``observe`` and ``state_for``. With ``illegal_action="terminate"`` every 37th step plays an illegal
    action at table 0."""
    from rook_env.vector import RookVectorEnv, sample_legal

    pick = pick or sample_legal
    env = RookVectorEnv(NUM_ENVS, game=game, backend=backend, **kwargs)
    rng = np.random.default_rng(2026)
    obs, info = env.reset(seed=17)
    out = [_digest(obs, info)]
    for t in range(STEPS):
        mask = info["action_mask"]
        actions = pick(mask, rng)
        if kwargs.get("illegal_action") == "terminate" and t % 37 == 36:
            actions[0] = int(np.flatnonzero(mask[0] == 0)[0])
        obs, rewards, term, trunc, info = env.step(actions)
        parts: list[Any] = [obs, rewards, term, trunc, _recorded_keys(game, info)]
        if t % 10 == 9:
            n_seats = rewards.shape[1]
            parts += [env.observe(s) for s in range(n_seats)] + [env.state_for(s) for s in range(n_seats)]
            parts.append(env.observe(np.arange(NUM_ENVS) % n_seats))
        out.append(_digest(*parts))
    return out


def _recorded_keys(game: str, info: dict[str, Any]) -> dict[str, Any]:
    """``info`` as recorded: call-your-partner's engine gained ``info["illegal"]`` with the shared step
    loop (issue 22); the recording predates it, so it is checked here (all False under
    ``illegal_action="raise"``) and left out of the digest."""
    if game != "call_partner" or "illegal" not in info:
        return info
    rest = dict(info)
    illegal = rest.pop("illegal")
    assert illegal.shape == rest["hand_over"].shape and not illegal.any()
    return rest


def backends(game: str) -> tuple[str, ...]:
    return ("numpy", "numba") if game == "partnership" else ("numpy",)


def record() -> None:
    golden = {f"{name}/{b}": trace(game, b, kw) for name, game, kw in RUNS for b in backends(game)}
    GOLDEN.write_text(json.dumps({"steps": STEPS, "num_envs": NUM_ENVS, "runs": golden}, indent=0) + "\n")
    print(f"wrote {GOLDEN} ({len(golden)} runs)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    record()
