"""What a run reports: the progress line (where the run stands against its stopping rule, with an honest
ETA), the summary printed at the end, the learning curve, and the machine it ran on.

The stopping rule is ``total_decisions`` or ``max_minutes`` of the run's wall time (across resumes),
whichever comes first (:class:`RunClock`). The progress line's percentage and ETA follow the limit that is
expected to stop the run, from the decision rate this session has measured so far: a run that will stop at
its time cap near 16M decisions shows its time cap and about 16M, not 22M decisions it will never reach. Its
decision rate (``dps``) is that average, evaluations and checkpoints included, with the last ten iterations'
beside it (:func:`progress_figures`).
"""

from __future__ import annotations

import math
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

import numpy as np
import torch

from rook_env.core.optional import require

from .config import OPPONENT_KINDS


# ============================================================================================ progress
def format_duration(seconds: float) -> str:
    """``h:mm:ss``, or ``m:ss`` under an hour."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def format_count(n: float) -> str:
    """1234 -> 1.2k, 15_900_000 -> 15.9M."""
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"


@dataclass(frozen=True)
class Forecast:
    """Where a run stands: the ``limit`` expected to stop it ("decisions" or "time cap"), the ``fraction`` of
    that limit used (in [0, 1]), the seconds of training left (``eta``; None: not known yet) and the decisions
    expected at the stop (``final_decisions``; None: not known yet)."""

    fraction: float
    limit: str
    eta: float | None
    final_decisions: float | None
    decisions: int
    total_decisions: int
    seconds: float
    max_seconds: float

    def text(self) -> str:
        if self.limit == "decisions":
            where = f"{format_count(self.decisions)}/{format_count(self.total_decisions)} dec"
        else:
            at_cap = "" if self.final_decisions is None else f", ~{format_count(self.final_decisions)} dec at the cap"
            where = (f"{format_count(self.decisions)} dec, time cap {format_duration(self.seconds)}/"
                     f"{format_duration(self.max_seconds)}{at_cap}")
        if self.eta is None:
            return f"{where}, eta ?"
        bound = "<=" if self.final_decisions is None else ""  # no rate yet: the time cap bounds it
        return f"{where}, eta {bound}{format_duration(self.eta)}"


class RunClock:
    """The run's wall time and its stopping rule.

    ``start`` is when the run would have started had it never been cut: this session's start minus the wall
    time the resumed checkpoint records, so :meth:`seconds` counts the whole run and ``max_minutes`` is the
    run's budget across resumes. The decision rate is measured over this session's PPO phase, from
    :meth:`start_rate` (behaviour cloning and start-up excluded: they take time but no decisions)."""

    def __init__(self, total_decisions: int, max_minutes: float, start: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.total_decisions, self.max_seconds = total_decisions, max_minutes * 60.0
        self.start, self.clock = start, clock
        self.rate_from: tuple[float, int] | None = None

    def seconds(self) -> float:
        """Wall seconds of the run so far, across resumes."""
        return self.clock() - self.start

    def out_of_time(self) -> bool:
        """True when the run has used its ``max_minutes`` (never without a cap)."""
        return bool(self.max_seconds) and self.seconds() > self.max_seconds

    def start_rate(self, decisions: int) -> None:
        self.rate_from = (self.clock(), decisions)

    def rate(self, decisions: int) -> float | None:
        """Decisions per wall second since :meth:`start_rate` (evaluations and checkpoints included)."""
        if self.rate_from is None or decisions <= self.rate_from[1]:
            return None
        elapsed = self.clock() - self.rate_from[0]
        return (decisions - self.rate_from[1]) / elapsed if elapsed > 0 else None

    def forecast(self, decisions: int) -> Forecast:
        """Which limit is expected to stop the run, from the rate so far; the fraction done and the ETA are that
        limit's (before any rate is known, the time cap's when there is one: it bounds the run)."""
        seconds, total, cap = self.seconds(), self.total_decisions, self.max_seconds
        rate = self.rate(decisions)
        to_total = (total - decisions) / rate if rate else None  # seconds until total_decisions
        time_left = max(0.0, cap - seconds) if cap else None
        if cap and (to_total is None or time_left < to_total):
            final = None if rate is None else min(total, decisions + rate * time_left)
            return Forecast(min(1.0, seconds / cap), "time cap", time_left, final, decisions, total, seconds, cap)
        return Forecast(min(1.0, decisions / total), "decisions", to_total, float(total) if rate else None, decisions,
                        total, seconds, cap)


def show_line(stream: TextIO, tty: bool, line: str) -> str:
    """``line`` as a progress line on ``stream``: on a terminal it replaces the line shown (cut to the terminal's
    width: a longer one would wrap, and "\\r" would rewrite its last row only), elsewhere a line of its own.
    Returns the line as shown."""
    if tty:
        line = line[:shutil.get_terminal_size().columns - 1]
    stream.write(("\r\033[K" + line) if tty else line + "\n")
    stream.flush()
    return line


class ProgressLine:
    """The progress display: one line rewritten in place on a terminal; elsewhere (a log file, CI) a line at
    most every ``every`` seconds. :meth:`write` prints a log line above it."""

    def __init__(self, run_clock: RunClock, stream: TextIO | None = None, every: float = 60.0,
                 width: int = 20) -> None:
        stream = sys.stderr if stream is None else stream  # the stderr of now, not of the import
        self.run_clock, self.stream, self.every, self.width = run_clock, stream, every, width
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.phase, self.stats, self.decisions = "", "", 0
        self.shown_at = -math.inf
        self.line = ""

    def render(self) -> str:
        f = self.run_clock.forecast(self.decisions)
        filled = int(f.fraction * self.width)
        head = f"{self.phase} " if self.phase else ""
        tail = f" | {self.stats}" if self.stats else ""
        return f"{head}{f.fraction:4.0%} [{'#' * filled}{'.' * (self.width - filled)}] {f.text()}{tail}"

    def show(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.tty and not force and now - self.shown_at < self.every:
            return
        self.shown_at = now
        self.line = show_line(self.stream, self.tty, self.render())

    def update(self, decisions: int, stats: dict[str, str]) -> None:
        """After an iteration: the decisions so far and a few figures (losses, rates, last evaluation)."""
        self.decisions, self.phase = decisions, ""
        self.stats = " ".join(f"{k} {v}" for k, v in stats.items())
        self.show()

    def set_phase(self, text: str) -> None:
        """What the run is doing besides PPO iterations (behaviour cloning: steps 500/4000)."""
        self.phase = text
        self.show()

    def write(self, line: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + line + "\n" + self.line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.show(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


# ========================================================================================== iterations
def iteration_scalars(batch: dict, cstats: dict, losses: dict, lr: float, ent_coef: float, mix: dict[str, float],
                      seconds: tuple[float, float, float, float], update_epochs: int, pool_size: int) -> dict:
    """An iteration's TensorBoard scalars: the update's losses, how much of the return's variance the critic
    explains, the schedules, the decision rates, training points per opponent kind and the opponent mix.
    ``seconds``: the collection's, the update's, the iteration's (its collection, unless collected ahead, and
    the update) and the collection ahead's (beside the update; 0 without overlap)."""
    t_collect, t_update, t_iter, t_collect_ahead = seconds
    n = len(batch["act"])
    var_y = np.var(batch["ret"])
    explained_var = float("nan") if var_y == 0 else float(1 - np.var(batch["ret"] - batch["val"]) / var_y)
    scalars = {f"losses/{k}": v for k, v in losses.items()}
    scalars.update({
        "losses/explained_variance": explained_var, "charts/lr": lr, "charts/ent_coef": ent_coef,
        "perf/collect_decisions_per_s": n / t_collect,
        "perf/update_decisions_per_s": n * update_epochs / t_update,
        "perf/decisions_per_s": n / t_iter, "perf/collect_ahead_seconds": t_collect_ahead,
        "charts/hands": cstats["hands"],
        "charts/pool_size": pool_size,
    })
    for mode, rets in cstats["returns"].items():
        if rets:
            scalars[f"train/points_{mode}"] = float(np.mean(rets))
    for k, v in mix.items():
        scalars[f"mix/{k}"] = v
    return scalars


