"""Labels on a Ray cluster: a labelling function (:class:`.counterfactual.Labeler`, search's
:func:`.search.label_hands`) in ``workers`` label-worker actors across the cluster, the shards written by the
driver (docs/cluster.md).

**The work is the processes' shards**, cut the same way (the caller's ``plan``, or :func:`.shards.shard_plan`):
every hand belongs to exactly one shard and a shard's records do not depend on which worker labelled it, nor on
whether it was labelled here or by the processes (same files, same arrays: tests/test_ray_cluster.py).

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
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..ray_collection import NAMESPACE, connect, import_ray
from .shards import ShardDone, shard_plan, write_shard

__all__ = ["LabelFn", "LabelWorker", "label_on_ray"]

LabelFn = Callable[..., dict]  # (hands, seed, base, samples, **flags) -> the records as arrays


class LabelWorker:
    """The body of a label-worker actor: labels one shard per call in its own process."""

    def __init__(self) -> None:
        torch.set_num_threads(1)  # one CPU per worker: several workers on a node must not oversubscribe it
        self.node = import_ray().get_runtime_context().get_node_id()

    def label(self, label: LabelFn, seed: int, hands: int, base: str, samples: int,
              flags: dict) -> tuple[dict, str, float]:
        """The records of ``hands`` hands from deal seed ``seed`` (by ``label``), the node and the seconds."""
        t0 = time.perf_counter()
        rec = label(hands, seed, base, samples, **flags)
        return rec, self.node, time.perf_counter() - t0

    def node_id(self) -> str:
        return self.node


class _Fleet:
    """The label workers of one :func:`label_on_ray` call: one actor per slot, replaced when it dies, each with one
    shard in flight."""

    def __init__(self, ray: Any, label: LabelFn, base: Any, samples: int, flags: dict, num_cpus: float,
                 todo: collections.deque) -> None:
        self.ray, self.base, self.samples, self.flags, self.num_cpus, self.todo = ray, base, samples, flags, num_cpus, todo
        self.session = uuid.uuid4().hex[:8]
        self.actor_class = ray.remote(LabelWorker)
        self.label_ref = ray.put(label)
        self.actors: list[Any] = []
        self.incarnation: list[int] = []
        self.pending: dict[Any, tuple[int, tuple[str, int, int]]] = {}  # shard in flight -> (slot, shard)

    def start(self, slot: int) -> None:
        """A new actor in ``slot`` (a new slot, or the replacement of a dead worker)."""
        if slot == len(self.actors):
            self.actors.append(None)
            self.incarnation.append(0)
        else:
            self.incarnation[slot] += 1
        self.actors[slot] = self.actor_class.options(
            num_cpus=self.num_cpus, max_restarts=0, scheduling_strategy="SPREAD", namespace=NAMESPACE,
            name=f"labels-{self.session}-worker-{slot}-{self.incarnation[slot]}").remote()

    def submit(self, slot: int) -> None:
        """The next shard to the worker in ``slot``, if any is left."""
        if self.todo:
            shard = self.todo.popleft()
            ref = self.actors[slot].label.remote(self.label_ref, shard[1], shard[2], self.base, self.samples,
                                                 self.flags)
            self.pending[ref] = slot, shard

    def next_done(self) -> tuple[int, tuple[str, int, int], Any]:
        """Wait for a shard in flight: (slot, shard, the worker's result or the RayActorError of a dead worker)."""
        ready, _ = self.ray.wait(list(self.pending), num_returns=1)
        slot, shard = self.pending.pop(ready[0])
        try:
            return slot, shard, self.ray.get(ready[0])
        except self.ray.exceptions.RayActorError as exc:
            return slot, shard, exc

    def kill(self) -> None:
        for actor in self.actors:  # also on an error or Ctrl-C: the shards in flight are discarded, never written
            self.ray.kill(actor)


def _book(ledger: dict[str, Any], shard: tuple[str, int, int], rec: dict, node: str, seconds: float) -> int:
    """A shard written, in the ledger; its searched decisions."""
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
    return n_q


def label_on_ray(label: LabelFn, out: str, hands: int, seed: int = 1, base: Any = "ppo", samples: int = 24,
                 shard_hands: int = 200, workers: int = 2, address: str = "auto", flags: dict | None = None,
                 num_cpus: float = 1, log: Callable[[str], None] | None = None,
                 plan: list[tuple[str, int, int]] | None = None, on_shard: ShardDone | None = None) -> dict[str, Any]:
    """Label ``hands`` hands in the shards of :func:`.shards.shard_plan` (or of ``plan``, the same (path, first
    deal seed, hands) triples cut another way: the partnership labels' one seed per shard) by ``label`` (``(hands,
    seed, base, samples, **flags)`` -> the records as arrays) with ``workers`` label-worker actors on the Ray
    cluster at ``address`` ("auto", HOST:PORT; "": a private local Ray; ignored when this process is connected
    already); a ``log`` line and an ``on_shard`` call per shard written. Returns the ledger: shards written and
    skipped; hands, decisions and searched decisions labelled; the wall time and the workers' labelling time; per
    node; workers replaced and the shards redone after a worker died (see the module docstring)."""
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
    fleet = _Fleet(ray, label, base, samples, dict(flags or {}), num_cpus, todo)
    t0 = time.perf_counter()
    try:
        for slot in range(min(workers, len(todo))):
            fleet.start(slot)
            fleet.submit(slot)
        while fleet.pending:
            slot, shard, result = fleet.next_done()
            if isinstance(result, Exception):
                todo.appendleft(shard)  # never written: labelled again, by the replacement or another worker
                ledger["workers_replaced"] += 1
                ledger["redone"].append(os.path.basename(shard[0]))
                log(f"ray: label worker {slot} (incarnation {fleet.incarnation[slot]}) died, its shard "
                    f"{os.path.basename(shard[0])} goes back to the queue: {type(result).__name__}; replaced by a "
                    f"new worker")
                fleet.start(slot)
                fleet.submit(slot)
                continue
            rec, node, seconds = result
            fleet.submit(slot)  # the worker labels the next shard while this one is written
            write_shard(shard[0], rec)
            n_q = _book(ledger, shard, rec, node, seconds)
            log(f"{shard[0]}: {len(rec['obs'])} decisions, {n_q} searched, {seconds:.0f}s "
                f"(worker {slot} on node {node[:8]})")
            if on_shard is not None:
                on_shard(shard[0], len(rec["obs"]), seconds)
    finally:
        fleet.kill()
    ledger["seconds"] = time.perf_counter() - t0
    return ledger
