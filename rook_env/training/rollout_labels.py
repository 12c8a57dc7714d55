"""Counterfactual labels for call-your-partner Rook: what each legal action is worth when the heuristic plays on.

One step of rollout policy improvement over the game's heuristic (Bertsekas and Tsitsiklis, "Neuro-Dynamic
Programming", 1996, rollout algorithms; Tesauro and Galperin 1996 for backgammon). Hands are dealt from seeds and
played by :class:`~rook_env.agents.heuristic.call_partner.CallPartnerHeuristic` at every seat, each acting on its own
seat's observation. At a decision drawn with probability ``label_prob`` (among those with a choice), the true state
is cloned once per legal action, the action applied and the hand played out to its end by the heuristic at every
seat; the acting seat's reward (its ``score_diff``, :func:`rook_env.call_partner.env.hand_rewards`) is that action's
value ``q[a]``. The heuristic is deterministic, so the heuristic's own action needs no play-out: its value is the
hand's actual result, and ``q[a] - q[hint]`` is exactly what playing ``a`` instead would have changed *on this
deal*. Averaged over the deals consistent with what the seat saw, it is the advantage ``A(obs, a)`` of the
heuristic's policy: a network regressed on ``(observation, q - q[hint])`` (:mod:`rook_env.training.residual_fit`)
estimates it from the observation alone, and playing its argmax where it beats the heuristic's action by a margin
improves on the heuristic (the policy improvement step). The play-outs read the true deal; the network, and so the
agent, never does.

Records (one per labelled decision): ``obs`` (the seat's observation), ``mask`` (its legal actions), ``hint`` (the
heuristic's action), ``q`` (the seat's reward per legal action, NaN elsewhere), ``outcome`` (the hand's result for
the seat: ``q[hint]``), ``phase``, ``seat`` and ``hand`` (the deal seed). Shards of ``shard_hands`` hands are written
as ``<out>/shard_<seed>_<k>.npz`` as they finish (the cut of :func:`rook_env.training.ray_labels.shard_plan`), so a
run cut short keeps what it labelled and a rerun with the same arguments skips the shards that exist.

    python -m rook_env.training.rollout_labels --out runs/cp_labels --hands 20000 --seed 90000000 --processes 2
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["label_hands", "main"]


class _Table:
    """The pure rules of one call-your-partner table and the heuristic that plays every seat of it."""

    def __init__(self, flags: dict[str, Any]) -> None:
        from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic
        from rook_env.call_partner.config import make_config
        from rook_env.call_partner.observation import obs_layout

        self.config = make_config(**flags)
        if self.config.episode != "hand":
            raise ValueError(f"rollout labels are per hand: episode must be 'hand', got {self.config.episode!r}")
        self.ol = obs_layout(self.config)
        self.heuristic = CallPartnerHeuristic(**flags)  # stateless and deterministic: one instance, every seat
        self.n_actions = self.heuristic.L.n_actions

    def seat_view(self, state: Any) -> tuple[dict[str, np.ndarray], int]:
        """The acting seat's observation (what the env would give it) and the legal actions as a bitmask."""
        from rook_env.call_partner.observation import encode
        from rook_env.core.observation import unpack_mask

        legal = state.legal_mask()
        return {"observation": encode(state, state.current, ol=self.ol),
                "action_mask": unpack_mask(legal, self.n_actions)}, legal

    def heuristic_action(self, state: Any) -> tuple[dict[str, np.ndarray], int, int]:
        obs, legal = self.seat_view(state)
        action = legal.bit_length() - 1 if legal & (legal - 1) == 0 else int(self.heuristic.act(obs))
        return obs, legal, action

    def play_out(self, state: Any) -> list[float]:
        """Every seat's reward once the heuristic has played ``state`` to the end of its hand (``state`` changes)."""
        from rook_env.call_partner.env import hand_rewards

        while not state.is_over:
            _, legal, action = self.heuristic_action(state)
            state.apply(action, legal)
        return hand_rewards(self.config, state.hand_result["hand_scores"], -1)


