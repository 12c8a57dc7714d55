"""Label shards on disk and the processes that write them: how a labelling run is cut into shards
(:func:`shard_plan`), a shard written atomically (:func:`write_shard`), and shards labelled by processes on this
machine (:func:`run_label_jobs`), which stop cleanly on Ctrl-C or SIGTERM (the shards written are kept; a rerun
skips them). The Ray label workers write the same shards (:mod:`.ray_workers`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing import get_context
from typing import Any

import numpy as np

__all__ = ["ShardDone", "run_label_jobs", "shard_plan", "write_shard"]

# called once per shard written: (path, labelled decisions, seconds it took)
ShardDone = Callable[[str, int, float], None]


def shard_plan(out: str, hands: int, seed: int, shard_hands: int) -> list[tuple[str, int, int]]:
    """The shards of a labelling run, one deal seed per hand: (path, first deal seed, hands); shard ``k`` deals from
    seed ``seed + k * shard_hands`` on."""
    if hands < 1 or shard_hands < 1:
        raise ValueError(f"need hands >= 1 and shard_hands >= 1, got hands={hands}, shard_hands={shard_hands}")
    return [(os.path.join(out, f"shard_{seed}_{k // shard_hands:05d}.npz"), seed + k, min(shard_hands, hands - k))
            for k in range(0, hands, shard_hands)]


def write_shard(path: str, rec: dict[str, np.ndarray]) -> None:
    """``rec`` at ``path``, atomically (a run killed while writing leaves no partial shard)."""
    np.savez_compressed(path + ".tmp.npz", **rec)
    os.replace(path + ".tmp.npz", path)


def shard_line(path: str, records: int, seconds: float, total: int, rate: float) -> str:
    """The log line of a shard written."""
    return f"{path}: {records} labelled decisions in {seconds:.0f}s; {total} in all, {rate:.1f}/s"


def _ignore_ctrl_c() -> None:
    """A label process's first act: Ctrl-C is its parent's to handle (which stops the processes), so it ignores
    SIGINT, then takes it off the mask it was started with (a Ctrl-C that came while it started is dropped)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _start_pool(processes: int) -> Any:
    """``processes`` spawned label processes that leave Ctrl-C to this one, which stops them (a terminal's Ctrl-C
    reaches every process of the group: each would print its own traceback). While they are made, SIGINT is
    blocked in this thread, so they start with it blocked and ignore it before anything else
    (:func:`_ignore_ctrl_c`), and a Ctrl-C that comes meanwhile is only noted (another thread may take it); once
    they are made it stops them and is raised as KeyboardInterrupt (ignoring SIGINT here instead would lose it)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # only the main thread handles signals; a process that ignores Ctrl-C (started in the background) keeps to it
        return get_context("spawn").Pool(processes, initializer=_ignore_ctrl_c)
    caught: list[int] = []
    handler = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = get_context("spawn").Pool(processes, initializer=_ignore_ctrl_c)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C held back by the mask is noted here
        signal.signal(signal.SIGINT, handler)
    if caught:
        pool.terminate()
        pool.join()
        raise KeyboardInterrupt
    return pool


def run_label_jobs(worker: Callable, jobs: list, processes: int, log: Callable[[str], None] | None = None,
                   on_shard: ShardDone | None = None) -> int:
    """Run label ``jobs`` with ``worker(job) -> (path, records, seconds)`` in ``processes`` spawned processes, a
    ``log`` line per shard written (default: printed) and ``on_shard`` called for it; returns the records written.
    On KeyboardInterrupt (Ctrl-C, or SIGTERM where the command line turns it into one) the processes are stopped
    and joined before it goes on up: the shards in flight are lost, never half written."""
    log = log or (lambda line: print(line, flush=True))
    t0 = time.perf_counter()
    total = 0
    pool = _start_pool(processes)
    try:
        for path, n_rec, seconds in pool.imap_unordered(worker, jobs):
            total += n_rec
            log(shard_line(path, n_rec, seconds, total, total / (time.perf_counter() - t0)))
            if on_shard is not None:
                on_shard(path, n_rec, seconds)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    return total
