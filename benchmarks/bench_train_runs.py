"""Training speed end to end: real runs of ``train.py`` with the default config, this checkout against an older
release (by default the first release, 2688910), interleaved, in one run.

    python benchmarks/bench_train_runs.py                            # 3 x (old, new), 90 s each
    python benchmarks/bench_train_runs.py --seconds 150 --repeats 2  # the issue's 150 s runs
    python benchmarks/bench_train_runs.py --refs 2688910 0381c52      # also main before the sparse first layer
    python benchmarks/bench_train_runs.py --refs --seconds 30         # this checkout alone

Each run is ``python train.py --config configs/ppo.yaml`` (``configs/default.yaml`` before 0.9.0) of its own tree (the old release extracted by
``git archive`` into a temporary folder and run with ``PYTHONPATH`` pointing at it, so its own ``rook_env`` and
its own config file are used), with no behaviour cloning (``bc_steps=0``), no periodic evaluation
(``eval_every=0``), no playoff, the final evaluation cut to 2 deals, and ``max_minutes`` set to ``--seconds``.
Everything else is each version's default config (network, rollout, epochs, opponents, league). Runs
alternate between the versions (each ref given, then this checkout) so that a change in the machine's load
hits all.

Figures per run, from the run's ``last.pt`` (its history: learner decisions and wall seconds at the end of
each iteration):

* total: learner decisions / wall seconds at the last iteration (the run's start, imports excluded, to the
  end of its last iteration: what a user gets from a time cap);
* steady: learner decisions / wall seconds between the first and the last iteration's end (the loop's rate
  without the start-up and the first collection);
* per CPU second: learner decisions / the CPU time of the whole ``train.py`` process (all its threads, start-up
  and the 2-deal evaluation included): the work a decision costs, which a loaded machine changes less than
  the wall clock (the old loop runs one thread, the new one two: on an idle 2-core machine the new one's
  wall-clock rate gains from the second core, its CPU rate does not).

The table gives the median [min, max] over repeats; the ratios are this checkout's medians over each ref's, and
per repeat (each run against the one just before it).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
OLD_REF = "2688910"  # the first release

# The same overrides for both versions: no cloning, no evaluation but a 2-deal one at the end, no playoff.
COMMON = ["bc_steps=0", "eval_every=0", "eval_deals=2", "progress=false", "checkpoint_every=5"]


def extract(ref: str, folder: Path) -> Path:
    """The tree of git ``ref`` written into ``folder`` (git archive: the repository itself is not touched)."""
    tar = folder / "tree.tar"
    with open(tar, "wb") as fh:
        subprocess.run(["git", "archive", ref], cwd=REPO, stdout=fh, check=True)
    out = folder / f"tree-{ref}"
    with tarfile.open(tar) as tf:
        tf.extractall(out, filter="data")
    tar.unlink()
    return out


def has_field(tree: Path, name: str) -> bool:
    """Whether the version in ``tree`` has the config field ``name`` (the playoff came after the first release)."""
    sources = [tree / "train.py", tree / "rook_env" / "training" / "config.py"]
    return any(p.is_file() and f"    {name}:" in p.read_text() for p in sources)


def run(tree: Path, seconds: float, run_dir: Path, tag: str) -> dict:
    """One ``train.py`` run of ``tree``; returns its figures (see the module docstring)."""
    sets = COMMON + [f"max_minutes={seconds / 60}", f"run_dir={run_dir}", f"name={tag}"]
    if has_field(tree, "playoff_candidates"):
        sets.append("playoff_candidates=0")
    config = tree / "configs" / "ppo.yaml"  # PPO's run; configs/default.yaml was it before 0.9.0
    if not config.is_file():
        config = tree / "configs" / "default.yaml"
    cmd = [sys.executable, str(tree / "train.py"), "--config", str(config)]
    for s in sets:
        cmd += ["--set", s]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"{tag}: train.py exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    ckpt = torch.load(run_dir / tag / "last.pt", map_location="cpu", weights_only=False)
    hist = ckpt["history"]
    first, last = hist[0], hist[-1]
    steady = ((last["decisions"] - first["decisions"]) / (last["wall_seconds"] - first["wall_seconds"])
              if len(hist) > 1 else float("nan"))
    return {"decisions": last["decisions"], "seconds": last["wall_seconds"], "iterations": len(hist),
            "total": last["decisions"] / last["wall_seconds"], "steady": steady, "cpu": last["decisions"] / cpu}


def fmt(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} [{min(values):,.0f}, {max(values):,.0f}]"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=90.0, help="each run's max_minutes, in seconds")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--refs", nargs="*", default=[OLD_REF], help="git refs to run beside this checkout (default: "
                   "the first release; none: this checkout alone)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_train_runs_") as tmp:
        tmp = Path(tmp)
        trees = {}
        for ref in args.refs:
            trees[ref] = extract(ref, tmp)
        trees["new (this checkout)"] = REPO
        print(f"{args.repeats} repeats of {args.seconds:g} s runs, interleaved: {', '.join(trees)}", flush=True)
        results: dict[str, list[dict]] = {name: [] for name in trees}
        for r in range(args.repeats):
            for i, (name, tree) in enumerate(trees.items()):
                res = run(tree, args.seconds, tmp / "runs", f"r{r}_{i}")
                results[name].append(res)
                print(f"repeat {r} {name}: {res['decisions']:,} decisions in {res['seconds']:.1f} s "
                      f"({res['iterations']} iterations): total {res['total']:,.0f}/s, steady {res['steady']:,.0f}/s, "
                      f"per CPU second {res['cpu']:,.0f}",
                      flush=True)
    print("\n| version | learner decisions | total dec/s | steady dec/s | dec per CPU second |\n|---|---|---|---|---|")
    for name, rows in results.items():
        print(f"| {name} | {fmt([x['decisions'] for x in rows])} | {fmt([x['total'] for x in rows])} | "
              f"{fmt([x['steady'] for x in rows])} | {fmt([x['cpu'] for x in rows])} |")
    new = results["new (this checkout)"]
    for ref in args.refs:
        old = results[ref]
        for key in ("total", "steady", "cpu"):
            ratio = statistics.median(x[key] for x in new) / statistics.median(x[key] for x in old)
            pairs = [n[key] / o[key] for o, n in zip(old, new)]
            print(f"this checkout / {ref}, {key}: {ratio:.2f}x (per repeat: {', '.join(f'{x:.2f}x' for x in pairs)})")


if __name__ == "__main__":
    main()