RECENT = 10  # iterations of the progress line's recent decision rate


def progress_figures(rec: dict, history: list[dict], average: float | None) -> dict[str, str]:
    """What the progress line shows of an iteration (its history record): the decision rate (``average``: this
    session's decisions per wall second since PPO started, evaluations and checkpoints included; and over the last
    :data:`RECENT` iterations), the losses, and the latest evaluation against random and the heuristic."""
    rate = f"{average:.0f}" if average else "?"
    if len(history) > RECENT:
        then, now = history[-RECENT - 1], history[-1]
        seconds = now["wall_seconds"] - then["wall_seconds"]
        if seconds > 0:
            rate += f" (last {RECENT} it: {(now['decisions'] - then['decisions']) / seconds:.0f})"
    shown = {"dps": rate, "pg": f"{rec['pg_loss']:.3f}", "vf": f"{rec['v_loss']:.3f}", "ent": f"{rec['entropy']:.2f}"}
    last_eval = next((h["eval"] for h in reversed(history) if "eval" in h), None)
    for opp in ("random", "heuristic"):
        if last_eval and opp in last_eval:
            shown[f"vs_{opp[:4]}"] = f"{last_eval[opp]['mean']:+.0f}"
    return shown


# ============================================================================================= summary
def machine_info() -> dict:
    """What the run's speed figures depend on, recorded in summary.json."""
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__}


