"""Rollout collection on a Ray cluster (the config's ``ray`` section, :class:`~rook_env.training.config.RayConfig`;
docs/cluster.md): ``ray.collectors`` Ray actors, each the in-process :class:`~rook_env.training.collection.Collector`
(the batched engine with ``ray.tables`` tables, the opponents and a copy of the policy) in its own process, on
whichever node has room. The learner is the driver: :class:`RayCollectors` has the in-process collector's
``collect(model, progress)``, so the training loop (rook_env.training.loop) is the same loop.

**Weights** go out through the object store: each learner version is put there once and every collector
started on it reads that one copy; the opponent pool (league members and snapshots) likewise, only when
it changes. Rollouts come back the same way, encoded exactly in about 330 bytes per decision instead of the
arrays' 3.4 kB (the centralized critic's input without the observation it begins with, the observations sparse,
masks and hidden cards as bits: :func:`pack`).

**Asynchrony and policy lag.** Every collector always has one rollout in flight. ``collect`` takes the first
rollout that is ready, hands that collector the current weights for its next one at once (it plays while the
learner updates) and returns the batch. A rollout's *lag* is the number of updates between the weights that
played it and the learner that consumes it: with one collector 1 (as with ``overlap: true`` in-process),
with N collectors about N when they are the bound. PPO's ratio is taken against the behaviour policy's
recorded log-probabilities, so its clipping corrects a small lag; a rollout whose lag exceeds
``ray.max_lag`` is *dropped* (booked nowhere, its decisions not counted, counted in the ledger and logged)
and its collector restarted on the current weights. Dropping was chosen over V-trace-style truncated
importance weights because it keeps the PPO update (rook_env.training.ppo) one piece of code for both
loops, and because the bound is hardly ever reached when ``max_lag`` is at least the number of collectors.

**Faults.** A collector that dies (its process or node killed: ``ray.exceptions.RayActorError``) loses its
rollout in flight (never received, so never counted); it is replaced by a new actor in its slot, which the
log says. A new actor (a replacement, or a first one that waited for a node) gets its first rollout's weights
when it has started, so it plays the learner's weights of then: starting can take seconds, or as long as a node
is down, and weights from the moment it was asked for would make its first rollout too old to book. While
collectors wait for a node the log says so every ``WAIT_LOG_SECONDS``. When the driver dies Ray ends its
collectors with it; ``--resume last.pt`` starts new ones, and the checkpoint's counters hold exactly the rollouts
booked before it.

**Bookkeeping.** Each rollout carries an id (the driver session, the collector slot, its incarnation and a
sequence number), the node it was collected on, the weights version and the lag; the loop records it in the
iteration's history entry (``rollout``), so that a run's decisions can be checked to be counted once. The ledger
(:meth:`RayCollectors.report`: rollouts and decisions booked and dropped, collectors replaced) is saved in every
checkpoint and a resumed run goes on from it, so the summary's covers the whole run.

Ray is imported only here, and only when a :class:`RayCollectors` is built: the in-process default never
imports it (tests/test_ray_cluster.py).
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from rook_env.agents.learned.model import ActorCritic
from rook_env.core.optional import require

from .collection import Collector
from .config import Config
from .ray_cluster import match_auth_mode

NAMESPACE = "rook_env"  # the Ray namespace of the collector actors (named: tests and operators can find them)
WAIT_LOG_SECONDS = 60.0  # log when no rollout has arrived for this long (collectors pending placement)


def import_ray(purpose: str = "the config's ray section (ray.collectors > 0)") -> Any:
    """``ray``, or an error that says how to install it (rook_env.core.optional)."""
    return require("ray", purpose)


def connect(address: str, purpose: str = "the config's ray section (ray.collectors > 0)") -> Any:
    """``ray``, this process connected as a driver to the cluster at ``address`` ("auto", HOST:PORT; "": a private
    local Ray started here) unless it is connected already."""
    ray = import_ray(purpose)
    if not ray.is_initialized():
        kw: dict[str, Any] = {"include_dashboard": False} if not address else {}
        if address.startswith(("127.", "localhost")):  # a driver on the head machine stays on loopback
            kw["_node_ip_address"] = "127.0.0.1"
        if address:  # join in the head's authentication mode (docs/cluster.md#authentication)
            match_auth_mode()
        ray.init(address=address or None, namespace=NAMESPACE, log_to_driver=False, **kw)
    return ray


def collector_config(cfg: Config) -> Config:
    """The config a collector actor plays with: ``ray.tables`` tables (``num_envs`` when 0)."""
    return dataclasses.replace(cfg, num_envs=cfg.ray.tables or cfg.num_envs)


class CollectorWorker:
    """The body of a collector actor: the in-process :class:`Collector` and a copy of the network. Its methods
    run in the actor's process; the driver reaches them through Ray (:class:`RayCollectors`)."""

    def __init__(self, cfg: Config, model_kwargs: dict, seed: int, rollout_id: dict) -> None:
        torch.set_num_threads(cfg.torch_threads)
        self.model = ActorCritic(**model_kwargs).eval()
        self.collector = Collector(cfg, torch.device("cpu"), np.random.default_rng(seed))
        self.version = self.opponents_version = -1
        self.id = rollout_id  # session, slot, incarnation; seq is added per rollout
        self.seq = 0
        self.node = import_ray().get_runtime_context().get_node_id()

    def collect(self, weights: dict, version: int, opponents: list[dict], opponents_version: int,
                progress: float) -> tuple[dict, dict]:
        """One rollout with the weights of learner ``version`` against the opponent pool of ``opponents_version``
        (both loaded only when they changed). Returns the collector's (batch, stats); stats["ray"] says where and
        from what it came."""
        if version != self.version:
            self.model.load_state_dict(weights)
            self.version = version
        if opponents_version != self.opponents_version:
            self.collector.pool = [actor_like(self.model, sd) for sd in opponents]  # league members, then snapshots
            self.opponents_version = opponents_version
        t0 = time.perf_counter()
        batch, stats = self.collector.collect(self.model, progress)
        batch = pack(batch)
        stats["ray"] = {**self.id, "seq": self.seq, "node": self.node, "version": version,
                        "decisions": len(batch["act"]), "seconds": time.perf_counter() - t0}
        self.seq += 1
        return batch, stats

    def node_id(self) -> str:
        return self.node


