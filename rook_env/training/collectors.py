"""The collector plug-ins of PPO's loop (rook_env.training.loop): where its rollouts come from and how collection
shares the machine with the update. All three have one face (:class:`Collection`), so the loop is one loop:

- :class:`InProcess` (``overlap: false``): collect a rollout, then update, in turn;
- :class:`Overlapped` (``overlap: true``, the default): the next rollout is collected in this thread while the
  update runs in a second one (:func:`run_beside`; torch and numpy release the GIL in their kernels, so the two
  share two cores), played by the weights from before that update: asynchronous PPO with one update of policy
  lag, which PPO's clipping bounds (its ratio is taken against the behaviour policy's recorded
  log-probabilities). Collection and update draw from their own torch generators, so a run stays reproducible;
  checkpoints record how the rollout collected ahead started (its number, weights and random states) and a
  resume collects it again (:meth:`Overlapped.resume`), so cut-and-resumed runs equal straight ones;
- :class:`OnRay` (``ray.collectors > 0``): collector actors on a Ray cluster
  (:class:`~rook_env.training.ray_collection.RayCollectors`); they play while the learner updates, so
  ``overlap`` does not apply. Its ledger (rollouts booked and dropped, collectors replaced) is saved in checkpoints
  and is the summary's ``ray`` entry.

Every ``pool_every`` rollouts the network that plays the next one joins the snapshot pool first
(:meth:`InProcess.join_pool`); ``pool`` and ``league`` (the config's fixed members) are the opponents' networks.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from torch import nn

from rook_env.agents.learned.model import ActorCritic, CheckpointError

from .collection import Collector
from .ray_collection import RayCollectors
from .run import Run


@dataclass
class Rollout:
    """A rollout for the update: the collector's batch (one row per learner decision, advantages and returns
    included) and stats, its wall seconds, whether it was collected ahead (beside the update before: its time is
    not its iteration's) and where it came from (a Ray collector's id, node and lag; {} in-process)."""

    batch: dict
    stats: dict
    seconds: float
    ahead: bool = False
    origin: dict = field(default_factory=dict)

    @property
    def decisions(self) -> int:
        return len(self.batch["act"])


def timed(collect: Callable[[], tuple[dict, dict]], ahead: bool = False) -> Rollout:
    """A collection as a :class:`Rollout`, with its wall seconds."""
    t0 = time.time()
    batch, stats = collect()
    return Rollout(batch, stats, time.time() - t0, ahead, stats.pop("ray", {}))


def run_beside(background: Callable[[], Any], foreground: Callable[[], Any]) -> tuple[Any, Any]:
    """Run ``background`` in a second thread while this thread runs ``foreground``; return both results.
    Torch and numpy release the GIL in their kernels, so the PPO update (background) and the collection
    (foreground) share two cores. Both always finish before this returns, and an exception of either
    (Ctrl-C included, which Python delivers to this thread) is raised here after both have stopped."""
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["value"] = background()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread below
            out["error"] = exc

    worker = threading.Thread(target=work, name="ppo-update", daemon=True)
    worker.start()
    try:
        front = foreground()
    finally:
        worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"], front


class Collection(Protocol):
    """What the loop asks of a collector plug-in."""

    gen: Any  # the collection's torch generator (one of the run's random streams)
    pool: list[nn.Module]  # snapshots of the policy (opponents)
    league: list[nn.Module]  # the config's fixed opponents

    def rollout(self, run: Run, progress: float) -> Rollout:
        """The next rollout to learn from, at training ``progress`` (the opponent mix's)."""

    def update(self, run: Run, update: Callable[[], dict], next_progress: float) -> tuple[dict, float]:
        """Run ``update`` (the PPO update of that rollout); returns its losses and the seconds spent collecting the
        next rollout beside it (0: none)."""

    def saved(self) -> dict:
        """What a checkpoint records of it (checkpoints.save_checkpoint's ``collection``)."""

    def resume(self, run: Run, saved: dict, path: str) -> None:
        """Go on from what a checkpoint ``path`` recorded (:meth:`saved`)."""

    def snapshot(self) -> Any:
        """Its state at the start of an iteration, for :meth:`rollback` (Ctrl-C drops the iteration)."""

    def rollback(self, snap: Any) -> None: ...

    def report(self) -> dict | None:
        """The summary's entry of it (the Ray ledger; None: none)."""

    def close(self) -> None: ...


class InProcess:
    """Collection in this process (:class:`~rook_env.training.collection.Collector`), then the update, in turn."""

    def __init__(self, run: Run) -> None:
        self.cfg = run.cfg
        self.collector = self.make_collector(run)
        self.gen = self.collector.gen

    def make_collector(self, run: Run) -> Any:
        return Collector(run.cfg, run.device, run.streams.rng, run.game)

    @property
    def pool(self) -> list[nn.Module]:
        return self.collector.pool

    @pool.setter
    def pool(self, members: list[nn.Module]) -> None:
        self.collector.pool = members

    @property
    def league(self) -> list[nn.Module]:
        return self.collector.league

    def join_pool(self, net: ActorCritic, number: int) -> None:
        """Rollout ``number`` (1, 2, ...) starts: every ``pool_every`` rollouts the network that plays it joins the
        snapshot pool first (the newest ``pool_size`` are kept)."""
        if number > 1 and (number - 1) % self.cfg.pool_every == 0:
            self.pool.append(copy.deepcopy(net.actor).eval())
            self.pool = self.pool[-self.cfg.pool_size:]

    def rollout(self, run: Run, progress: float) -> Rollout:
        run.model.eval()
        self.join_pool(run.model, run.state.iteration + 1)
        return timed(lambda: self.collector.collect(run.model, progress))

    def update(self, run: Run, update: Callable[[], dict], next_progress: float) -> tuple[dict, float]:
        return update(), 0.0

    def saved(self) -> dict:
        return {}

    def resume(self, run: Run, saved: dict, path: str) -> None:
        if saved.get("ahead") is not None:
            raise CheckpointError(f"{path!r} was saved with a rollout collected ahead (overlap: true): resume it "
                                  f"with overlap: true")

    def snapshot(self) -> Any:
        return list(self.pool)

    def rollback(self, snap: Any) -> None:
        self.pool = snap

    def report(self) -> dict | None:
        return None

    def close(self) -> None:
        pass


class Overlapped(InProcess):
    """The next rollout collected beside the update, played by ``behaviour``: the weights before that update."""

    def __init__(self, run: Run) -> None:
        super().__init__(run)
        self.streams = run.streams
        self.behaviour = copy.deepcopy(run.model).eval()
        self.ahead: Rollout | None = None  # the rollout collected ahead
        self.ahead_from: dict | None = None  # how it started: its number, the weights, the random states

    def rollout(self, run: Run, progress: float) -> Rollout:
        if self.ahead is None:  # the run's first rollout
            return super().rollout(run, progress)
        rollout, self.ahead, self.ahead_from = self.ahead, None, None
        return rollout

    def start(self, number: int) -> dict:
        """Rollout ``number`` starts with ``behaviour``: how it starts, for checkpoints (:meth:`saved`)."""
        self.join_pool(self.behaviour, number)
        return {"number": number, "rng": self.streams.state(),
                "weights": {k: v.detach().cpu().clone() for k, v in self.behaviour.state_dict().items()}}

    def update(self, run: Run, update: Callable[[], dict], next_progress: float) -> tuple[dict, float]:
        """The next rollout, played by the weights before this update, is collected while it runs (on the last
        iteration too: a run extended with --resume then goes on exactly as one that ran longer)."""
        self.behaviour.load_state_dict(run.model.state_dict())
        self.ahead_from = self.start(run.state.iteration + 2)
        losses, self.ahead = run_beside(
            update, lambda: timed(lambda: self.collector.collect(self.behaviour, next_progress), ahead=True))
        return losses, self.ahead.seconds

    def saved(self) -> dict:
        return {"ahead": self.ahead_from}

    def resume(self, run: Run, saved: dict, path: str) -> None:
        """The rollout the interrupted run had collected ahead, collected again from the same start."""
        ahead_from = saved.get("ahead")
        if ahead_from is None:
            return
        self.behaviour.load_state_dict(ahead_from["weights"])
        now = self.streams.state()
        self.streams.restore(ahead_from["rng"])
        progress = run.state.decisions / run.cfg.total_decisions
        self.ahead = timed(lambda: self.collector.collect(self.behaviour, progress), ahead=True)
        self.ahead_from = ahead_from
        self.streams.restore(now)

    def snapshot(self) -> Any:
        return list(self.pool), self.ahead_from

    def rollback(self, snap: Any) -> None:
        self.pool, self.ahead_from = snap


class OnRay(InProcess):
    """Collector actors on a Ray cluster behind the same ``collect`` (rook_env.training.ray_collection)."""

    def make_collector(self, run: Run) -> Any:
        return RayCollectors(run.cfg, run.streams.rng, log=run.log)

    def saved(self) -> dict:
        return {"ray": self.collector.report()}

    def resume(self, run: Run, saved: dict, path: str) -> None:
        super().resume(run, saved, path)
        if "ray" in saved:
            self.collector.resume(saved["ray"])

    def report(self) -> dict | None:
        return self.collector.report()

    def snapshot(self) -> Any:
        return list(self.pool), dict(self.collector.ledger), len(self.collector.dropped)

    def rollback(self, snap: Any) -> None:
        """The pool and the ledger as the iteration found them (its rollout was taken, but is not booked)."""
        self.pool, ledger, dropped = snap
        self.collector.ledger.update(ledger)
        del self.collector.dropped[dropped:]

    def close(self) -> None:
        """End the actors (no more rollouts: the cores go to the evaluation); the log gets the ledger once."""
        if not self.collector.closed:
            self.collector.close()
            self.collector.log("ray: " + ", ".join(f"{k.replace('_', ' ')} {v:,}"
                                                   for k, v in self.collector.ledger.items()))


def make_collection(run: Run) -> Collection:
    """The config's collector plug-in."""
    if run.cfg.ray.collectors:
        return OnRay(run)
    return Overlapped(run) if run.cfg.overlap else InProcess(run)