def format_eval(label: str, r: dict) -> str:
    return (f"  {label:26s} {r['mean']:+7.1f} points/deal  95% [{r['ci95'][0]:+.1f}, {r['ci95'][1]:+.1f}]  "
            f"({r['deals']} deals)")


def interruption_note(s: dict, eval_every: int) -> str:
    """What an interrupted run's summary says to do next: what ``last.pt`` holds, which agent to evaluate (or
    that there is none yet) and how to resume."""
    last = s["paths"]["last"]
    if s["interrupted_during"] == "behaviour cloning":
        saved = ("the partly cloned network (iteration 0; --resume goes on with PPO without repeating behaviour "
                 "cloning; start afresh with --overwrite)")
    else:
        saved = f"iteration {s['iterations']}, {s['decisions']:,} decisions"
    if "agent" in s["paths"]:
        evaluate = (f"evaluate {s['paths']['agent']}: the best checkpoint's model (iteration {s['best']['iteration']}, "
                    f"score {s['best']['score']:+.1f})")
    else:
        evaluate = "nothing to evaluate yet: no evaluation has taken place (" + (
            f"the first comes at iteration {eval_every})" if eval_every else
            "with eval_every: 0 the only one comes at the end of the run)")
    return f"interrupted: saved {last}: {saved}\n{evaluate}\nresume with: python train.py --resume {last}"


def print_summary(s: dict) -> None:
    """The end of a run as lines: budget used and why it stopped, the best checkpoint's results, the outputs."""
    print(f"\n== {s['name']} (seed {s['seed']}): {s['decisions']:,} decisions, {s['iterations']} iterations, "
          f"{s['wall_seconds'] / 60:.1f} min, stopped by {s['stop_reason']}")
    if s["best"]:
        print(f"best checkpoint: iteration {s['best']['iteration']} ({s['best']['decisions']:,} decisions)")
        for opp, r in s["best"]["eval"].items():
            if isinstance(r, dict):
                print(format_eval(f"vs {opp} (selection)", r))
    for opp, r in s["final_eval"].items():
        print(format_eval(f"vs {opp} (held out)", r))
    print("outputs:")
    for what, path in s["paths"].items():
        print(f"  {what:6s} {path}")


def plot_curve(history: list, path: str, title: str = "", ylabel: str = "points per deal (duplicate, greedy)") -> None:
    """Learning curve: evaluation points per deal (95% bars) and training points by opponent kind."""
    require("matplotlib").use("Agg")
    plt = require("matplotlib.pyplot")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    evals = [h for h in history if "eval" in h]
    opponents = list(dict.fromkeys(k for h in evals for k, v in h["eval"].items() if isinstance(v, dict)))
    colours = {"random": "tab:blue", "heuristic": "tab:red", "search": "tab:green"}
    for i, opp in enumerate(opponents):  # every evaluated opponent; checkpoints by file name
        pts = [(h["decisions"], h["eval"][opp]) for h in evals if opp in h["eval"]]
        x = [p[0] for p in pts]
        y = [p[1]["mean"] for p in pts]
        err = [p[1]["half_width"] for p in pts]
        ax1.errorbar(x, y, yerr=err, label=f"vs {os.path.basename(opp)}", color=colours.get(opp, f"C{3 + i}"),
                     marker="o", ms=3, capsize=2)
    ax1.axhline(0, color="grey", lw=0.8)
    ax1.set_xlabel("learner decisions")
    ax1.set_ylabel(ylabel)
    ax1.set_title("evaluation")
    if ax1.get_legend_handles_labels()[0]:
        ax1.legend()
    for mode in OPPONENT_KINDS:
        pts = [(h["decisions"], h[f"points_{mode}"]) for h in history if f"points_{mode}" in h]
        if len(pts) > 1 and mode != "self":
            x, y = zip(*pts)
            k = max(1, len(y) // 30)
            ys = np.convolve(y, np.ones(k) / k, mode="valid")
            ax2.plot(x[k - 1:], ys, label=f"vs {mode}")
    ax2.axhline(0, color="grey", lw=0.8)
    ax2.set_xlabel("learner decisions")
    ax2.set_ylabel("training points per hand (sampled policy)")
    ax2.set_title("training games")
    if ax2.get_legend_handles_labels()[0]:
        ax2.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