@dataclasses.dataclass(frozen=True)
class Bits:
    """A 2-D array of zeros and ones on the wire: one bit per entry (``np.packbits`` along the rows)."""

    bits: np.ndarray
    width: int
    dtype: np.dtype

    def decode(self) -> np.ndarray:
        out = np.unpackbits(self.bits, axis=1, count=self.width)
        return out.view(bool) if self.dtype == np.bool_ else out.astype(self.dtype)


@dataclasses.dataclass(frozen=True)
class Sparse:
    """A mostly-zero 2-D array on the wire: the flat positions of its non-zeros and their values."""

    shape: tuple[int, int]
    at: np.ndarray  # flat index of each non-zero (int32 where the array has fewer than 2**31 entries)
    vals: np.ndarray  # its value, in the array's dtype

    def decode(self) -> np.ndarray:
        out = np.zeros(self.shape, self.vals.dtype)
        out.reshape(-1)[self.at] = self.vals
        return out


def encode(a: np.ndarray) -> np.ndarray | Bits | Sparse:
    """``a`` in its smallest exact form for the trip: :class:`Bits` when it holds only zeros and ones,
    :class:`Sparse` when under an eighth of it is non-zero (8 bytes a non-zero against 4 an entry; the margin pays
    for the scattered writes of decoding), else itself. :func:`decode` gives ``a`` back, value for value and dtype
    for dtype."""
    if a.ndim != 2 or not a.size:
        return a
    nonzero = a != 0
    if a.dtype == np.bool_ or np.array_equal(a, nonzero):
        return Bits(np.packbits(nonzero, axis=1), a.shape[1], a.dtype)
    if a.dtype.kind == "f":
        flat = np.flatnonzero(nonzero)  # (a boolean array's flatnonzero is the fastest of numpy's ways here)
        if flat.size * 8 < a.size:
            return Sparse(a.shape, flat.astype(np.int32) if a.size < 2**31 else flat, a.reshape(-1)[flat])
    return np.ascontiguousarray(a)


