"""Counterfactual labels per second, the code of commit 2012e1a (old) against the working tree's (new), in one run
(rook_env.training.labels.counterfactual: the main job's bound; issue 46).

    PYTHONPATH=$PWD python benchmarks/bench_labels.py                         # 128 deals a set, 3 repeats
    PYTHONPATH=$PWD python benchmarks/bench_labels.py --hands 256 --repeats 5 --sets self heuristic
    PYTHONPATH=$PWD python benchmarks/bench_labels.py --game call_partner --hands 100   # old: commit 3a48f1a

``--game call_partner`` labels call-your-partner deals (5 players, the heuristic playing on, ``label_prob`` 0.25)
instead: one label set, old against new on the same deals, the same records checked; its shares are the trunk,
the branches and, across both, the heuristic's decisions on observations (``act``) and the card play's rule on
bitmasks (``play_out``, new code only).

The old code is ``counterfactual.py`` as it was at ``--old`` (``git show <commit>:<path>``), loaded as a module of
the package ``rook_env.training.labels`` beside the new one: both run on this tree's engine, heuristic and network,
so the figures compare the label code alone. Each repeat labels the same deals (``--seed`` plus the repeat) with
old and new, in turn (which goes first alternates), for each label set: ``self`` (the network at every seat),
``heuristic`` and ``ppo:<checkpoint>`` (the other team's player), as ``configs/default.yaml``'s round labels them
(``label_prob`` 0.25, ``tables`` 2048, one thread). It checks that both give the same records (every array equal)
and prints labels per second (median [min, max] over the repeats), the ratio new / old per repeat, and the ratio
for the default config's mix of deals (self 40,960, heuristic 81,920, networks 61,440: ``ppo:`` stands for its four
networks), time-weighted. Shares of each run's time, measured by timers around the functions (so a little slower
than the plain run): the trunk, the branches, and across both the network's forward passes (``_greedy``), the
opponent's decisions (``act_batch``), the engine (``reset``, ``load_states``, ``step``) and the rest (the Python and
numpy around them). The fit (``rook_env.training.labels.fit``, one epoch over the new labels of each set, fine-tuning
the network, one thread) is timed per label and epoch.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import rook_env.training.labels.counterfactual as new_cf
from rook_env.agents.call_partner_search.agent import CallPartnerSearch
from rook_env.agents.heuristic.call_partner import CallPartnerHeuristic
from rook_env.agents.learned.model import load_checkpoint, model_from_checkpoint
from rook_env.core.vector import RookVectorEnv
from rook_env.games.partnership.vector import PartnershipVectorEnv
from rook_env.training.labels import fit as label_fit
from rook_env.training.labels.shards import write_shard

ROOT = Path(__file__).resolve().parent.parent
MODULE = "rook_env/training/labels/counterfactual.py"
CALL_PARTNER = "call_partner"  # the label set of --game call_partner
MIX = {"self": 40960, "heuristic": 81920, "ppo": 61440}  # configs/default.yaml's deals per kind of set


def old_module(commit: str):
    """``counterfactual.py`` of ``commit``, as a module of this tree's ``rook_env.training.labels``."""
    source = subprocess.run(["git", "show", f"{commit}:{MODULE}"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout
    name = f"rook_env.training.labels.counterfactual_{commit}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = f"{commit}:{MODULE}"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


class Timers:
    """Seconds per part, from wrappers around the functions that do the work (patched in while on)."""

    def __init__(self) -> None:
        self.s: dict[str, float] = {}
        self.depth: dict[str, int] = {}

    def wrap(self, part: str, f):
        def timed(*args, **kwargs):
            if self.depth.get(part):  # a nested call of the same part is counted once
                return f(*args, **kwargs)
            self.depth[part] = 1
            t = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                self.s[part] = self.s.get(part, 0.0) + time.perf_counter() - t
                self.depth[part] = 0
        return timed


def timed_run(module, model, opponent_spec: str, hands: int, seed: int, timers: Timers | None) -> tuple[dict, float]:
    """One ``label_deals`` of ``module``; with ``timers``, its parts timed."""
    if opponent_spec == CALL_PARTNER:
        return timed_call_partner(module, hands, seed, timers)
    opponent = module.opponent_agent(opponent_spec, {})
    patches = []
    if timers is not None:
        targets = [(module, "_greedy", "forward passes"), (module.NetworkPlayOut, "trunk", "trunk"),
                   (module.NetworkPlayOut, "branch_values", "branches"), (RookVectorEnv, "step", "engine"),
                   (RookVectorEnv, "reset", "engine"), (PartnershipVectorEnv, "load_states", "engine")]
        if opponent is not None:
            targets.append((opponent, "act_batch", "opponent"))
        for owner, attr, part in targets:
            patches.append((owner, attr, owner.__dict__.get(attr)))
            setattr(owner, attr, timers.wrap(part, getattr(owner, attr)))
    try:
        t = time.perf_counter()
        rec = module.label_deals("partnership", hands, seed, 0.25, network=model, opponent=opponent, tables=2048)
        return rec, time.perf_counter() - t
    finally:
        for owner, attr, was in reversed(patches):
            if was is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, was)


def timed_call_partner(module, hands: int, seed: int, timers: Timers | None) -> tuple[dict, float]:
    """One call-your-partner ``label_deals`` of ``module`` (5 players); with ``timers``, its parts timed."""
    patches = []
    if timers is not None:
        targets = [(module.HeuristicPlayOut, "trunk", "trunk"), (module.HeuristicPlayOut, "branch_values", "branches"),
                   (CallPartnerHeuristic, "act", "heuristic"), (CallPartnerSearch, "play_out", "card rule")]
        for owner, attr, part in targets:
            patches.append((owner, attr, owner.__dict__.get(attr)))
            setattr(owner, attr, timers.wrap(part, getattr(owner, attr)))
    try:
        t = time.perf_counter()
        rec = module.label_deals("call_partner", hands, seed, 0.25, players=5)
        return rec, time.perf_counter() - t
    finally:
        for owner, attr, was in reversed(patches):
            setattr(owner, attr, was)


def spread(xs: list[float], fmt: str = ",.0f") -> str:
    return f"{statistics.median(xs):{fmt}} [{min(xs):{fmt}}, {max(xs):{fmt}}]"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--network", default="rook_env/agents/checkpoints/ppo_default.pt")
    p.add_argument("--sets", nargs="+", default=["self", "heuristic", "ppo:networks/ppo_v5.pt"])
    p.add_argument("--hands", type=int, default=128)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=95_000_000)
    p.add_argument("--old", default=None, help="the commit whose counterfactual.py is the old code (partnership "
                   "2012e1a, call_partner 3a48f1a)")
    p.add_argument("--game", choices=["partnership", CALL_PARTNER], default="partnership")
    p.add_argument("--fit", action=argparse.BooleanOptionalAction, default=True, help="time the fit too")
    a = p.parse_args()
    if a.game == CALL_PARTNER:  # one set: the heuristic at every seat; its fit is not the network's
        a.sets, a.fit = [CALL_PARTNER], False
    a.old = a.old or ("3a48f1a" if a.game == CALL_PARTNER else "2012e1a")
    torch.set_num_threads(1)  # as a label process runs
    model = model_from_checkpoint(load_checkpoint(a.network), a.network).eval()
    impls = {"old": old_module(a.old), "new": new_cf}
    for spec in a.sets:  # compile the engine's kernels, build the opponents' tables
        for module in impls.values():
            timed_run(module, model, spec, 4, 1, None)

    rate = {(s, i): [] for s in a.sets for i in impls}
    secs = {(s, i): [] for s in a.sets for i in impls}
    shares = {(s, i): Timers() for s in a.sets for i in impls}
    total = {(s, i): 0.0 for s in a.sets for i in impls}
    fit_rate: list[float] = []
    for r in range(a.repeats):
        for spec in a.sets:
            recs = {}
            order = list(impls) if r % 2 == 0 else list(impls)[::-1]
            for name in order:
                rec, dt = timed_run(impls[name], model, spec, a.hands, a.seed + r, None)
                recs[name] = rec
                rate[spec, name].append(len(rec["q"]) / dt)
                secs[spec, name].append(dt)
            for name in order:  # the shares from a second, timed run
                _, dt = timed_run(impls[name], model, spec, a.hands, a.seed + r, shares[spec, name])
                total[spec, name] += dt
            same = recs["old"].keys() == recs["new"].keys() and all(
                np.array_equal(recs["old"][k], recs["new"][k], equal_nan=k == "q") for k in recs["old"])
            print(f"repeat {r}, {spec}: {len(recs['new']['q'])} labels, old {secs[spec, 'old'][-1]:.2f}s, "
                  f"new {secs[spec, 'new'][-1]:.2f}s, {'the same records' if same else 'RECORDS DIFFER'}", flush=True)
            if a.fit and r == 0:
                with tempfile.TemporaryDirectory() as tmp:
                    write_shard(f"{tmp}/shard_0_00000.npz", recs["new"])
                    cfg = label_fit.FitConfig(labels=tmp, out=f"{tmp}/fit.pt", init=a.network, epochs=1, margin=10.0,
                                              threads=1, lr=1e-4)
                    t = time.perf_counter()
                    label_fit.fit(cfg, log=lambda *_: None)
                    fit_rate.append((time.perf_counter() - t) / len(recs["new"]["q"]))

    print(f"\n{a.hands} deals a set, {a.repeats} repeats (deals {a.seed} + repeat), old = {a.old}: "
          "median [min, max]")
    print("| label set | old labels/s | new labels/s | new / old |\n|---|---|---|---|")
    for spec in a.sets:
        ratio = [n / o for n, o in zip(rate[spec, "new"], rate[spec, "old"])]
        print(f"| {spec} | {spread(rate[spec, 'old'])} | {spread(rate[spec, 'new'])} | {spread(ratio, '.2f')} |")
    weights = {s: MIX.get(s.split(":")[0], 0) for s in a.sets}
    if sum(weights.values()):
        mix = [sum(weights[s] * secs[s, "old"][r] for s in a.sets) / sum(weights[s] * secs[s, "new"][r] for s in a.sets)
               for r in range(a.repeats)]
        print(f"| default config's mix (time-weighted) | | | {spread(mix, '.2f')} |")
    parts = (["trunk", "branches", "heuristic", "card rule"] if a.game == CALL_PARTNER else
             ["trunk", "branches", "forward passes", "opponent", "engine"])
    print("\nshares of the time (timed runs, all repeats)")
    print("| label set | code | " + " | ".join(parts) + " | rest |\n|---|---|" + "---|" * (len(parts) + 1))
    for spec in a.sets:
        for name in impls:
            t, s = total[spec, name], shares[spec, name].s
            rest = t - sum(s.get(k, 0.0) for k in parts[2:])
            print(f"| {spec} | {name} | " + " | ".join(f"{s.get(k, 0.0) / t:.0%}" for k in parts)
                  + f" | {rest / t:.0%} |")
    if fit_rate:
        print(f"\nfit: {1e3 * statistics.median(fit_rate):.2f} ms per label and epoch (one thread; "
              f"{', '.join(f'{1e3 * x:.2f}' for x in fit_rate)} by set)")


if __name__ == "__main__":
    main()
