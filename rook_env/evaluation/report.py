"""Presentation of evaluation results: tables (rich when installed, plain text otherwise) and plots
(matplotlib). Both come with the ``[tools]`` extra; nothing else in :mod:`rook_env.evaluation` needs them."""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from rook_env.core.optional import available, install_hint, require
from rook_env.games.call_partner.match import RotationResult

from .field import FieldResult
from .results import MatchResult
from .round_robin import RoundRobinResult
from .stats import normal_quantile

__all__ = [
    "Table", "TOOLS_HINT", "field_tables", "have_plots", "have_rich", "match_tables", "plot_field", "plot_match",
    "plot_round_robin", "print_tables", "rotation_tables", "round_robin_tables",
]

TOOLS_HINT = install_hint("tools")


def have_rich() -> bool:
    return available("rich")


def have_plots() -> bool:
    return available("matplotlib")


@dataclass
class Table:
    """A table independent of the output library: ``columns`` are (header, "left" | "right");
    ``styles[r]`` a rich style for row ``r`` (ignored in plain text); ``notes`` print below it."""

    title: str
    columns: list[tuple[str, str]]
    rows: list[list[str]] = field(default_factory=list)
    styles: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_row(self, *cells: str, style: str | None = None) -> None:
        if style:
            self.styles[len(self.rows)] = style
        self.rows.append(list(cells))

    def to_text(self) -> str:
        """Plain text: the title, a header, aligned columns, the notes."""
        widths = [max([len(h)] + [len(r[c]) for r in self.rows]) for c, (h, _) in enumerate(self.columns)]

        def line(cells: list[str]) -> str:
            return "  ".join(cell.rjust(w) if just == "right" else cell.ljust(w)
                             for cell, w, (_, just) in zip(cells, widths, self.columns)).rstrip()

        out = [self.title, line([h for h, _ in self.columns]), "  ".join("-" * w for w in widths)]
        out += [line(r) for r in self.rows] + self.notes
        return "\n".join(out)

    def to_rich(self) -> Any:
        escape = require("rich.markup").escape
        t = require("rich.table").Table(title=escape(self.title), header_style="bold")
        for c, (header, just) in enumerate(self.columns):
            t.add_column(escape(header), justify=just, no_wrap=c > 0)  # numbers never break over lines
        for r, cells in enumerate(self.rows):
            t.add_row(*(escape(c) for c in cells), style=self.styles.get(r))
        return t


def print_tables(tables: list[Table], file: TextIO | None = None, width: int | None = None) -> None:
    """Print tables with rich when it is installed, else as plain text."""
    file = sys.stdout if file is None else file
    if have_rich():
        escape = require("rich.markup").escape
        console = require("rich.console").Console(file=file, width=width)
        for t in tables:
            console.print(t.to_rich())
            for note in t.notes:
                console.print(escape(note))
    else:
        for t in tables:
            print(t.to_text() + "\n", file=file)


