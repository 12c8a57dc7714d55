"""Search labels on a Ray cluster: :func:`rook_env.training.search_labels.label_hands` in ``workers`` label-worker
actors across the cluster, the shards written by the driver (docs/cluster.md). The labelling function is given
(search_labels' CLI passes ``label_hands``), so this module does not import search_labels, which imports it.

    python -m rook_env.training.search_labels --out runs/labels --hands 4000 --ray-address auto --workers 8

**The work is the single-process CLI's shards**, cut the same way (:func:`shard_plan`): shard ``k`` labels the
hands dealt from seeds ``seed + k * shard_hands`` onwards, its search agents seeded from its first seed, so every
hand belongs to exactly one shard and a shard's records do not depend on which worker labelled it, nor on
whether it was labelled here or by the single-process CLI (same files, same arrays: tests/test_ray_cluster.py).

**Workers** are Ray actors (one CPU each, spread over the nodes), each with one shard in flight. The driver
takes whichever shard is ready, writes it (``<out>/shard_<seed>_<k>.npz``, atomically) and hands that worker the
next. A shard that exists already is skipped, so a rerun with the same arguments finishes a run cut short.

**Faults.** A worker that dies (its process or node killed: ``ray.exceptions.RayActorError``) loses only its
shard in flight, which was never written: the shard goes back to the front of the queue and a new actor takes
the worker's slot (the log says so). A shard is written once, by the driver, so nothing is lost or labelled
twice. When the driver dies its workers end with it; rerun the same command (the written shards are skipped).
"""

from __future__ import annotations

import collections
import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np

from .ray_collection import NAMESPACE, connect

LabelFn = Callable[..., dict]  # search_labels.label_hands: (hands, seed, base, samples, **flags) -> records


def shard_plan(out: str, hands: int, seed: int, shard_hands: int) -> list[tuple[str, int, int]]:
    """The shards of a labelling run, as the single-process CLI cuts them: (path, first deal seed, hands)."""
    if hands < 1 or shard_hands < 1:
        raise ValueError(f"need hands >= 1 and shard_hands >= 1, got hands={hands}, shard_hands={shard_hands}")
    return [(os.path.join(out, f"shard_{seed}_{k // shard_hands:05d}.npz"), seed + k, min(shard_hands, hands - k))
            for k in range(0, hands, shard_hands)]


def write_shard(path: str, rec: dict[str, np.ndarray]) -> None:
    """``rec`` at ``path``, atomically (a run killed while writing leaves no partial shard)."""
    np.savez_compressed(path + ".tmp.npz", **rec)
    os.replace(path + ".tmp.npz", path)


def run_label_jobs(worker, jobs: list, processes: int) -> int:
    """Run label ``jobs`` with ``worker(job) -> (path, records, seconds)`` in ``processes`` spawned processes,
    printing each shard as it finishes; returns the records written. (The single-machine CLIs' loop.)"""
    from multiprocessing import get_context

    t0 = time.perf_counter()
    total = 0
    with get_context("spawn").Pool(processes) as pool:
        for path, n_rec, seconds in pool.imap_unordered(worker, jobs):
            total += n_rec
            print(f"{path}: {n_rec} labelled decisions in {seconds:.0f}s; {total} in all, "
                  f"{total / (time.perf_counter() - t0):.1f}/s", flush=True)
    return total


class LabelWorker:
    """The body of a label-worker actor: labels one shard per call in its own process."""

    def __init__(self) -> None:
        import ray
        import torch

        torch.set_num_threads(1)  # one CPU per worker: several workers on a node must not oversubscribe it
        self.node = ray.get_runtime_context().get_node_id()

    def label(self, label: LabelFn, seed: int, hands: int, base: str, samples: int,
              flags: dict) -> tuple[dict, str, float]:
        """The records of ``hands`` hands from deal seed ``seed`` (by ``label``), the node and the seconds."""
        t0 = time.perf_counter()
        rec = label(hands, seed, base, samples, **flags)
        return rec, self.node, time.perf_counter() - t0

    def node_id(self) -> str:
        return self.node


