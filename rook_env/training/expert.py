"""Expert iteration: the network's card play distilled towards search's choices, its value head towards outcomes.

A *labelled decision* is a card-play decision searched by ``search:<network>`` (rook_env.training.labels.search):
the seat's observation, its action mask, the critic input, and ``q``, search's mean score difference (the seat's
team minus the other, in points) for each card it tried (NaN elsewhere: one card of each set of equivalent cards
is tried), plus the hand's ``outcome`` from the seat's side.

**The loss** (:func:`distill_loss`). The policy target is ``softmax(q / temperature)`` over the tried cards (0 on
the others, the legal cards search found equivalent to a tried one included: the network learns to play the
representative); the loss is the cross-entropy of the network's masked policy to it. The temperature is in
points: a card 1 temperature worse than the best gets e^-1 of its weight. The default, 10 points: search's best
and second-best cards are within 10 points in 72% of its decisions (median gap 3.5; docs/training.md), gaps
that 24 sampled worlds of a score difference ranging over +-180 points do not resolve, so the target spreads
over such cards instead of betting on the noise, and a card clearly better (20+ points) takes most of it. The value head regresses the outcome times
``reward_scale`` (what PPO's return of the decision is with gamma 1: the hand's score difference, paid at its
end). Undistilled decisions (bids, discards, trump; forced moves) have no policy loss: in the loop PPO keeps
training them; in :func:`distill` (no PPO) an optional KL to the initial network holds them where they were.
**Clear choices only** (``min_gap`` > 0, :func:`hold_unclear`, the same filter offline and in the loop): only the
decisions where search's best card beats its second by ``min_gap`` points are distilled; the other searched
decisions are held at the initial network by the KL (:func:`masked_kl`).

**In the training loop** (the config's ``exit`` section, :class:`~rook_env.training.config.ExitConfig`): each
PPO minibatch adds ``exit.coef`` times this loss on ``exit.batch`` labelled decisions drawn from a buffer
(:class:`LabelBuffer`) that a :class:`LabelSource` fills every iteration: :class:`OfflineLabels` (shards on
disk) or :class:`OnlineLabels` (a background process in which the *current* network plays ``exit.tables``
tables and search rates the card plays of its own positions, all tables' in one ``act_batch`` call:
:mod:`rook_env.training.labels.online`); with ``exit.kl_coef`` > 0, plus that times the KL to
``init_checkpoint``'s policy on ``exit.batch`` of the unclear decisions.

**Distillation alone** (supervised, from shards; the held-out hands give the accuracy and loss):

    rook-train distill --labels runs/labels --init rook_env/agents/checkpoints/best_auction.pt \\
        --out runs/distill --steps 3000
    python evaluate.py runs/distill/agent.pt heuristic --deals 1000 --seed 7100000 --workers 1
"""

from __future__ import annotations

import argparse
import glob
import multiprocessing as mp
import os
import queue
import time
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn

from rook_env.agents.learned.model import ActorCritic, load_checkpoint, model_from_checkpoint

from .labels.online import TableLabeller
from .ppo import make_optimizer

LABEL_KEYS = ("obs", "mask", "q", "cin", "outcome")  # what the loss reads of a record


# ================================================================================================ loss
def search_target(q: torch.Tensor, temperature: float) -> torch.Tensor:
    """``softmax(q / temperature)`` over the finite entries of each row of ``q`` (the tried cards); 0 elsewhere.
    Rows must have at least one finite entry."""
    tried = torch.isfinite(q)
    logits = torch.where(tried, q / temperature, torch.full_like(q, -torch.inf))
    return torch.softmax(logits, dim=-1)


