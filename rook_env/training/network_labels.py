"""Counterfactual labels for the partnership game: what each legal action is worth when the network plays on.

The partnership counterpart of :mod:`rook_env.training.rollout_labels` (one step of rollout policy improvement,
Bertsekas and Tsitsiklis 1996; Tesauro and Galperin 1996), with the *network* as the base policy and the batched
engine (:class:`rook_env.vector.RookVectorEnv`) doing the work. A shard is a block of deals played greedily by
the network at every seat, each seat acting on its own observation (the *trunk*); a ``label_prob`` share of the
decisions that have a choice are labelled. For a labelled decision every other legal action is a *branch*: a
table dealt the same cards that replays the trunk's actions up to the decision, plays the action instead, and
lets the network play the hand out greedily at every seat. The value ``q[a]`` of an action is the acting seat's
team's hand score minus the other team's (``info["hand"]["hand_scores"]``); the network's own action needs no
branch (the play-out is deterministic: its value is the trunk's result). So ``q[a] - q[hint]`` is what playing
``a`` instead would have changed *on this deal*; averaged over the deals consistent with what the seat saw it is
the network's advantage ``A(obs, a)``, which :mod:`rook_env.training.residual_fit` (``--init``) regresses from the
observation alone. Play-outs read the true deal; the network, and the agent fitted to the labels, never do.

All branches of a shard run as tables of one engine, ``tables`` at a time, in lock step: each step replays the
recorded actions of the tables still in their prefix, applies the branch actions due and runs the network once on
the tables playing on (forced moves, one legal action, skip it). Labelling every decision's branches costs about
(legal actions - 1) x (steps left) network decisions.

Records (one per labelled decision), as ``rollout_labels``' (so ``residual_fit`` reads both): ``obs`` (float32),
``mask``, ``hint`` (the network's greedy action), ``q`` (NaN at illegal actions), ``outcome`` (``q[hint]``),
``phase`` (``rook_env.rules.PHASE_NAMES``), ``seat``, ``hand`` (the deal's id: the shard's seed times 2^16
plus the table). Shards are ``<out>/shard_<seed>_<k>.npz``; a rerun with the same arguments skips those written.

    python -m rook_env.training.network_labels --network rook_env/agents/checkpoints/ppo_default.pt \\
        --out runs/net_labels --hands 20000 --seed 95000000 --processes 2
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .config import parse_shares, phase_probs

__all__ = ["NetworkLabeler", "branch_values", "label_deals", "main", "opponent_agent", "write_labels"]


def _greedy(model: Any, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The network's greedy legal action per row (as :class:`~rook_env.agents.learned.agent.PPOAgent` plays)."""
    with torch.no_grad():
        logits = model.actor_logits(torch.from_numpy(obs))
    return logits.masked_fill(~torch.from_numpy(mask.astype(bool)), -1e9).argmax(1).numpy()


