"""Running an evaluation's blocks of deals in order, in this process or in worker processes.

A match is cut into fixed blocks of deals; ``run_block(block, ctx)`` plays one block and depends
only on ``(ctx, block)``, so the results are identical for any number of workers.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
from typing import Any, Callable, Mapping, Sequence

__all__ = ["cached_env", "progress_bar", "run_blocks"]

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
    try:
        from tqdm.auto import tqdm
    except ImportError:
        print('(no progress bar: tqdm is not installed; pip install -e ".[tools]")', file=sys.stderr)
        return None
    return tqdm(total=total, unit="deal", desc=desc, file=sys.stderr, dynamic_ncols=True, leave=False)


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