def distill_loss(model: ActorCritic, b: dict[str, torch.Tensor], temperature: float, reward_scale: float,
                 vf_coef: float) -> dict[str, torch.Tensor]:
    """The distillation loss of a minibatch of labelled decisions ``b`` (obs, mask, q, outcome; cin: the critic's
    input, absent when the records have none that fits the critic): cross-entropy of the masked policy to
    :func:`search_target`, plus ``vf_coef`` times the value head's squared error to ``outcome * reward_scale``
    (halved, as PPO's). Returns the total ``loss``, its parts and ``accuracy`` (the policy's mode is a card
    search rated best)."""
    target = search_target(b["q"], temperature)
    dist = model.dist(b["obs"], b["mask"])
    pi_loss = -torch.where(target > 0, target * dist.log_probs, torch.zeros_like(target)).sum(-1).mean()
    if "cin" in b:
        v_loss = 0.5 * ((model.value(b["cin"]) - b["outcome"] * reward_scale) ** 2).mean()
    else:
        v_loss = torch.zeros((), device=b["obs"].device)
    with torch.no_grad():
        best = torch.where(torch.isfinite(b["q"]), b["q"], torch.full_like(b["q"], -torch.inf)).amax(-1, keepdim=True)
        accuracy = (b["q"].gather(-1, dist.mode().unsqueeze(-1)) >= best).float().mean()
    return {"loss": pi_loss + vf_coef * v_loss, "pi_loss": pi_loss, "v_loss": v_loss, "accuracy": accuracy}


# ============================================================================================= records
def clear_choices(q: np.ndarray, min_gap: float) -> np.ndarray:
    """Rows of ``q`` whose best tried card beats the second best by at least ``min_gap`` points (every row with a
    tried card when ``min_gap`` is 0; rows with one tried card only then)."""
    tried = np.isfinite(q)
    if min_gap <= 0:
        return tried.any(axis=1)
    top2 = -np.sort(-np.where(tried, q, -np.inf), axis=1)[:, :2]
    with np.errstate(invalid="ignore"):  # -inf - -inf on rows with no tried card: NaN, not a clear choice
        return (tried.sum(axis=1) >= 2) & (top2[:, 0] - top2[:, 1] >= min_gap)


