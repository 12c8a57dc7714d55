"""Running a match: its arguments checked, its blocks of deals played in order, in this process or in
worker processes, and one evaluated hand played (:func:`play_hand`), for every game's match scheme.

A match is cut into fixed blocks of deals; ``run_block(block, ctx)`` plays one block and depends
only on ``(ctx, block)``, so the results are identical for any number of workers.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rook_env.core.loop import IllegalActionError, Step, play_turns, reset_agents
from rook_env.core.optional import available, install_hint, require

__all__ = ["cached_env", "check_match_args", "fallbacks", "play_hand", "progress_bar", "run_blocks", "run_match"]

_WORKER: tuple[Callable[[int, Any], list], Any] | None = None


# One environment per (constructor, rule flags) in each process: matches reset it for every deal.
_ENVS: dict[Any, Any] = {}


def cached_env(make: Callable[..., Any], flags: Mapping[str, Any]) -> Any:
    """This process's environment ``make(**flags)``, built once and reused."""
    key = (make, tuple(sorted(flags.items())))
    env = _ENVS.get(key)
    if env is None:
        env = _ENVS[key] = make(**dict(flags))
    return env


def progress_bar(total: int, desc: str) -> Any:
    """A tqdm bar on stderr, or None (with a one-line note) when tqdm is not installed."""
    if not available("tqdm"):
        print(f"(no progress bar: tqdm is not installed; {install_hint('tools')})", file=sys.stderr)
        return None
    return require("tqdm.auto").tqdm(total=total, unit="deal", desc=desc, file=sys.stderr, dynamic_ncols=True, leave=False)


def _init_worker(run_block: Callable[[int, Any], list], ctx: Any) -> None:
    global _WORKER
    _WORKER = (run_block, ctx)
    if "torch" in sys.modules:  # one thread per worker process
        try:
            sys.modules["torch"].set_num_threads(1)
        except Exception:
            pass


def _run_in_worker(block: int) -> list:
    assert _WORKER is not None
    run_block, ctx = _WORKER
    return run_block(block, ctx)


def run_blocks(run_block: Callable[[int, Any], list], ctx: Any, block_deals: Sequence[int], workers: int = 1,
               desc: str | None = None) -> list[list]:
    """``[run_block(b, ctx) for b in range(len(block_deals))]``, over ``workers`` processes
    (``run_block`` must be a module-level function); ``block_deals[b]``: the deals of block ``b``,
    counted by the progress bar shown when ``desc`` is given."""
    bar = progress_bar(sum(block_deals), desc) if desc is not None else None
    chunks: list[list] = []
    try:
        if min(workers, len(block_deals)) <= 1:
            for b in range(len(block_deals)):
                chunks.append(run_block(b, ctx))
                if bar is not None:
                    bar.update(block_deals[b])
        else:
            methods = mp.get_all_start_methods()
            mpctx = mp.get_context("fork" if "fork" in methods else None)
            with mpctx.Pool(min(workers, len(block_deals)), initializer=_init_worker,
                            initargs=(run_block, ctx)) as pool:
                for b, chunk in enumerate(pool.imap(_run_in_worker, range(len(block_deals)), chunksize=1)):
                    chunks.append(chunk)
                    if bar is not None:
                        bar.update(block_deals[b])
    finally:
        if bar is not None:
            bar.close()
    return chunks


def run_match(run_block: Callable[[int, Any], list], ctx: Any, deals: int, block_size: int, workers: int,
              desc: str | None, width: int) -> tuple[np.ndarray, float, int]:
    """Play a match's ``deals`` in blocks of ``block_size`` (:func:`run_blocks`); returns (the records,
    one row of ``width`` ints each, in block order; the seconds it took; the workers used)."""
    n_blocks = (deals + block_size - 1) // block_size
    block_deals = [min(block_size, deals - b * block_size) for b in range(n_blocks)]
    workers = min(workers, n_blocks)
    t0 = time.perf_counter()
    chunks = run_blocks(run_block, ctx, block_deals, workers, desc=desc)
    elapsed = time.perf_counter() - t0
    records = np.array([r for c in chunks for r in c], dtype=np.int64).reshape(-1, width)
    return records, elapsed, workers


def check_match_args(deals: Any, workers: Any, block_size: int, seed: Any) -> None:
    """Raise ValueError naming a bad number of deals, workers, block size or seed."""
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer (results are reproducible per seed), got {seed!r}")


def fallbacks(agent: Any) -> int:
    """An agent's ``fallbacks`` counter (0 for agents that keep none)."""
    return int(getattr(agent, "fallbacks", 0) or 0)


def play_hand(env: Any, agents: Sequence[Any], options: Mapping[str, Any], env_seed: int, strict: bool,
              describe: Callable[[int], str]) -> tuple[list[int], int]:
    """Deal ``options`` (reset seed ``env_seed``) and play the hand with ``agents[seat]``; returns
    (illegal actions per seat, steps). An illegal action raises :class:`IllegalActionError` (its
    message starts with ``describe(seat)``) when ``strict``; otherwise it is counted and replaced
    by the lowest legal action."""
    env.reset(seed=env_seed, options=options)
    reset_agents(agents)
    illegal = [0] * len(agents)

    def replace_illegal(step: Step, error: ValueError) -> int:
        if strict:
            raise IllegalActionError(f"{describe(step.seat)}: {error}", step.seat, step.action) from error
        illegal[step.seat] += 1
        return int(np.flatnonzero(step.observation["action_mask"])[0])  # the lowest legal action

    return illegal, play_turns(env, agents, on_illegal=replace_illegal)