def _fmt(x: float | None, spec: str = "+.2f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x + 0.0, spec)  # no "-0.00"


def match_tables(res: MatchResult) -> list[Table]:
    """The summary and per-team tables of a match result."""
    pct = f"{res.confidence:.0%}"
    kind = "duplicate match" if res.duplicate else "match"
    head = Table(f"{kind}: A = {res.team_a} vs B = {res.team_b}", [("measure", "left"), ("value", "right")])
    lo, hi = res.ci
    head.add_row(f"mean points per deal (A - B), {pct} bootstrap CI", f"{_fmt(res.mean)}  [{_fmt(lo)}, {_fmt(hi)}]",
                 style="bold")
    pw = res.pair_wins
    head.add_row("deal pairs won by A / B / tied" if res.duplicate else "deals won by A / B / tied",
                 f"{pw['A']} / {pw['B']} / {pw['tied']}")
    g = res.games
    glo, ghi = g["ci"]
    head.add_row(f"games to {g['target_score']} won by A, {pct} Wilson CI",
                 f"{g['won_a']}/{g['played']} = {_fmt(g['win_rate'], '.1%')}  [{_fmt(glo, '.1%')}, {_fmt(ghi, '.1%')}]")
    head.add_row("illegal actions (A / B)", f"{res.illegal['A']} / {res.illegal['B']}",
                 style="red" if res.illegal_total else "green")
    head.add_row("fallbacks: no rule found a move (A / B)", f"{res.fallbacks['A']} / {res.fallbacks['B']}")
    head.add_row("deals / hands / redeals", f"{res.deals} / {res.hands} / {res.redeals}")
    head.add_row("speed", f"{res.deals_per_s:,.0f} deals/s, {res.hands_per_s:,.0f} hands/s ({res.workers}w)")
    flags = ", ".join(f"{k}={v}" for k, v in sorted(res.flags.items())) or "defaults"
    head.add_row("seed / flags", f"{res.seed} / {flags}")

    teams = Table("per team", [("", "left"), (f"A: {res.team_a}", "right"), (f"B: {res.team_b}", "right")])
    a, b = res.teams["A"], res.teams["B"]
    rows = [
        ("contracts (auctions won)", lambda t: f"{t.contracts} ({t.contracts / t.hands:.0%})" if t.hands else "-"),
        ("made / set", lambda t: f"{t.made} / {t.sets}"),
        ("make rate", lambda t: _fmt(t.make_rate, ".1%")),
        ("mean winning bid", lambda t: _fmt(t.mean_bid, ".1f")),
        ("points per hand as bidders", lambda t: _fmt(t.points_as_bidder, "+.1f")),
        ("points per hand as defenders", lambda t: _fmt(t.points_as_defender, "+.1f")),
        ("points per hand", lambda t: _fmt(t.mean_points, "+.1f")),
        ("counters per hand", lambda t: _fmt(t.mean_counters, ".1f")),
    ]
    for label, f in rows:
        teams.add_row(label, f(a), f(b))
    return [head, teams]


def _with_ci(x: float, ci: tuple[float, float], spec: str = "+.1f") -> str:
    return f"{_fmt(x, spec)} [{_fmt(ci[0], spec)}, {_fmt(ci[1], spec)}]"


def rotation_tables(res: RotationResult) -> list[Table]:
    """The summary and per-agent tables of a call-your-partner rotation match."""
    pct = f"{res.confidence:.0%}"
    field_specs = sorted({a.spec for a in res.agents[1:]})
    head = Table(f"rotation match, {res.players} players: {res.agents[0].name} vs {' / '.join(field_specs)}",
                 [("measure", "left"), ("value", "right")])
    lo, hi = res.ci
    head.add_row(f"{res.agents[0].name} minus the field, points/hand, {pct} CI", f"{_fmt(res.mean)}  "
                 f"[{_fmt(lo)}, {_fmt(hi)}]", style="bold")
    head.add_row("illegal actions", str(res.illegal_total), style="red" if res.illegal_total else "green")
    head.add_row("fallbacks: no rule found a move", str(sum(a.fallbacks for a in res.agents)))
    head.add_row("deals / hands / redeals", f"{res.deals} / {res.hands} / {res.redeals}")
    head.add_row("speed", f"{res.deals_per_s:,.1f} deals/s, {res.hands_per_s:,.0f} hands/s ({res.workers}w)")
    flags = ", ".join(f"{k}={v}" for k, v in sorted(res.flags.items()))
    head.add_row("seed / flags", f"{res.seed} / {flags}")
    t = Table("per agent: every agent plays every seat of every deal",
              [("agent", "left"), (f"score/hand [{pct} CI]", "right"), (f"minus field [{pct} CI]", "right"),
               ("illegal", "right")])
    roles = Table("per agent: roles", [("agent", "left"), ("bids: made/set", "right"), ("alone", "right"),
                                       ("called", "right"), ("bidder/partner/defender", "right")])
    for a in res.agents:
        t.add_row(a.name, _with_ci(a.mean_score, a.score_ci), _with_ci(a.diff, a.diff_ci), str(a.illegal),
                  style="red" if a.illegal else None)
        roles.add_row(a.name, f"{a.contracts}: {a.made}/{a.sets}", str(a.alone), str(a.partner),
                      " / ".join(_fmt(x, "+.0f") for x in (a.score_as_bidder, a.score_as_partner, a.score_as_defender)))
    t.notes.append(f"score/hand: individual hand score; minus field: the agent's score minus the mean of the other "
                   f"agents' (its mean score_diff); per deal over its {res.players} rotations, {pct} percentile "
                   f"bootstrap intervals over deals.")
    roles.notes.append("bids: auctions won, made or set; alone: contracts with the called card in the nest; called: "
                       "hands holding a called card (a secret partner); bidder/partner/defender: mean score per hand "
                       "in that role.")
    return [head, t, roles]


def round_robin_tables(rr: RoundRobinResult) -> list[Table]:
    """The ratings table (with the rating model and, when needed, why the Elo and mean-points orders
    differ as notes) and the matrix of mean points."""
    pct = f"{rr.confidence:.0%}"
    t = Table("Round robin ratings", [("#", "right"), ("team", "left"), (f"Elo [{pct} CI]", "right"),
                                      ("pts/deal", "right"), ("pairs won", "right"), ("deal pairs", "right")])
    for r in rr.rows():
        lo, hi = r["elo_ci"]
        t.add_row(str(r["rank"]), r["name"], f"{r['elo']:.0f} [{lo:.0f}, {hi:.0f}]", _fmt(r["mean_points"]),
                  _fmt(r["deal_pair_score"], ".1%"), str(r["deal_pairs"]))
    t.notes.append(f"Elo: Bradley-Terry fit of the duplicate deal pairs won (ties half), mean 1500; {pct} intervals "
                   f"from {rr.rating_boot} bootstrap resamples of the deals. pts/deal: mean points per deal against "
                   f"the field. pairs won: share of deal pairs won.")
    note = rr.order_note()
    if note:
        t.notes.append("Note: " + note)
    m = Table("points per deal, row vs column", [("", "left")] + [(n, "right") for n in rr.names])
    for i, n in enumerate(rr.names):
        m.add_row(n, *["." if i == j else _fmt(rr.points[i, j]) for j in range(len(rr.names))])
    return [t, m]


def field_tables(res: FieldResult) -> list[Table]:
    """One row per opponent (mean points per deal and games won, with intervals; the worst in bold, an
    opponent facing illegal actions in red) and the minimum over the field below."""
    pct = f"{res.confidence:.0%}"
    target = res.matches[0].games["target_score"]
    t = Table(f"field: {res.candidate} vs {len(res.opponents)} opponent(s), {res.deals} deals each",
              [("opponent", "left"), (f"pts/deal [{pct} CI]", "right"), (f"games won [{pct} CI]", "right"),
               ("games", "right")])
    for i, (name, m) in enumerate(zip(res.opponents, res.matches)):
        g = m.games
        t.add_row(name, _with_ci(m.mean, m.ci), f"{_fmt(g['win_rate'], '.1%')} [{_fmt(g['ci'][0], '.1%')}, "
                  f"{_fmt(g['ci'][1], '.1%')}]", str(g["played"]),
                  style="red" if m.illegal_total else ("bold" if i == res.worst else None))
    t.notes.append(f"field mean (every member alike): {_with_ci(res.field_mean, res.field_ci)} points/deal")
    t.notes.append(f"minimum over the field: {_with_ci(res.minimum, res.minimum_ci)} points/deal against "
                   f"{res.opponents[res.worst]}")
    if res.skipped:
        t.notes.append("not played: " + "; ".join(f"{n} ({why})" for n, why in res.skipped))
    illegal = ", ".join(f"{n}: {m.illegal['A']} / {m.illegal['B']}" for n, m in zip(res.opponents, res.matches)
                        if m.illegal_total)
    t.notes.append(f"illegal actions ({res.candidate} / opponent): {illegal}" if illegal else "illegal actions: 0")
    flags = ", ".join(f"{k}={v}" for k, v in sorted(res.flags.items())) or "defaults"
    t.notes.append(f"{res.candidate} is team A in every match, on the same duplicate deals for every opponent "
                   f"(seed {res.seed}, flags: {flags}); points: {pct} bootstrap intervals over deal pairs; games "
                   f"to {target}: won by {res.candidate}, Wilson intervals.")
    return [t]


def _pyplot() -> Any:
    """matplotlib's pyplot drawing to files (the Agg backend); MissingDependency names the extra without it."""
    require("matplotlib", "plots").use("Agg")
    return require("matplotlib.pyplot", "plots")


def plot_match(res: MatchResult, path: str) -> None:
    """PNG: running mean of the per-deal values with a running normal-approximation band, and the
    final bootstrap interval."""
    plt = _pyplot()

    v = np.asarray(res.pair_values, dtype=np.float64)
    n = np.arange(1, v.size + 1)
    mean = np.cumsum(v) / n
    sq = np.cumsum(v * v) / n
    var = np.maximum(sq - mean * mean, 0.0) * n / np.maximum(n - 1, 1)
    half = normal_quantile(res.confidence) * np.sqrt(var / n)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot(n, mean, color="C0", lw=1.5, label="running mean")
    ax.fill_between(n, mean - half, mean + half, color="C0", alpha=0.2,
                    label=f"running {res.confidence:.0%} interval (normal approx.)")
    ax.axhline(0.0, color="grey", lw=0.8)
    lo, hi = res.ci
    skip = min(v.size - 1, max(10, v.size // 20))  # the first few deals would dominate the scale
    if v.size > 20:
        band = np.concatenate([(mean - half)[skip:], (mean + half)[skip:], [0.0]])
        pad = 0.1 * (band.max() - band.min()) or 1.0
        ax.set_ylim(band.min() - pad, band.max() + pad)
    if math.isfinite(lo):
        ax.errorbar([v.size], [res.mean], yerr=[[res.mean - lo], [hi - res.mean]], fmt="o", color="C3",
                    capsize=4, label=f"final mean, {res.confidence:.0%} bootstrap CI")
    ax.set_xlabel("deals" + (" (each played in both seatings)" if res.duplicate else ""))
    ax.set_ylabel(f"points per deal, {res.team_a} - {res.team_b}")
    ax.set_title(f"{res.team_a} vs {res.team_b}: {res.mean:+.2f} [{lo:+.2f}, {hi:+.2f}] (seed {res.seed})")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def plot_round_robin(rr: RoundRobinResult, path: str) -> None:
    """PNG: Elo ratings (bars) with their bootstrap intervals."""
    plt = _pyplot()

    order = rr.ranking()
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(order)), 4), dpi=100)
    elo = np.array([rr.elo[i] for i in order])
    ci = np.array([rr.elo_ci[i] for i in order])
    ax.bar([rr.names[i] for i in order], elo - 1500, bottom=1500, color="C0",
           yerr=np.maximum(0.0, [elo - ci[:, 0], ci[:, 1] - elo]), capsize=4, ecolor="C3")
    ax.axhline(1500, color="grey", lw=0.8)
    ax.set_ylabel("Elo (Bradley-Terry, mean 1500)")
    ax.set_title(f"Round robin ratings ({rr.confidence:.0%} bootstrap intervals)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def short_spec(spec: str) -> str:
    """A team spec for a plot label: checkpoint paths by their file stem (``runs/x/agent.pt`` -> ``agent``)."""
    return "+".join(os.path.splitext(os.path.basename(m))[0] if m.endswith(".pt") else m for m in spec.split("+"))


def plot_field(res: FieldResult, path: str) -> None:
    """PNG: per opponent, the candidate's mean points per deal (bars, the worst in red) with their
    bootstrap intervals, and its games-to-target win rates with their Wilson intervals."""
    plt = _pyplot()

    k = len(res.opponents)
    x = np.arange(k)
    mean = res.means
    ci = np.array([m.ci for m in res.matches], dtype=np.float64)
    rate = np.array([m.games["win_rate"] for m in res.matches], dtype=np.float64)
    rci = np.array([m.games["ci"] for m in res.matches], dtype=np.float64)
    colours = ["C3" if i == res.worst else "C0" for i in range(k)]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(max(8, 2.2 * k + 3), 4.5), dpi=100)
    ax.bar(x, mean, color=colours, yerr=np.nan_to_num(np.maximum(0.0, [mean - ci[:, 0], ci[:, 1] - mean])),
           capsize=4, ecolor="black")
    ax.axhline(0.0, color="grey", lw=0.8)
    name, opponents = short_spec(res.candidate), [short_spec(o) for o in res.opponents]
    ax.set_ylabel(f"points per deal, {name} - opponent")
    ax.set_title(f"mean points per deal ({res.confidence:.0%} bootstrap CI)")
    rate_err = 100 * np.maximum(0.0, [rate - rci[:, 0], rci[:, 1] - rate])
    bx.bar(x, 100 * rate, color=colours, yerr=np.nan_to_num(rate_err), capsize=4, ecolor="black")
    bx.axhline(50.0, color="grey", lw=0.8)
    bx.set_ylim(0, 104)
    bx.set_ylabel(f"games to {res.matches[0].games['target_score']} won by {name} (%)")
    bx.set_title(f"games won ({res.confidence:.0%} Wilson CI)")
    for a in (ax, bx):
        a.set_xticks(x, opponents)
        a.grid(axis="y", alpha=0.3)
    lo, hi = res.minimum_ci
    fig.suptitle(f"{name} vs field, {res.deals} deals each (seed {res.seed})\nminimum {res.minimum:+.1f} "
                 f"[{lo:+.1f}, {hi:+.1f}] points/deal, vs {opponents[res.worst]} (red)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