def decode(x: Any) -> Any:
    """A writable array of the learner's own from what travelled: the array :func:`encode` made ``x`` from, a copy
    of an array that travelled as it is (the object store's are read-only), None for None."""
    if isinstance(x, (Bits, Sparse)):
        return x.decode()
    return None if x is None else np.array(x)


def pack(batch: dict) -> dict:
    """A collector's batch for the trip to the learner, about 10 times smaller than the arrays themselves (the
    serialisation into the object store, and over a network the transfer, cost time in proportion): the
    centralized critic's input begins with the observation (``state_for``: the seat's observation, then the hidden
    cards), so only the rest travels when that holds; the observations (about 6% non-zero) travel
    :class:`Sparse`, the masks and the hidden cards (zeros and ones) as :class:`Bits` (:func:`encode`)."""
    cin, obs = batch.get("cin"), batch.get("obs")
    out = dict(batch)
    if cin is not None and obs is not None:
        d = obs.shape[1]
        if cin.shape[1] > d and np.array_equal(cin[:, :d], obs):
            out["cin"], out["cin_rest"] = None, encode(cin[:, d:])
    for k in ("obs", "mask"):
        if isinstance(out.get(k), np.ndarray):
            out[k] = encode(out[k])
    return out


def unpack(batch: dict) -> dict:
    """The learner's own (writable) copy of a :func:`pack` ed batch: every array whole again."""
    out = {k: decode(v) for k, v in batch.items() if k != "cin_rest"}
    if "cin_rest" in batch:
        out["cin"] = np.concatenate([out["obs"], decode(batch["cin_rest"])], axis=1)
    return out


def actor_like(model: ActorCritic, state_dict: dict) -> nn.Module:
    """A copy of ``model``'s actor holding ``state_dict`` (an opponent of the pool)."""
    actor = copy.deepcopy(model.actor)
    actor.load_state_dict(state_dict)
    return actor.eval()


