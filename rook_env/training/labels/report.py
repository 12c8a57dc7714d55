"""What a run of label rounds reports: a progress line with an ETA (rewritten in place on a terminal, elsewhere a
line a minute), every log line in the run folder's ``train.log``, what an interruption kept and how to resume, and
the closing summary (what was trained, the fit's validation figures in words, the held-out matches).

The ETA is the time left of the rounds still to run, from what this session measured: each label set's seconds a
deal once it has written a shard (a set not begun yet: the mean of those measured), the labels a deal, and the
fit's seconds per label and epoch (measured on this machine with a few optimizer steps of the base network before
the first round, then from the epochs of the fit in progress, or from the last round's fit); rounds after the
current one are estimated as long as it, and ``max_minutes`` stops them as the loop does
(:func:`.rounds.over_budget`). Held-out matches and selection at the end are not in it.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

import torch

from rook_env.agents.learned.model import load_checkpoint, model_from_checkpoint

from ..reporting import format_duration, show_line
from .config import RANDOM_NETWORK, RoundsConfig
from .rounds import Progress, round_minutes

__all__ = ["RoundsDisplay", "fit_seconds_per_label", "print_rounds_summary"]


def fit_seconds_per_label(network: str, threads: int, batch: int = 256, steps: int = 12) -> float:
    """Seconds an epoch of the fit takes per label on this machine: a few optimizer steps of ``network``'s actor on
    random sparse observations of its size (batch ``batch``, ``threads`` threads), with a fifth more for the validation
    pass and the reading of the shards."""
    torch.set_num_threads(threads)
    model = model_from_checkpoint(load_checkpoint(network), network)
    opt = torch.optim.Adam(model.actor.parameters(), lr=1e-6)
    obs = (torch.rand(batch, model.obs_dim) < 0.1).float()  # an observation is mostly zeros
    seconds = []
    for _ in range(steps + 2):
        t0 = time.perf_counter()
        loss = model.actor_logits(obs).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        seconds.append(time.perf_counter() - t0)
    return 1.2 * min(seconds[2:]) / batch  # the first steps warm up; the fastest is the machine's, undisturbed


class _Set:
    """A label set of the round in progress: deals in all and written before this session, and what this session
    measured (deals, seconds from the set's start to its last shard)."""

    def __init__(self, name: str, folder: str, hands: int, shard_hands: int) -> None:
        self.name, self.folder, self.hands = name, folder, hands
        self.shards = -(-hands // shard_hands)
        self.done = len([f for f in os.listdir(folder) if f.startswith("shard_") and ".tmp" not in f]) \
            if os.path.isdir(folder) else 0
        self.done_hands = min(hands, self.done * shard_hands)
        self.session_hands, self.started, self.seconds = 0, None, 0.0

    def left(self) -> int:
        return max(0, self.hands - self.done_hands)


class RoundsDisplay(Progress):
    """The display of a run of label rounds: :meth:`log` writes a line to ``log_path`` (opened on the first line);
    :meth:`note` shows one above the progress line too; the :class:`~.rounds.Progress` calls move the line."""

    def __init__(self, log_path: str, stream: TextIO | None = None, every: float = 60.0,
                 clock: Callable[[], float] = time.monotonic,
                 fit_rate: Callable[[str, int], float] | None = fit_seconds_per_label) -> None:
        stream = sys.stderr if stream is None else stream  # the stderr of now, not of the import
        self.log_path, self.stream, self.every, self.clock, self.fit_rate = log_path, stream, every, clock, fit_rate
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.file: TextIO | None = None
        self.line, self.shown_at = "", -math.inf
        self.cfg: RoundsConfig | None = None
        self.k, self.phase, self.sets, self.recorded = 0, "", [], []
        self.labels, self.fit_seconds_per_label = 0, None
        self.epochs_done, self.fit_started, self.label_seconds, self.fit_seconds = 0, 0.0, 0.0, None

    # ------------------------------------------------------------------ lines
    def log(self, line: str) -> None:
        if self.file is None:
            os.makedirs(os.path.dirname(self.log_path) or ".", exist_ok=True)
            self.file = open(self.log_path, "a")  # noqa: SIM115 - open for the run, closed by close()
        self.file.write(f"{time.strftime('%H:%M:%S')} {line}\n")
        self.file.flush()

    def note(self, line: str) -> None:
        """A line in the log and on the screen, above the progress line."""
        self.log(line)
        self.stream.write(("\r\033[K" + line + "\n" + self.line) if self.tty and self.line else line + "\n")
        self.stream.flush()

    def show(self, force: bool = False) -> None:
        now = self.clock()
        if not self.tty and not force and now - self.shown_at < self.every:
            return
        self.shown_at = now
        self.line = show_line(self.stream, self.tty, self.render())

    def close(self) -> None:
        if self.line and self.tty:
            self.stream.write("\n")
            self.stream.flush()
        self.line = ""
        if self.file is not None:
            self.file.close()
            self.file = None

    # ---------------------------------------------------------------- progress
    def start(self, cfg: RoundsConfig, done: list[dict]) -> None:
        self.cfg, self.recorded, self.t0 = cfg, list(done), self.clock()
        todo = [k for k in range(1, cfg.rounds + 1) if all(r["round"] != k for r in done)]
        base = cfg.network if cfg.network != RANDOM_NETWORK else os.path.join(cfg.out, "round_0", "network.pt")
        if todo and self.fit_rate is not None and os.path.exists(base):
            self.fit_seconds_per_label = self.fit_rate(base, cfg.threads)

    def start_round(self, k: int, sets: list[tuple[str, str, int, int]], folders: list[str]) -> None:
        self.k, self.phase, self.labels, self.epochs_done, self.fit_seconds = k, "labels", 0, 0, None
        self.round_t0 = self.clock()
        self.sets = [_Set(s[0], f, s[2], self.cfg.shard_hands) for s, f in zip(sets, folders)]
        shards, before = sum(s.shards for s in self.sets), sum(s.done for s in self.sets)
        hands = sum(s.hands for s in self.sets)
        self.note(f"round {k}/{self.cfg.rounds}: labelling {hands:,} deals in {len(self.sets)} sets ({shards} shards"
                  + (f", {before} written before" if before else "") + f"), then fitting {self.cfg.epochs} epochs")
        self.show(force=True)

    def shard(self, path: str, records: int, seconds: float) -> None:
        now = self.clock()
        s = next((s for s in self.sets if os.path.dirname(path) == s.folder), None)
        if s is not None:
            hands = min(self.cfg.shard_hands, s.left())
            if s.started is None:  # the set's first shard: the set began when the one before it ended
                before = [x for x in self.sets if x.started is not None]
                s.started = max([x.started + x.seconds for x in before], default=self.round_t0)
            s.done, s.done_hands, s.session_hands = s.done + 1, s.done_hands + hands, s.session_hands + hands
            s.seconds = now - s.started
        self.labels += records
        self.show()

    def start_fit(self, k: int) -> None:
        self.phase, self.fit_started = "fit", self.clock()
        self.label_seconds = self.fit_started - self.round_t0
        self.show(force=True)

    def epoch(self, k: int, epoch: int) -> None:
        self.epochs_done = epoch
        self.show()

    def end_round(self, summary: dict) -> None:
        self.fit_seconds = self.clock() - self.fit_started
        self.recorded.append(summary)
        self.note(f"round {self.k}/{self.cfg.rounds}: wrote {summary['network']} in {round_minutes(summary):.1f} min "
                  f"(labels {summary['label_minutes']:.1f}, fit {summary['fit_minutes']:.1f}); validation error "
                  f"{summary['val_mse']:.3f} against {summary['zero_mse']:.3f} for no change")
        self.phase = ""

    # --------------------------------------------------------------------- ETA
    def _hand_seconds(self) -> float | None:
        measured = [s for s in self.sets if s.session_hands]
        if not measured:
            return None
        return sum(s.seconds for s in measured) / sum(s.session_hands for s in measured)

    def _fit_estimate(self) -> float | None:
        """Seconds of the fit in all: measured epochs, the last round's fit, or the calibration."""
        if self.phase == "fit" and self.epochs_done:
            return (self.clock() - self.fit_started) / self.epochs_done * self.cfg.epochs
        if self.recorded and self.recorded[-1].get("fit_minutes"):
            return self.recorded[-1]["fit_minutes"] * 60
        session_hands = sum(s.session_hands for s in self.sets)
        if self.fit_seconds_per_label is None or not session_hands:
            return None
        per_hand = self.labels / session_hands
        fitted = per_hand * sum(s.hands for s in self.sets) * min(self.cfg.replay, self.k)
        return self.fit_seconds_per_label * fitted * self.cfg.epochs

    def eta(self) -> float | None:
        """Seconds left of the run (module docstring); None before anything is measured."""
        fit = self._fit_estimate()
        if self.phase == "labels":
            per_hand = self._hand_seconds()
            if per_hand is None or fit is None:
                return None
            labels_left = sum(s.left() * (s.seconds / s.session_hands if s.session_hands else per_hand)
                              for s in self.sets)
            this_left = labels_left + fit
            this_total = self.clock() - self.round_t0 + this_left
        elif self.phase == "fit" and fit is not None:
            this_left = max(0.0, fit - (self.clock() - self.fit_started))
            this_total = self.label_seconds + fit
        else:
            return None
        return this_left + self._later_rounds(this_total) * this_total

    def _later_rounds(self, round_seconds: float) -> int:
        """How many rounds after the current one will run, each ``round_seconds`` long (``max_minutes``' rule)."""
        later = self.cfg.rounds - self.k
        if not self.cfg.max_minutes:
            return later
        spent = sum(map(round_minutes, self.recorded)) + round_seconds / 60
        n = 0
        while n < later and spent + round_seconds / 60 <= self.cfg.max_minutes:
            spent += round_seconds / 60
            n += 1
        return n

    def render(self) -> str:
        elapsed = self.clock() - self.t0
        eta = self.eta()
        if self.phase == "labels":
            shards = sum(s.shards for s in self.sets)
            done = sum(s.done for s in self.sets)
            current = next((s.name for s in self.sets if s.left()), self.sets[-1].name if self.sets else "")
            what = f"labels {done}/{shards} shards ({current})"
        else:
            what = f"fit epoch {self.epochs_done}/{self.cfg.epochs}"
        frac = 0.0 if eta is None else elapsed / max(elapsed + eta, 1e-9)
        filled = int(frac * 20)
        rate = ""
        if self.phase == "labels" and self.labels:
            rate = f" | {self.labels / max(self.clock() - self.round_t0, 1e-9):.0f} labels/s"
        return (f"round {self.k}/{self.cfg.rounds} {what} {frac:4.0%} [{'#' * filled}{'.' * (20 - filled)}] "
                f"{format_duration(elapsed)}, eta {'?' if eta is None else format_duration(eta)}{rate}")

    # -------------------------------------------------------------- the end
    def interrupted(self, resume: str) -> None:
        """What the interruption kept, and the command that goes on from it."""
        self.close()
        if self.phase == "labels":
            written = sum(s.done for s in self.sets)
            kept = (f" during round {self.k}'s labels: {written} of {sum(s.shards for s in self.sets)} shards "
                    f"written, kept in {os.path.dirname(self.sets[0].folder)}/")
        elif self.phase == "fit":
            kept = f" during round {self.k}'s fit: its labels are kept, the fit starts again"
        else:
            kept = ": the finished rounds are kept (rounds.json)"
        line = f"interrupted{kept}\nresume with: {resume}"
        self.log(line.replace("\n", "; "))
        self.close()
        print(line, file=self.stream, flush=True)


def _fit_in_words(fit_path: str, epochs: int) -> str:
    """A round's fit (its fit.json) in words: the best epoch, the validation error against no change, how often
    the fitted network leaves its base's action on held-out decisions and what that is worth by the labels."""
    with open(fit_path) as fh:
        fitted = json.load(fh)
    best = fitted["history"][fitted["best_epoch"] - 1]
    own = next((m for m in best["margins"] if m["margin"] == 0.0), best["margins"][0])
    closer = 100 * (1 - fitted["val_mse"] / fitted["zero_mse"]) if fitted["zero_mse"] else 0.0
    return (f"its fit ({epochs} epochs, the best {fitted['best_epoch']}): on held-out deals the predicted gains are "
            f"{closer:.0f}% closer to the labels than no change; the fitted network plays another action than its "
            f"base at {100 * own['leaves']:.1f}% of the held-out decisions, worth {own['gain_per_hand']:+.2f} points "
            "a hand and seat by the labels")


def print_rounds_summary(result: dict, cfg: RoundsConfig, stream: TextIO | None = None) -> None:
    """The end of a run of label rounds: what was trained, how the fit did on held-out labels (in words), the
    held-out matches, the outputs (to ``stream``; None: the standard output of the moment)."""
    stream = sys.stdout if stream is None else stream
    rounds = result["rounds"]
    n = len(rounds)
    labelled = sum(r["label_minutes"] for r in rounds)
    head = (f"\n== {os.path.basename(result['out'])}: {n} round{'s' * (n != 1)} of labels and fits from "
            f"{rounds[0]['base']}, {result['minutes']:.1f} min ({labelled:.1f} labelling)")
    out = [head]
    last = rounds[-1]
    sets = ", ".join(f"{name} {v['hands']:,}" for name, v in last["labels"].items())
    out.append(f"round {last['round']} labelled {cfg.label_prob:.0%} of the network's decisions with a choice on "
               f"{sum(v['hands'] for v in last['labels'].values()):,} deals ({sets})")
    fit_path = os.path.join(os.path.dirname(last["network"]), "fit.json")
    if os.path.exists(fit_path):
        out.append(_fit_in_words(fit_path, cfg.epochs))
    chosen = ("the average of the last rounds' networks" if result["selected"] == "average"
              else f"round {result['selected']}'s network")
    held_out = result["final_eval"]
    if held_out:
        first = next(iter(held_out.values()))
        minutes = sum(r["minutes"] for r in held_out.values())
        out.append(f"agent.pt is {chosen}; held out ({first['deals']} duplicate deals from seed {first['seed']}, "
                   f"{minutes:.1f} min):")
    else:
        out.append(f"agent.pt is {chosen} (no held-out match: final_eval_deals is 0)")
    for name, r in held_out.items():
        lo, hi = r["ci95"]
        against = {"heuristic": "the heuristic", "start": "the network it started from"}.get(name, name)
        out.append(f"  vs {against:28s} {r['mean']:+7.1f} points/deal  95% [{lo:+.1f}, {hi:+.1f}]")
    out.append("outputs: " + ", ".join(os.path.join(result["out"], f) for f in ("agent.pt", "rounds.json",
                                                                                "train.log")))
    print("\n".join(out), file=stream, flush=True)