def label_hands(hands: int, seed: int, label_prob: float = 0.25, **flags: Any) -> dict[str, np.ndarray]:
    """Play ``hands`` hands (deal seeds ``seed``, ``seed + 1``, ...) by the heuristic at every seat and label a
    ``label_prob`` share of the decisions that have a choice (see the module docstring); the records as arrays."""
    from rook_env.call_partner.rules import CallPartnerState

    if not 0.0 < label_prob <= 1.0:
        raise ValueError(f"label_prob must be in (0, 1], got {label_prob!r}")
    table = _Table(flags)
    rng = np.random.default_rng(seed)  # which decisions are labelled: a function of the shard's first seed
    rec: dict[str, list] = {k: [] for k in ("obs", "mask", "hint", "q", "phase", "seat", "hand")}
    outcome_of: list[int] = []  # the record's seat, to read its outcome when the hand ends
    for h in range(hands):
        state = CallPartnerState(table.config, seed=seed + h)
        state.new_game()
        first = len(rec["obs"])
        while not state.is_over:
            obs, legal, hint = table.heuristic_action(state)
            if legal & (legal - 1) and rng.random() < label_prob:
                seat = state.current
                q = np.full(table.n_actions, np.nan, np.float32)
                for a in range(legal.bit_length()):
                    if a != hint and legal >> a & 1:
                        alt = state.clone()
                        alt.apply(a, legal)
                        q[a] = table.play_out(alt)[seat]
                for key, value in (("obs", obs["observation"]), ("mask", obs["action_mask"].astype(bool)),
                                   ("hint", hint), ("q", q), ("phase", state.phase), ("seat", seat),
                                   ("hand", seed + h)):
                    rec[key].append(value)
                outcome_of.append(seat)
            state.apply(hint, legal)
        rewards = table.play_out(state)  # over already: the hand's rewards
        for i in range(first, len(rec["obs"])):
            rec["q"][i][rec["hint"][i]] = rewards[outcome_of[i]]  # deterministic: the heuristic's action's value
    out = {
        "obs": np.asarray(rec["obs"], np.float32).reshape(-1, table.ol.size),
        "mask": np.asarray(rec["mask"], bool).reshape(-1, table.n_actions),
        "hint": np.asarray(rec["hint"], np.int16),
        "q": np.asarray(rec["q"], np.float32).reshape(-1, table.n_actions),
        "phase": np.asarray(rec["phase"], np.int8),
        "seat": np.asarray(rec["seat"], np.int8),
        "hand": np.asarray(rec["hand"], np.int64),
    }
    out["outcome"] = out["q"][np.arange(len(out["hint"])), out["hint"]] if len(out["hint"]) else np.zeros(0, np.float32)
    return out


def _label_shard(job: tuple[str, int, int, float, dict]) -> tuple[str, int, float]:
    from .ray_labels import write_shard

    path, first, n, label_prob, flags = job
    t0 = time.perf_counter()
    rec = label_hands(n, first, label_prob, **flags)
    write_shard(path, rec)
    return path, len(rec["obs"]), time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    from .ray_labels import run_label_jobs, shard_plan

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder of the shards")
    p.add_argument("--hands", type=int, default=1000)
    p.add_argument("--seed", type=int, default=90_000_000, help="the first deal's seed (apart from evaluation seeds)")
    p.add_argument("--shard-hands", type=int, default=100)
    p.add_argument("--label-prob", type=float, default=0.25, help="share of the decisions with a choice labelled")
    p.add_argument("--players", type=int, default=5, help="seats at the call-your-partner table (4, 5 or 6)")
    p.add_argument("--processes", type=int, default=1, help="label processes on this machine")
    a = p.parse_args(argv)
    if a.processes < 1:
        p.error(f"--processes must be >= 1, got {a.processes}")
    flags = {"players": a.players}
    _Table(flags)  # a bad flag fails here, before any process starts
    os.makedirs(a.out, exist_ok=True)
    jobs = [(path, first, n, a.label_prob, flags) for path, first, n in shard_plan(a.out, a.hands, a.seed,
                                                                                 a.shard_hands)
            if not os.path.exists(path)]
    run_label_jobs(_label_shard, jobs, a.processes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