def hold_unclear(records: dict[str, np.ndarray], min_gap: float) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The clear-choice filter (``min_gap`` > 0): the records with ``q`` cleared (NaN) on the searched decisions
    that are not :func:`clear_choices`, and which those are. They are distilled no more (a gap of a few points is
    the noise of 24 sampled worlds); the caller holds them at the initial network by a KL instead (:func:`masked_kl`).
    ``min_gap`` 0: the records unchanged, none held."""
    if min_gap <= 0:
        return records, np.zeros(len(records["q"]), bool)
    unclear = searched(records) & ~clear_choices(records["q"], min_gap)
    return {**records, "q": np.where(unclear[:, None], np.nan, records["q"]).astype(np.float32)}, unclear


def searched(records: dict[str, np.ndarray]) -> np.ndarray:
    """Which records were searched (some card has a value)."""
    return np.isfinite(records["q"]).any(axis=1)


def labelled(records: dict[str, np.ndarray], critic_dim: int | None) -> dict[str, np.ndarray]:
    """The searched records, with what the loss reads; ``cin`` only where it fits the critic (``critic_dim``:
    the central critic's input size; None: the critic reads the observation)."""
    keep = searched(records)
    out = {k: records[k][keep] for k in ("obs", "mask", "q", "outcome")}
    cin = records["obs"] if critic_dim is None else records.get("cin")
    if cin is not None and cin.shape[1] == (critic_dim or cin.shape[1]):
        out["cin"] = cin[keep]
    return out


def shard_paths(folder: str) -> list[str]:
    """The label shards of a folder (search_labels' ``shard_*.npz``), in name order; an error when there are none."""
    paths = sorted(glob.glob(os.path.join(folder, "shard_*.npz")))
    paths = [p for p in paths if not p.endswith(".tmp.npz")]
    if not paths:
        raise ValueError(f"no label shards (shard_*.npz) in {folder!r}: write some with "
                         f"rook-train search-labels --out {folder}")
    return paths


def read_shards(paths: Sequence[str]) -> dict[str, np.ndarray]:
    """The records of the shards, concatenated; a shard that cannot be read or lacks a field is named."""
    parts = []
    for p in paths:
        try:
            with np.load(p) as z:
                part = {k: z[k] for k in z.files}
        except Exception as exc:  # noqa: BLE001 - any failure to read means a bad shard
            raise ValueError(f"label shard {p!r} cannot be read: {type(exc).__name__}: {exc}") from None
        missing = [k for k in ("obs", "mask", "q", "outcome", "hand") if k not in part]
        if missing:
            raise ValueError(f"label shard {p!r} lacks {', '.join(missing)} (not written by search_labels)")
        parts.append(part)
    keys = set.intersection(*(set(p) for p in parts))  # older shards have no cin
    return {k: np.concatenate([p[k] for p in parts]) for k in sorted(keys)}


class LabelBuffer:
    """The newest ``capacity`` records (arrays of one length, any fields: labelled decisions, or the held ones'
    obs and mask); minibatches drawn uniformly with a torch generator."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.data: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(next(iter(self.data.values()))) if self.data else 0

    def add(self, records: dict[str, np.ndarray]) -> None:
        if not records or not len(next(iter(records.values()))):
            return
        if self.data and set(records) != set(self.data):
            raise ValueError(f"labelled records with fields {sorted(records)} cannot join a buffer of "
                             f"{sorted(self.data)}")
        self.data = {k: np.concatenate([self.data[k], v])[-self.capacity:] if self.data else v[-self.capacity:]
                     for k, v in records.items()}

    def sample(self, batch: int, generator: torch.Generator, device: torch.device) -> dict[str, torch.Tensor]:
        idx = torch.randint(0, len(self), (batch,), generator=generator).numpy()
        return {k: torch.as_tensor(v[idx], device=device) for k, v in self.data.items()}


# ============================================================================================= sources
class LabelSource(Protocol):
    """Where labelled decisions come from: ``labels(weights, max_records)`` hands over what is ready (up to
    ``max_records`` records, as search_labels' dict; None when nothing is), ``weights`` being the current actor's
    state dict (None: unchanged) for a source that searches with it; ``close()`` stops it."""

    def labels(self, weights: dict[str, torch.Tensor] | None, max_records: int) -> dict[str, np.ndarray] | None: ...

    def close(self) -> None: ...


class OfflineLabels:
    """The shards of a folder (``exit.labels``), read once: the first call returns them (searched decisions only,
    up to ``max_records``), later ones nothing. ``weights`` are ignored."""

    def __init__(self, folder: str, critic_dim: int | None) -> None:
        self.paths = shard_paths(folder)
        self.critic_dim = critic_dim
        self.done = False

    def labels(self, weights: dict[str, torch.Tensor] | None, max_records: int) -> dict[str, np.ndarray] | None:
        if self.done:
            return None
        self.done = True
        rec = labelled(read_shards(self.paths), self.critic_dim)
        return {k: v[:max_records] for k, v in rec.items()}

    def close(self) -> None:
        pass


def label_worker(model_kwargs: dict, seed: int, samples: int, tables: int, flags: dict, weights: Any, out: Any,
                 stop: Any, worlds: str = "uniform") -> None:
    """The online source's process: ``tables`` tables played by the newest network it was sent, search rating
    the card-play positions it reaches (:class:`~rook_env.training.online_labels.TableLabeller`, deals from
    ``seed``, search's worlds drawn as ``worlds`` says). Each weights message is also a request: the hands finished since the last one go back as one
    message (a message a hand would cross the pipe one per poll of the loop)."""
    torch.set_num_threads(1)
    out.cancel_join_thread()  # a stopped worker exits without waiting for the loop to take its last hands
    model = ActorCritic(**model_kwargs).eval()
    labeller, done = None, []
    while not stop.is_set():
        asked, latest = False, None
        try:  # the requests sent; before the first weights, wait for them (behaviour cloning may come first)
            while True:
                msg = weights.get(timeout=0.0 if labeller is not None or asked else 1.0)
                asked, latest = True, msg or latest  # {}: a request without new weights
        except queue.Empty:
            pass
        if latest is not None:
            model.actor.load_state_dict(latest)
            if labeller is None:
                labeller = TableLabeller(model, tables, seed, samples, flags, worlds)
        if asked and done:
            out.put({k: np.concatenate([d[k] for d in done]) for k in done[0]})
            done = []
        if labeller is not None:
            rec = labeller.step()
            if rec is not None:
                done.append(rec)


class OnlineLabels:
    """Search rating the current network's positions in a background process (:func:`label_worker`), so labels
    keep flowing while PPO collects and updates; ``labels`` sends it the current weights (and so asks for the
    hands finished since the last call) and takes what it has sent back: the hands of the previous call's request,
    one iteration late. Deals from ``seed`` (keep it apart from evaluation seeds)."""

    def __init__(self, model_kwargs: dict, seed: int, samples: int, tables: int, flags: dict,
                 critic_dim: int | None, worlds: str = "uniform") -> None:
        ctx = mp.get_context("spawn")  # no fork of a process with torch threads running
        self.critic_dim = critic_dim
        self.weights, self.out, self.stop = ctx.Queue(), ctx.Queue(), ctx.Event()
        self.proc = ctx.Process(target=label_worker, name="exit-labels", daemon=True,
                                args=(model_kwargs, seed, samples, tables, flags, self.weights, self.out,
                                      self.stop, worlds))
        self.proc.start()

    def labels(self, weights: dict[str, torch.Tensor] | None, max_records: int) -> dict[str, np.ndarray] | None:
        if not self.proc.is_alive():
            raise RuntimeError(f"the expert-iteration label worker died (exit code {self.proc.exitcode})")
        self.weights.put({} if weights is None else {k: v.detach().cpu().clone() for k, v in weights.items()})
        parts = []
        try:
            while sum(len(p["q"]) for p in parts) < max_records:
                parts.append(labelled(self.out.get_nowait(), self.critic_dim))
        except queue.Empty:
            pass
        if not parts:
            return None
        return {k: np.concatenate([p[k] for p in parts])[-max_records:] for k in parts[0]}

    def close(self) -> None:
        self.stop.set()
        self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join()


def make_label_source(cfg: Any, model: ActorCritic, flags: dict) -> LabelSource:
    """The config's label source (``exit.source``); ``flags``: the table's rule flags."""
    if cfg.exit.source == "offline":
        return OfflineLabels(cfg.exit.labels, model.critic_dim)
    return OnlineLabels(model.kwargs(), cfg.exit.seed, cfg.exit.samples, cfg.exit.tables, flags, model.critic_dim,
                        cfg.exit.worlds)


class ExpertIteration:
    """The loop's side of expert iteration: the label source, the buffers and the minibatch loss. With
    ``exit.min_gap`` > 0 only search's clear choices are distilled (:func:`hold_unclear`, as the offline
    :func:`distill`); with ``exit.kl_coef`` > 0 the other searched decisions are held at the initial network
    (``init_checkpoint``) by a KL."""

    def __init__(self, cfg: Any, model: ActorCritic, flags: dict, generator: torch.Generator,
                 device: torch.device) -> None:
        self.cfg, self.gen, self.device = cfg, generator, device
        self.buffer = LabelBuffer(cfg.exit.buffer)
        self.held = LabelBuffer(cfg.exit.buffer)  # the unclear choices' obs and mask, for the KL
        self.ref = None
        if cfg.exit.kl_coef > 0:  # check_exit: there is an init_checkpoint
            self.ref = model_from_checkpoint(load_checkpoint(cfg.init_checkpoint), cfg.init_checkpoint).to(device).eval()
        self.source = make_label_source(cfg, model, flags)
        if cfg.exit.source == "online" and cfg.exit.labels:  # the shards fill the buffer while search starts
            rec = OfflineLabels(cfg.exit.labels, model.critic_dim).labels(None, cfg.exit.buffer)
            if "cin" not in rec:
                raise ValueError(f"config field 'exit.labels': the shards of {cfg.exit.labels!r} have no critic input "
                                 f"that fits the network (written before search_labels recorded cin?); online labels "
                                 f"have one: write the shards again or leave exit.labels empty")
            self.add(rec)
        self.received, self.since = 0, time.time()

    def add(self, rec: dict[str, np.ndarray]) -> None:
        """Searched decisions into the buffers: the clear choices to distil, the others to hold (with a KL)."""
        rec, unclear = hold_unclear(rec, self.cfg.exit.min_gap)
        self.buffer.add({k: v[~unclear] for k, v in rec.items()})
        if self.ref is not None and unclear.any():
            self.held.add({"obs": rec["obs"][unclear], "mask": rec["mask"][unclear]})

    def refresh(self, model: ActorCritic) -> dict[str, float]:
        """Send the current weights, take the labels ready; returns the iteration's figures (labels/s: labelled
        decisions received per second since the last refresh)."""
        rec = self.source.labels(model.actor.state_dict(), self.cfg.exit.buffer)
        n = 0 if rec is None else len(rec["q"])
        if n:
            self.add(rec)
        self.received += n
        now = time.time()
        rate = n / max(now - self.since, 1e-9)
        self.since = now
        return {"exit/labels_per_s": rate, "exit/labels_received": self.received, "exit/label_buffer": len(self.buffer),
                "exit/held_buffer": len(self.held)}

    def loss(self) -> Any:
        """The update's ``extra`` loss (None while the buffer is empty): ``exit.coef`` times :func:`distill_loss` of
        ``exit.batch`` decisions from the buffer, plus ``exit.kl_coef`` times the KL to the initial network on
        ``exit.batch`` held (unclear) decisions."""
        if not len(self.buffer):
            return None
        e, cfg = self.cfg.exit, self.cfg

        def extra(m: ActorCritic) -> dict[str, torch.Tensor]:
            r = distill_loss(m, self.buffer.sample(e.batch, self.gen, self.device), e.temperature, cfg.reward_scale,
                             cfg.vf_coef)
            r["loss"] = e.coef * r["loss"]
            if self.ref is not None and len(self.held):
                b = self.held.sample(e.batch, self.gen, self.device)
                r["kl_initial"] = masked_kl(m, self.ref, b["obs"], b["mask"])
                r["loss"] = r["loss"] + e.kl_coef * r["kl_initial"]
            return r

        return extra

    def close(self) -> None:
        self.source.close()


# ========================================================================================== distill
def masked_kl(model: ActorCritic, ref: ActorCritic, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """KL(ref || model) of the masked policies, mean over the rows."""
    with torch.no_grad():
        p_ref = ref.dist(obs, mask)
    d = model.dist(obs, mask)
    terms = p_ref.probs * (p_ref.log_probs - d.log_probs)
    return torch.where(mask.bool(), terms, torch.zeros_like(terms)).sum(-1).mean()


def distill(labels: str, init: str, out: str, steps: int = 3000, lr: float = 1e-4, batch: int = 512,
            temperature: float = 10.0, kl_coef: float = 1.0, held_out: float = 0.1, reward_scale: float = 0.01,
            vf_coef: float = 0.5, seed: int = 1, min_gap: float = 0.0, log: Any = print) -> dict:
    """Fine-tune the network of checkpoint ``init`` towards the labels of the folder ``labels`` (see the module
    docstring); write ``<out>/agent.pt`` (the init checkpoint with the new weights) and return the report.
    ``min_gap`` > 0: only the decisions where search's best card beats its second by that many points are
    distilled; the other searched decisions join bids, discards and trump under the KL to the initial network."""
    t0 = time.time()
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    ckpt = load_checkpoint(init)
    model = model_from_checkpoint(ckpt, init)
    ref = model_from_checkpoint(ckpt, init).eval()
    records, _ = hold_unclear(read_shards(shard_paths(labels)), min_gap)  # unclear choices: under the KL below
    hands = np.unique(records["hand"])
    test_hands = hands[np.random.default_rng(seed).random(len(hands)) < held_out]
    is_test = np.isin(records["hand"], test_hands)
    other = ~searched(records) & (records["mask"].sum(axis=1) > 1)  # bids, discards, trump: held by the KL
    train, test = LabelBuffer(len(records["q"])), LabelBuffer(len(records["q"]))
    train.add(labelled({k: v[~is_test] for k, v in records.items()}, model.critic_dim))
    test.add(labelled({k: v[is_test] for k, v in records.items()}, model.critic_dim))
    keep = other & ~is_test
    k_obs, k_mask = torch.as_tensor(records["obs"][keep]), torch.as_tensor(records["mask"][keep])
    if len(train) == 0 or len(test) == 0:
        raise ValueError(f"{labels!r}: too few searched decisions for a training and a held-out part "
                         f"({len(train)} and {len(test)})")

    def held_out_figures() -> dict:
        model.eval()
        with torch.no_grad():
            b = {k: torch.as_tensor(v) for k, v in test.data.items()}
            r = distill_loss(model, b, temperature, reward_scale, vf_coef)
        return {k: round(float(r[k]), 4) for k in ("pi_loss", "v_loss", "accuracy")}

    before = held_out_figures()
    log(f"{len(train)} training and {len(test)} held-out searched decisions ({len(test_hands)} of {len(hands)} "
        f"hands held out), {int(keep.sum())} other decisions under the KL; value loss "
        f"{'on' if 'cin' in train.data else 'off (the shards have no critic input that fits)'}; "
        f"held out before: {before}")
    opt = make_optimizer(model, lr)
    model.train()
    for step in range(steps):
        b = train.sample(batch, gen, torch.device("cpu"))
        r = distill_loss(model, b, temperature, reward_scale, vf_coef)
        loss = r["loss"]
        if kl_coef and len(k_obs):
            idx = torch.randint(0, len(k_obs), (batch,), generator=gen)
            loss = loss + kl_coef * masked_kl(model, ref, k_obs[idx], k_mask[idx])
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        if (step + 1) % max(1, steps // 10) == 0:
            log(f"step {step + 1}/{steps}: pi {r['pi_loss'].item():.4f} v {r['v_loss'].item():.4f} "
                f"acc {r['accuracy'].item():.3f}")
    after = held_out_figures()
    report = {"labels": labels, "init": init, "steps": steps, "lr": lr, "batch": batch, "temperature": temperature,
              "min_gap": min_gap,
              "kl_coef": kl_coef, "train_decisions": len(train), "held_out_decisions": len(test),
              "held_out_before": before, "held_out_after": after, "seconds": round(time.time() - t0, 1)}
    log(f"held out after: {after} ({report['seconds']:.0f}s)")
    os.makedirs(out, exist_ok=True)
    saved = {k: v for k, v in ckpt.items() if k not in ("optimizer", "rng", "pool", "ahead")}
    saved["model"] = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    saved["distill"] = report
    path = os.path.join(out, "agent.pt")
    torch.save(saved, path + ".tmp")
    os.replace(path + ".tmp", path)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Distil search's card play into a network (rook_env.training.expert).")
    p.add_argument("--labels", required=True, help="folder of search_labels shards")
    p.add_argument("--init", required=True, help="the checkpoint to fine-tune")
    p.add_argument("--out", required=True, help="the output folder (agent.pt)")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--temperature", type=float, default=10.0, help="softmax temperature of search's values, points")
    p.add_argument("--kl", type=float, default=1.0, help="KL to the initial network on bids, discards, trump")
    p.add_argument("--held-out", type=float, default=0.1, help="fraction of hands held out")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--min-gap", type=float, default=0.0,
                   help="distil only decisions whose best card beats the second by this many points (0: all)")
    a = p.parse_args(argv)
    for name, ok in (("steps", a.steps > 0), ("lr", a.lr > 0), ("batch", a.batch > 0),
                     ("temperature", a.temperature > 0), ("kl", a.kl >= 0), ("held-out", 0 < a.held_out < 1),
                     ("min-gap", a.min_gap >= 0)):
        if not ok:
            p.error(f"--{name}: out of range (got {getattr(a, name.replace('-', '_'))})")
    try:
        distill(a.labels, a.init, a.out, a.steps, a.lr, a.batch, a.temperature, a.kl, a.held_out, seed=a.seed,
                min_gap=a.min_gap)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