def label_on_ray(label: LabelFn, out: str, hands: int, seed: int = 1, base: str = "ppo", samples: int = 24,
                 shard_hands: int = 200, workers: int = 2, address: str = "auto", flags: dict | None = None,
                 num_cpus: float = 1, log: Callable[[str], None] | None = None,
                 plan: list[tuple[str, int, int]] | None = None) -> dict[str, Any]:
    """Label ``hands`` hands in the shards of :func:`shard_plan` (or of ``plan``, the same (path, first deal seed,
    hands) triples cut another way: network_labels' one seed per shard) by ``label`` (search_labels.label_hands:
    ``(hands, seed, base, samples, **flags)`` -> the records as arrays) with ``workers`` label-worker actors on the Ray
    cluster at ``address`` ("auto", HOST:PORT; "": a private local Ray; ignored when this process is connected
    already). Returns the ledger: shards written and skipped; hands, decisions and searched decisions labelled; the
    wall time and the workers' labelling time; per node; workers replaced and the shards redone after a worker
    died (see the module docstring)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    log = log or (lambda line: print(line, flush=True))
    plan = shard_plan(out, hands, seed, shard_hands) if plan is None else plan
    os.makedirs(out, exist_ok=True)
    todo = collections.deque(s for s in plan if not os.path.exists(s[0]))
    ledger: dict[str, Any] = {"shards": len(plan), "skipped": len(plan) - len(todo), "written": 0, "hands": 0,
                              "decisions": 0, "searched": 0, "seconds": 0.0, "worker_seconds": 0.0, "nodes": {},
                              "workers_replaced": 0, "redone": []}
    if not todo:
        return ledger
    ray = connect(address, purpose="labelling on Ray (--workers)")
    session = uuid.uuid4().hex[:8]
    flags = dict(flags or {})
    actor_class = ray.remote(LabelWorker)
    label_ref = ray.put(label)
    actors: list[Any] = []
    incarnation: list[int] = []
    pending: dict[Any, tuple[int, tuple[str, int, int]]] = {}  # shard in flight -> (slot, shard)

    def start(slot: int) -> None:
        if slot == len(actors):
            actors.append(None)
            incarnation.append(0)
        else:
            incarnation[slot] += 1
        actors[slot] = actor_class.options(
            num_cpus=num_cpus, max_restarts=0, scheduling_strategy="SPREAD", namespace=NAMESPACE,
            name=f"labels-{session}-worker-{slot}-{incarnation[slot]}").remote()

    def submit(slot: int) -> None:
        if todo:
            shard = todo.popleft()
            pending[actors[slot].label.remote(label_ref, shard[1], shard[2], base, samples, flags)] = slot, shard

    t0 = time.perf_counter()
    try:
        for slot in range(min(workers, len(todo))):
            start(slot)
            submit(slot)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            slot, shard = pending.pop(ready[0])
            try:
                rec, node, seconds = ray.get(ready[0])
            except ray.exceptions.RayActorError as exc:
                todo.appendleft(shard)  # never written: labelled again, by the replacement or another worker
                ledger["workers_replaced"] += 1
                ledger["redone"].append(os.path.basename(shard[0]))
                log(f"ray: label worker {slot} (incarnation {incarnation[slot]}) died, its shard "
                    f"{os.path.basename(shard[0])} goes back to the queue: {type(exc).__name__}; replaced by a new "
                    f"worker")
                start(slot)
                submit(slot)
                continue
            submit(slot)  # the worker labels the next shard while this one is written
            write_shard(shard[0], rec)
            n_q = int(np.isfinite(rec["q"]).any(axis=1).sum())
            ledger["written"] += 1
            ledger["hands"] += shard[2]
            ledger["decisions"] += len(rec["obs"])
            ledger["searched"] += n_q
            ledger["worker_seconds"] += seconds
            per_node = ledger["nodes"].setdefault(node, {"shards": 0, "hands": 0, "decisions": 0})
            per_node["shards"] += 1
            per_node["hands"] += shard[2]
            per_node["decisions"] += len(rec["obs"])
            log(f"{shard[0]}: {len(rec['obs'])} decisions, {n_q} searched, {seconds:.0f}s "
                f"(worker {slot} on node {node[:8]})")
    finally:
        for actor in actors:  # also on an error or Ctrl-C: the shards in flight are discarded, never written
            ray.kill(actor)
    ledger["seconds"] = time.perf_counter() - t0
    return ledger


def main(a: Any, label: LabelFn) -> int:
    """search_labels' CLI with ``--workers`` (``a``: its parsed arguments; ``label``: its label_hands)."""
    ledger = label_on_ray(label, a.out, a.hands, a.seed, a.base, a.samples, a.shard_hands, a.workers, a.ray_address)
    print(f"{ledger['written']} shards written ({ledger['skipped']} there already), {ledger['decisions']} decisions, "
          f"{ledger['searched']} searched, on {len(ledger['nodes'])} node(s), {ledger['seconds']:.0f}s; "
          f"{ledger['workers_replaced']} worker(s) replaced", file=sys.stderr, flush=True)
    return 0