class RayCollectors:
    """``ray.collectors`` collector actors behind the in-process collector's interface: ``collect(model,
    progress)``, the opponent ``pool`` and ``league`` lists the loop fills, ``gen`` (kept for the checkpoint's
    random states; the actors draw from their own seeds). See the module docstring."""

    def __init__(self, cfg: Config, rng: np.random.Generator, log: Callable[[str], None] | None = None) -> None:
        self.ray = connect(cfg.ray.address)
        self.cfg, self.rng = cfg, rng
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.pool: list[nn.Module] = []
        self.league: list[nn.Module] = []
        self.gen = torch.Generator()
        self.gen.manual_seed(int(rng.integers(2**62)))
        self.session = uuid.uuid4().hex[:8]  # tells this driver's rollouts from a resumed driver's
        self.version = 0  # learner versions handed out (one per collect call: the loop updates after each)
        self.weights_ref = self.opponents_ref = None
        self.weights_version = -1
        self.opponents_key: tuple = ()
        self.opponents_version = 0
        self.actors: list[Any] = []
        self.incarnation: list[int] = []
        self.pending: dict[Any, int] = {}  # rollout in flight -> slot
        self.starting: dict[Any, tuple[int, float]] = {}  # a new actor's first call in flight -> (slot, since)
        self.short_logged = 0.0  # when the log last said collectors are waiting for a node
        self.model_kwargs: dict | None = None
        self.closed = False
        # the ledger: what came back and what became of it, over the whole run (resume() adds the earlier sessions')
        self.ledger = {"booked_rollouts": 0, "booked_decisions": 0, "dropped_rollouts": 0, "dropped_decisions": 0,
                       "collectors_replaced": 0, "in_flight_at_close": 0}
        self.dropped: list[dict] = []  # the dropped rollouts' ids (the summary's ray.dropped)
        self.sessions = 1  # driver sessions of the run (a resume is one more)

    def resume(self, saved: dict) -> None:
        """Go on with the ledger of the run's earlier sessions (what :meth:`report` gave at the checkpoint)."""
        for k in self.ledger:
            self.ledger[k] += int(saved.get(k, 0))
        self.dropped = list(saved.get("dropped", [])) + self.dropped
        self.sessions += int(saved.get("sessions", 1))

    # ---------------------------------------------------------------------------------------- actors
    def _start(self, slot: int) -> None:
        """A new collector actor in ``slot`` (its first, or a replacement). It gets its first rollout's weights
        once it has started (:meth:`_started`): the learner's then, not those of the moment it was asked for."""
        ray, r = self.ray, self.cfg.ray
        if slot == len(self.actors):
            self.actors.append(None)
            self.incarnation.append(0)
        else:
            self.incarnation[slot] += 1
        rid = {"session": self.session, "collector": slot, "incarnation": self.incarnation[slot]}
        options = {"num_cpus": r.num_cpus, "name": f"{self.cfg.name}-{self.session}-collector-{slot}-"
                   f"{self.incarnation[slot]}", "namespace": NAMESPACE, "max_restarts": 0}
        if r.resources:
            options["resources"] = dict(r.resources)
        if r.spread:
            options["scheduling_strategy"] = "SPREAD"
        actor_class = ray.remote(CollectorWorker)
        self.actors[slot] = actor_class.options(**options).remote(
            collector_config(self.cfg), self.model_kwargs, int(self.rng.integers(2**62)), rid)
        self.starting[self.actors[slot].node_id.remote()] = (slot, time.time())

    def _started(self, ref: Any, progress: float, first: bool = False) -> str | None:
        """A new actor's first call came back: it is placed and set up; it gets the current weights for its first
        rollout. Returns its node (None: it died while starting, and is replaced)."""
        slot, _ = self.starting.pop(ref)
        try:
            node = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as exc:
            self._replace(slot, exc, starting=True)
            return None
        self._submit(slot, progress)
        if not first:
            self.log(f"ray: collector {slot} (incarnation {self.incarnation[slot]}) started on node {node[:8]}: "
                     f"its first rollout plays the learner's weights of now (version {self.version})")
        return node

    def _replace(self, slot: int, exc: BaseException, starting: bool = False) -> None:
        """Collector ``slot`` died: what it had in flight is lost (never booked); a new actor takes its slot."""
        self.pending = {ref: s for ref, s in self.pending.items() if s != slot}
        self.ledger["collectors_replaced"] += 1
        lost = "while starting" if starting else "its rollout in flight lost"
        self.log(f"ray: collector {slot} (incarnation {self.incarnation[slot]}) died, {lost}: {type(exc).__name__}; "
                 f"replaced by a new collector")
        self._start(slot)

    def _await_placement(self, progress: float) -> None:
        """Wait until the first collectors have started (placed on nodes, the package imported), so that they all
        begin on the first weights; log where they are. One that cannot be placed within WAIT_LOG_SECONDS starts
        later, on the weights of then."""
        ready, waiting = self.ray.wait(list(self.starting), num_returns=len(self.starting), timeout=WAIT_LOG_SECONDS)
        nodes = collections.Counter(node for ref in ready if (node := self._started(ref, progress, first=True)))
        self.log(f"ray: {sum(nodes.values())} collectors started on {len(nodes)} node(s) "
                 f"({', '.join(f'{n[:8]}: {c}' for n, c in nodes.items())})"
                 + (f"; {len(waiting)} still waiting for {self._node_wanted()}" if waiting else ""))
        self.short_logged = time.time()

    def _node_wanted(self) -> str:
        r = self.cfg.ray
        return f"a node with {r.num_cpus:g} CPU{f' and {r.resources}' if r.resources else ''} free"

    def _say_if_short(self) -> None:
        """Every WAIT_LOG_SECONDS while collectors wait for a node: how many, for how long, and how many play."""
        now = time.time()
        if not self.starting or now - self.short_logged < WAIT_LOG_SECONDS:
            return
        self.short_logged = now
        longest = now - min(since for _, since in self.starting.values())
        self.log(f"ray: {len(self.starting)} of {self.cfg.ray.collectors} collectors waiting for "
                 f"{self._node_wanted()} (the longest for {longest:.0f}s); the run goes on with "
                 f"{len(set(self.pending.values()))} (ray status shows the cluster)")

    def _submit(self, slot: int, progress: float) -> None:
        ref = self.actors[slot].collect.remote(self.weights_ref, self.weights_version, self.opponents_ref,
                                               self.opponents_version, progress)
        self.pending[ref] = slot

    def _publish(self, model: ActorCritic) -> None:
        """Put the current weights (and the opponent pool when it changed) in the object store."""
        ray = self.ray
        if self.weights_version != self.version:
            self.weights_ref = ray.put({k: v.detach().cpu().clone() for k, v in model.state_dict().items()})
            self.weights_version = self.version
        members = self.league + self.pool
        key = tuple(id(m) for m in members)
        if self.opponents_ref is None or key != self.opponents_key:
            self.opponents_ref = ray.put([{k: v.detach().cpu().clone() for k, v in m.state_dict().items()}
                                          for m in members])
            self.opponents_key = key
            self.opponents_version += 1

    # --------------------------------------------------------------------------------------- collect
    def collect(self, model: ActorCritic, progress: float) -> tuple[dict, dict]:
        """The next rollout that is ready and within ``max_lag`` of the learner (see the module docstring). The
        learner's weights now are version ``self.version``; the collector that delivered is restarted on them, and
        so is a collector that has just started."""
        ray = self.ray
        self._publish(model)
        if not self.actors:
            self.model_kwargs = model.kwargs()
            for slot in range(self.cfg.ray.collectors):
                self._start(slot)
            self._await_placement(progress)
        waited = time.time()
        try:
            while True:
                ready, _ = ray.wait(list(self.pending) + list(self.starting), num_returns=1, timeout=WAIT_LOG_SECONDS)
                self._say_if_short()
                if not ready:
                    self.log(f"ray: no rollout for {time.time() - waited:.0f}s: {len(self.pending)} collectors in "
                             f"flight, {len(self.starting)} waiting for {self._node_wanted()} (ray status shows the "
                             f"cluster)")
                    continue
                if ready[0] in self.starting:
                    self._started(ready[0], progress)
                    continue
                got = self._receive(ready[0], progress)
                if got is not None:
                    return got
        finally:
            self.version += 1  # the loop updates the model after each collect

    def _receive(self, ref: Any, progress: float) -> tuple[dict, dict] | None:
        """A rollout that came back: booked and returned, or dropped for its lag (None); its collector plays the
        next one on the current weights (a dead one is replaced)."""
        ray = self.ray
        slot = self.pending.pop(ref)
        self._submit(slot, progress)  # its result is stored: it plays the next rollout while we take this one
        t0 = time.perf_counter()
        try:
            batch, stats = ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            self._replace(slot, exc)
            return None
        batch = unpack(batch)
        meta = stats["ray"]
        meta["receive_seconds"] = time.perf_counter() - t0  # the learner's cost of taking it in
        meta["lag"] = self.version - meta["version"]
        if meta["lag"] > self.cfg.ray.max_lag:
            self.ledger["dropped_rollouts"] += 1
            self.ledger["dropped_decisions"] += meta["decisions"]
            self.dropped.append({k: meta[k] for k in ("session", "collector", "incarnation", "seq", "lag")})
            self.log(f"ray: dropped a rollout of collector {slot}: lag {meta['lag']} > max_lag "
                     f"{self.cfg.ray.max_lag} ({meta['decisions']} decisions)")
            return None
        self.ledger["booked_rollouts"] += 1
        self.ledger["booked_decisions"] += meta["decisions"]
        return batch, stats

    def close(self) -> None:
        """End the collector actors (their rollouts in flight are discarded: never booked). Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.ledger["in_flight_at_close"] += len(self.pending)
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors, self.pending, self.starting = [], {}, {}

    def report(self) -> dict:
        """The ledger over the whole run, the dropped rollouts' ids and the driver sessions (the run summary's
        ``ray`` entry, saved in checkpoints so that a resumed run's covers the part before the resume too)."""
        return {**self.ledger, "dropped": list(self.dropped), "sessions": self.sessions}
