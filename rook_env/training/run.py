"""What a PPO run holds, shared by the loop (rook_env.training.loop) and its plug-ins: :class:`RunState` (the
counters, the history and the selection's records: what a checkpoint saves of the run), :class:`RandomStreams`
(every random state of the run), :class:`RunPaths` (its folder's files), :class:`Log` (the progress line or log
lines) and :class:`Run`, the objects of one run together.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from rook_env.agents.learned.model import ActorCritic
from rook_env.games import Game

from .checkpoints import rng_state, save_checkpoint, set_rng_state
from .config import PPOConfig
from .reporting import ProgressLine, RunClock


@dataclass
class RunState:
    """The run's counters and records: what a checkpoint saves of it beside the weights and random states
    (:func:`~rook_env.training.checkpoints.save_checkpoint` takes :meth:`as_dict`)."""

    iteration: int = 0  # PPO iterations booked
    decisions: int = 0  # learner decisions booked
    wall_seconds: float = 0.0  # the run's wall time across resumes (RunClock)
    best: dict | None = None  # the best periodic evaluation (selection.new_best)
    history: list[dict] = field(default_factory=list)  # one record per iteration
    bc: dict | None = None  # behaviour cloning's report
    candidates: list[dict] = field(default_factory=list)  # the playoff's (selection.keep_candidate)

    def as_dict(self) -> dict:
        return dict(vars(self))


class RandomStreams:
    """Every random stream of a run: Python's, the run's numpy generator ``rng`` (deals, opponents, the seeds of
    the rest), torch's global one and the named torch generators (``gens``: the collection's, the update's, the
    labelled minibatches')."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.gens: dict[str, torch.Generator] = {}

    def generator(self, name: str, device: torch.device | str = "cpu") -> torch.Generator:
        """A new named torch generator, seeded from ``rng``."""
        gen = torch.Generator(device=device)
        gen.manual_seed(int(self.rng.integers(2**62)))
        self.gens[name] = gen
        return gen

    def state(self) -> dict:
        return rng_state(self.rng, self.gens)

    def restore(self, saved: dict) -> None:
        set_rng_state(self.rng, saved, self.gens)


@dataclass(frozen=True)
class RunPaths:
    """The run folder ``runs/<name>/`` and its files."""

    folder: str

    @property
    def last(self) -> str:
        return os.path.join(self.folder, "last.pt")

    @property
    def best(self) -> str:
        return os.path.join(self.folder, "best.pt")

    @property
    def agent(self) -> str:
        return os.path.join(self.folder, "agent.pt")

    @property
    def curve(self) -> str:
        return os.path.join(self.folder, "curve.png")

    @property
    def summary(self) -> str:
        return os.path.join(self.folder, "summary.json")


class Log:
    """Where a run's lines go: above the progress line when there is one (:meth:`show_progress`), else to stderr,
    nowhere when ``quiet``."""

    def __init__(self, quiet: bool, started: float) -> None:
        self.quiet, self.started = quiet, started
        self.bar: ProgressLine | None = None

    def __call__(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line)
        elif not self.quiet:
            print(line, file=sys.stderr, flush=True)

    def show_progress(self, bar: ProgressLine | None) -> None:
        self.bar = bar

    def progress(self, decisions: int, figures: dict[str, str]) -> None:
        """After an iteration: the progress line's decisions and figures."""
        if self.bar is not None:
            self.bar.update(decisions, figures)

    def steps(self, what: str, done: int, total: int) -> None:
        """A phase's steps (behaviour cloning's): on the progress line a hundred times, as lines ten times."""
        if self.bar is not None:
            if done == total or done % max(1, total // 100) == 0:
                self.bar.set_phase(f"behaviour cloning: {what} {done}/{total}")
        elif done == total or done % max(1, total // 10) == 0:
            self(f"behaviour cloning: {what} {done}/{total} ({time.time() - self.started:.0f}s)")

    def close(self) -> None:
        """Leave the progress line where it stands (the run's last state) and write below it from now on."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@dataclass
class Run:
    """The objects of one PPO run, as the loop and its plug-ins (collectors, loss terms, callbacks) share them."""

    cfg: PPOConfig
    game: Game  # built once per run (rook_env.training.config.game_of) and passed down
    device: torch.device
    model: ActorCritic
    optimizer: torch.optim.Optimizer
    streams: RandomStreams
    paths: RunPaths
    log: Log
    started: float  # this session's start (time.time())
    state: RunState = field(default_factory=RunState)
    collection: Any = None  # the collector plug-in (rook_env.training.collectors)
    terms: list = field(default_factory=list)  # the loss terms beside PPO's (rook_env.training.losses)
    callbacks: list = field(default_factory=list)  # rook_env.training.callbacks
    writer: Any = None  # TensorBoard's SummaryWriter, opened once the run is set up
    clock: RunClock | None = None  # the run's wall time and stopping rule

    def call(self, hook: str, *args: Any) -> None:
        """Call ``hook`` of every callback, in order."""
        for callback in self.callbacks:
            getattr(callback, hook)(self, *args)

    def scalar(self, tag: str, value: float) -> None:
        """A TensorBoard scalar at the run's decision count."""
        self.writer.add_scalar(tag, value, self.state.decisions)

    def checkpoint(self, path: str, full: bool = True) -> None:
        """Write a checkpoint of the run as it stands (``full=False``: the model and counters only)."""
        if full:
            save_checkpoint(path, self.model, self.optimizer, self.cfg, self.state.as_dict(), self.streams.rng,
                            self.collection.pool, gens=self.streams.gens, collection=self.collection.saved(),
                            flags=self.game.flags)
        else:
            save_checkpoint(path, self.model, None, self.cfg, self.state.as_dict(), None, [], full=False,
                            flags=self.game.flags)