def _act(model: Any, env: Any, rows: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
    """``out[rows]`` = the network's action at those tables (the only legal action where there is one)."""
    if not len(rows):
        return
    m = mask[rows]
    out[rows] = m.argmax(1)  # the forced moves' (and the default) action
    choice = rows[m.sum(1) > 1]
    if len(choice):
        out[choice] = _greedy(model, env.observation[choice], mask[choice])


def _opponent_turns(opponent: Any, env: Any, rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The opponent's actions at ``rows`` (its seats to act there); it sees every turn of its seats, forced ones
    included, so that its card memory (keyed ``table * 4 + seat``) follows each hand as in a match."""
    seat = env.current_player[rows]
    return opponent.act_batch(env.observation[rows], mask[rows], rows * 4 + seat)


def _team_value(hand_scores: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """The seat's team's hand score minus the other team's (team = seat % 2)."""
    team = seat & 1
    rows = np.arange(len(seat))
    return (hand_scores[rows, team] - hand_scores[rows, 1 - team]).astype(np.float32)


def _deal_options(env: Any) -> list[dict]:
    """Every table's deal as ``reset`` options: the hands, the nest and the dealer."""
    n = env.layout.n_cards
    bits = lambda x: np.flatnonzero((int(x) >> np.arange(n)) & 1).tolist()  # noqa: E731
    return [{"hands": [bits(h) for h in env.hands[t]], "nest": bits(env.nest[t]), "dealer": int(env.dealer[t])}
            for t in range(env.num_envs)]


def branch_values(model: Any, flags: dict[str, Any], options: Sequence[dict], prefix: np.ndarray,
                  step: np.ndarray, action: np.ndarray, seat: np.ndarray, tables: int = 2048,
                  opponent: Any = None, seed: int | None = None) -> np.ndarray:
    """The value of each branch ``i``: deal ``options[i]``, replay ``prefix[i, :step[i]]``, play ``action[i]``,
    let the network play on (at the acting seat's team only, with an ``opponent`` at the other team's seats);
    the acting ``seat[i]``'s team's hand score minus the other's. ``seed``: the engines' random streams, one per
    block of ``tables`` branches (a branch that throws its hand in, the redeal action, plays a new deal drawn from
    it), so the values are a function of the seed; None: unseeded."""
    from rook_env.vector import RookVectorEnv

    n = len(options)
    values = np.zeros(n, np.float32)
    for lo in range(0, n, tables):
        hi = min(n, lo + tables)
        env = RookVectorEnv(hi - lo, backend="numba", **flags)
        # a stream of its own per block, apart from the trunk's deals
        block_seed = None if seed is None else int(np.random.SeedSequence([seed, lo]).generate_state(1)[0])
        env.reset(seed=block_seed, options=list(options[lo:hi]))
        if opponent is not None:
            opponent.reset()
        k, alt, pre, team = step[lo:hi], action[lo:hi], prefix[lo:hi], seat[lo:hi] & 1
        done = np.zeros(hi - lo, bool)
        acts = np.zeros(hi - lo, np.int64)
        t = 0
        while not done.all():
            mask = env.action_mask
            acts[:] = pre[:, min(t, pre.shape[1] - 1)]
            acts[k == t] = alt[k == t]
            on = (k < t) & ~done  # playing on
            if opponent is None:
                _act(model, env, np.flatnonzero(on), mask, acts)
            else:
                theirs = ~done & ((env.current_player & 1) != team)
                rows = np.flatnonzero(theirs)  # in the prefix too: the opponent's memory follows the replay
                if len(rows):
                    mine = _opponent_turns(opponent, env, rows, mask)
                    acts[rows[on[rows]]] = mine[on[rows]]
                _act(model, env, np.flatnonzero(on & ~theirs), mask, acts)
            fin = np.flatnonzero(done)
            acts[fin] = mask[fin].argmax(1)  # finished tables play on in a new hand, ignored
            _, _, term, trunc, info = env.step(acts)
            ended = np.flatnonzero((term | trunc) & ~done)
            if len(ended):
                values[lo + ended] = _team_value(info["hand"]["hand_scores"][ended], seat[lo + ended])
                done[ended] = True
            t += 1
    return values


def label_deals(model: Any, deals: int, seed: int, label_prob: float = 0.25, tables: int = 2048,
                verify: bool = False, opponent: Any = None, phase_label_prob: dict[str, float] | None = None,
                **flags: Any) -> dict[str, np.ndarray]:
    """Play ``deals`` deals (the engine's deals of ``seed``) greedily by ``model`` at every seat and label a
    ``label_prob`` share of the decisions with a choice (module docstring; ``phase_label_prob``: other shares for
    the phases it names: a branch of a bid or a discard plays the whole hand out, a card's the rest of it); the
    records as arrays.
    ``opponent`` (an agent with ``act_batch``, e.g. the heuristic): the network plays one team of each deal
    (seats 0 and 2 at even tables, 1 and 3 at odd ones), the opponent the other, in the trunk and the branches;
    only the network's decisions are labelled.
    ``verify``: branch the network's own actions too and raise if a replay does not reproduce the trunk's
    result (the replays' self-check; it costs a branch more per decision)."""
    from rook_env.vector import RookVectorEnv

    probs = np.array(phase_probs(label_prob, phase_label_prob))
    if flags.get("episode", "hand") != "hand":
        raise ValueError(f"labels are per hand: episode must be 'hand', got {flags['episode']!r}")
    if flags.get("all_pass", "dealer_forced") != "dealer_forced":
        raise ValueError("labels replay deals: all_pass must be 'dealer_forced' (a redeal after four passes would "
                         f"deal the branches other cards), got {flags['all_pass']!r}")
    rng = np.random.default_rng(seed)  # which decisions are labelled: a function of the shard's seed
    env = RookVectorEnv(deals, backend="numba", **flags)
    env.reset(seed=seed)
    options = _deal_options(env)
    learner = np.arange(deals) & 1  # the network's team per table (with an opponent)
    if opponent is not None:
        opponent.reset()
    done = np.zeros(deals, bool)
    result = np.zeros((deals, 2), np.int64)
    actions: list[np.ndarray] = []
    rec: dict[str, list] = {k: [] for k in ("obs", "mask", "hint", "phase", "seat", "table", "step")}
    acts = np.zeros(deals, np.int64)
    while not done.all():
        mask = env.action_mask
        live = np.flatnonzero(~done)
        if opponent is not None:
            theirs = (env.current_player[live] & 1) != learner[live]
            if theirs.any():
                acts[live[theirs]] = _opponent_turns(opponent, env, live[theirs], mask)
            live = live[~theirs]  # the network's turns
        _act(model, env, live, mask, acts)
        fin = np.flatnonzero(done)
        acts[fin] = mask[fin].argmax(1)
        pick = live[(mask[live].sum(1) > 1) & (rng.random(len(live)) < probs[env.phase[live]])]
        if len(pick):
            for key, value in (("obs", env.observation[pick]), ("mask", mask[pick].astype(bool)),
                               ("hint", acts[pick]), ("phase", env.phase[pick]),
                               ("seat", env.current_player[pick]), ("table", pick),
                               ("step", np.full(len(pick), len(actions)))):
                rec[key].append(value)
        actions.append(acts.copy())
        _, _, term, trunc, info = env.step(acts)
        ended = np.flatnonzero((term | trunc) & ~done)
        result[ended] = info["hand"]["hand_scores"][ended]
        done[ended] = True
    prefix = np.stack(actions, 1)  # (deals, steps): every table's actions, step by step
    # A redeal (a seat's right to throw in its hand, RULES.md) deals from the engine's random stream: a branch
    # replaying it would play another deal than the trunk did, so those deals are not labelled.
    redealt = (prefix == env.layout.REDEAL).any(1)
    obs = np.concatenate(rec["obs"]) if rec["obs"] else np.zeros((0, env.obs_dim), np.float32)
    cat = {k: (np.concatenate(v) if v else np.zeros(0, np.int64)) for k, v in rec.items() if k != "obs"}
    keep = ~redealt[cat["table"]]
    obs, cat = obs[keep], {k: v[keep] for k, v in cat.items()}
    mask = cat["mask"].reshape(len(cat["hint"]), env.n_actions).astype(bool)
    # the branches: every legal action but the network's own, of every labelled decision
    dec, alt = np.nonzero(mask)
    if not verify:
        keep = alt != cat["hint"][dec]
        dec, alt = dec[keep], alt[keep]
    tab = cat["table"][dec]
    values = branch_values(model, flags, [options[t] for t in tab], prefix[tab], cat["step"][dec], alt,
                           cat["seat"][dec], tables, opponent, seed)
    q = np.full(mask.shape, np.nan, np.float32)
    q[dec, alt] = values
    rows = np.arange(len(mask))
    trunk = _team_value(result[cat["table"]], cat["seat"])
    if verify and not np.array_equal(q[rows, cat["hint"]], trunk):
        bad = np.flatnonzero(q[rows, cat["hint"]] != trunk)
        raise RuntimeError(f"{len(bad)} of {len(rows)} replays of the network's own action did not reproduce the "
                           f"trunk's result (decisions {bad[:10].tolist()})")
    q[rows, cat["hint"]] = trunk
    return {"obs": obs.astype(np.float32), "mask": mask, "hint": cat["hint"].astype(np.int16), "q": q,
            "outcome": q[rows, cat["hint"]].copy(), "phase": cat["phase"].astype(np.int8),
            "prob": probs[cat["phase"]].astype(np.float32),  # its chance of a label: the fit's per-hand weights
            "seat": cat["seat"].astype(np.int8), "hand": seed * 2**16 + cat["table"]}


def opponent_agent(spec: str, flags: dict[str, Any]) -> Any:
    """The other team's agent of a label set: None for "self" (the network at every seat), else
    ``make_agent(spec)``: the heuristic, or a past network or a best response (``ppo:<checkpoint>``), which must decide
    in batches (``act_batch``); a ValueError names a spec that is neither."""
    if spec == "self":
        return None
    from rook_env.agents import make_agent

    try:
        agent = make_agent(spec, **flags)
    except Exception as exc:  # noqa: BLE001 - an unknown name, a missing or corrupt checkpoint: all name the spec
        raise ValueError(f"opponent {spec!r}: {exc}") from None
    if not hasattr(agent, "act_batch"):
        raise ValueError(f"opponent {spec!r} ({type(agent).__name__}) does not decide in batches (act_batch): the "
                         "labels' tables need an agent that does (heuristic, random, ppo:<checkpoint>)")
    return agent


def _label_shard(job: tuple[str, str, int, int, float, int, str, dict]) -> tuple[str, int, float]:
    from .ray_labels import write_shard

    path, network, first, n, label_prob, tables, opponent, phase_label_prob, flags = job
    torch.set_num_threads(1)  # one core per process: the processes are the parallelism
    t0 = time.perf_counter()
    rec = NetworkLabeler(network, label_prob, tables, opponent, phase_label_prob)(n, first, **flags)
    write_shard(path, rec)
    return path, len(rec["obs"]), time.perf_counter() - t0


class NetworkLabeler:
    """:func:`label_deals` as a Ray label worker calls a labelling function (``rook_env.training.ray_labels``:
    ``(hands, seed, base, samples, **flags)``): it carries the network's checkpoint *bytes*, so that workers on other
    machines need no copy of the file; ``base`` and ``samples`` (search's) are not used."""

    def __init__(self, network: str, label_prob: float, tables: int, opponent: str,
                 phase_label_prob: dict[str, float] | None = None) -> None:
        with open(network, "rb") as fh:
            self.checkpoint = fh.read()
        self.network, self.label_prob, self.tables, self.opponent = network, label_prob, tables, opponent
        self.phase_label_prob = dict(phase_label_prob or {})
        self._model = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_model": None}  # the bytes travel, not the network built from them

    def __call__(self, hands: int, seed: int, base: Any = None, samples: Any = None, **flags: Any) -> dict:
        import io

        from rook_env.agents.learned.model import model_from_checkpoint

        if self._model is None:
            ckpt = torch.load(io.BytesIO(self.checkpoint), map_location="cpu", weights_only=True)
            self._model = model_from_checkpoint(ckpt, self.network).eval()
        other = opponent_agent(self.opponent, flags)
        return label_deals(self._model, hands, seed, self.label_prob, self.tables, opponent=other,
                           phase_label_prob=self.phase_label_prob, **flags)


def write_labels(network: str, out: str, hands: int, seed: int, shard_hands: int = 256, label_prob: float = 0.25,
                 tables: int = 2048, opponent: str = "self", processes: int = 1,
                 flags: dict[str, Any] | None = None, workers: int = 0, ray_address: str = "",
                 log=None, phase_label_prob: dict[str, float] | None = None) -> int:
    """Label ``hands`` deals with ``network`` playing on, in shards of ``shard_hands`` deals written to
    ``out/shard_<seed + k>_<k>.npz`` (``opponent``: "self", or the agent spec of the other team, :func:`opponent_agent`)
    by ``processes`` processes on this
    machine, or, with ``workers`` > 0, by that many label-worker actors on the Ray cluster at ``ray_address``
    ("auto", HOST:PORT; "": a private local Ray), the same shards (docs/cluster.md). Shards already written are
    skipped (a rerun resumes). ``phase_label_prob``: other label shares for the phases it names
    (``rook_env.training.config.phase_probs``). Returns the labelled decisions written by this call."""
    from .ray_labels import label_on_ray, run_label_jobs

    os.makedirs(out, exist_ok=True)
    flags = dict(flags or {})
    plan = [(os.path.join(out, f"shard_{seed + k}_{k:05d}.npz"), seed + k, min(shard_hands, hands - lo))
            for k, lo in enumerate(range(0, hands, shard_hands))]  # one deal seed per shard: the engine's deals
    phase_probs(label_prob, phase_label_prob)  # a bad share or opponent fails here, before any process or actor starts
    opponent_agent(opponent, flags)
    if workers > 0:
        labeler = NetworkLabeler(network, label_prob, tables, opponent, phase_label_prob)
        ledger = label_on_ray(labeler, out, hands, seed, network, 0, shard_hands, workers, ray_address, flags,
                              log=log, plan=plan)
        return ledger["decisions"]
    jobs = [(path, network, first, n, label_prob, tables, opponent, phase_label_prob, flags)
            for path, first, n in plan if not os.path.exists(path)]
    return run_label_jobs(_label_shard, jobs, processes) if jobs else 0


def main(argv: Sequence[str] | None = None) -> int:
    from rook_env.agents.learned.model import load_checkpoint

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--network", required=True, help="the partnership checkpoint that plays (and is labelled)")
    p.add_argument("--out", required=True, help="folder of the shards")
    p.add_argument("--hands", type=int, default=1024, help="deals in all")
    p.add_argument("--seed", type=int, default=95_000_000, help="the first shard's seed (one seed per shard)")
    p.add_argument("--shard-hands", type=int, default=256, help="deals per shard (the trunk's tables)")
    p.add_argument("--label-prob", type=float, default=0.25, help="share of the decisions with a choice labelled")
    p.add_argument("--phase-label-prob", nargs="*", default=[], metavar="PHASE=SHARE",
                   help="another share for a phase's decisions, e.g. bid=0.15 play=0.6 (phases: rook_env.rules)")
    p.add_argument("--tables", type=int, default=2048, help="branch tables run together")
    p.add_argument("--opponent", default="self",
                   help="self: the network at every seat; else an agent spec (heuristic, ppo:<checkpoint> of a past "
                   "network or a best response) that plays the other team")
    p.add_argument("--processes", type=int, default=1, help="label processes on this machine")
    p.add_argument("--workers", type=int, default=0,
                   help="label-worker actors on a Ray cluster instead of the processes (docs/cluster.md); 0: none")
    p.add_argument("--ray-address", default="auto", help="with --workers: the cluster (auto, HOST:PORT; '': a "
                   "private local Ray)")
    a = p.parse_args(argv)
    if a.workers < 0:
        p.error(f"--workers must be >= 0, got {a.workers}")
    for name in ("hands", "shard_hands", "tables", "processes"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")
    ckpt = load_checkpoint(a.network)  # a bad checkpoint fails here, before any process starts
    if ckpt.get("game", "partnership") != "partnership":
        p.error(f"--network {a.network!r} is a {ckpt['game']!r} checkpoint; these labels are the partnership game's")
    try:
        shares = parse_shares(a.phase_label_prob)
        phase_probs(a.label_prob, shares)
        opponent_agent(a.opponent, dict(ckpt.get("env_flags") or {}))
    except ValueError as exc:
        p.error(str(exc))
    write_labels(a.network, a.out, a.hands, a.seed, a.shard_hands, a.label_prob, a.tables, a.opponent, a.processes,
                 dict(ckpt.get("env_flags") or {}), a.workers, a.ray_address, phase_label_prob=shares)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
