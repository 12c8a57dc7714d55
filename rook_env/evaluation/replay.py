"""Hand replays: record a hand decision by decision, and write a self-contained HTML viewer.

    from rook_env.evaluation.replay import record_hand, select_hands, write_html

    records = [record_hand(env, agents, seed=s, labels=names) for s in range(20)]
    write_html(select_hands(records, 3, by="swing"), "runs/replays/swings.html")

- :func:`record_hand` plays one hand on a PettingZoo Rook environment (``rook_env.env()`` or
  ``raw_env()``, or a call-your-partner table of 4 to 6 seats, ``rook_env.call_partner.env()``)
  with one agent per seat and returns a :class:`HandRecord`: before every decision
  the whole table (every seat's cards, the nest, the auction, trump, the trick, counters, scores),
  then the seat, the decision, the legal alternatives and, when the agent can explain itself, the
  policy's probabilities over those alternatives and its value estimate.
- An agent explains itself through an optional method ``explain(observation) -> {"probs": ...,
  "value": ...}`` (``probs``: one number per action id, or ``{action: p}``; ``value``: a float, or
  None). Agents with an ``action_probs(observation)`` method (the PPO agent) are explained from it,
  and their critic, when it has one, gives the value: a centralized critic is fed the table's full
  state, which a replay (a spectator's tool) may show; values are in score points when the agent's
  checkpoint states its ``reward_scale``.
- :func:`select_hands` picks the hands worth a look (largest score swing, the sets, ...).
- :func:`write_html` writes one HTML file (inline CSS and JavaScript, the records as embedded
  JSON; no server, no network) showing the hands step by step: prev/next buttons, the arrow keys,
  a slider, and every decision of the hand as a clickable list.

Call-your-partner records hold the called card(s), the Rook's rank and the partners (marked
secret until a called card is played: a replay is a spectator's tool) and show each seat's points,
tricks and score; their swing is the largest hand score minus the smallest.

Command line (:mod:`rook_env.cli.replay`): ``python -m rook_env.cli.replay --agents heuristic random
heuristic random --seed 3 --hands 20 --keep 5 --out runs/replays/hands.html``; ``--game call_partner
--players 5 --agents call_partner_heuristic random random random random`` for a call-your-partner table.
"""

from __future__ import annotations

import html
import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from rook_env.core.optional import require
from rook_env.core.render import game_of, sorted_hand, table_parts
from rook_env.games.partnership.cards import COLOUR_NAMES

SELECT_BY = ("swing", "set", "order")


@dataclass
class HandRecord:
    """One recorded hand: the table before every decision, the decisions, the result."""

    agents: list[str]  # a label per seat
    flags: dict[str, Any]  # the table's rule flags (RookConfig.to_dict() / CallPartnerConfig's fields)
    seed: int | None  # the env's reset seed
    options: dict[str, Any] | None  # the env's reset options (a fixed deal), if any
    steps: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] | None = None  # the table after the last decision
    result: dict[str, Any] | None = None  # RookState.hand_result (None if the episode ended early)
    ended: str = "hand over"  # or why the recording stopped early
    game: str = "partnership"  # the game's name in the registry (rook_env.games)

    @property
    def swing(self) -> int:
        """How far the hand moved the score: the largest hand score minus the smallest (two teams:
        |team 0's - team 1's|; 0 if unfinished)."""
        if self.result is None:
            return 0
        scores = self.result["hand_scores"]
        return max(scores) - min(scores)

    def summary(self) -> str:
        if self.result is None:
            return f"{len(self.steps)} decisions; {self.ended}"
        return table_parts(self.game).hand_summary(self.result)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["swing"] = self.swing
        d["summary"] = self.summary()
        return d


# ---------------------------------------------------------------------------------- recording
def snapshot(state: Any) -> dict[str, Any]:
    """The whole table as plain data with card names (``R14``, ``Rook``): for replays and logs. A
    state of any registered game, with the game's own entries (:meth:`rook_env.core.render.TableParts.snapshot_extra`;
    call-your-partner: the Rook's rank, the called card(s) and the partners as a spectator sees them)."""
    L, n = state.L, len(state.hands)
    parts = table_parts(state)
    phase = parts.phase_names[state.phase]

    def names(mask: int) -> list[str]:
        return [L.card_name(c) for c in sorted_hand(L, mask)]

    last = None
    if state.tricks:
        lead, cards = state.tricks[-1]
        last = {
            "cards": [[(lead + i) % n, L.card_name(c)] for i, c in enumerate(cards)],
            "winner": (lead + state.trick_winner_index(cards)) % n,
        }
    auction = []
    for s, a in state.bid_history:
        kind = L.action_kind(a)
        auction.append([s, str(L.bids[a - L.BID0]) if kind == "bid" else kind])
    out = {
        "phase": phase,
        "current": None if state.is_over else state.current,
        "dealer": state.dealer,
        "hands": [names(h) for h in state.hands],
        "nest": names(state.nest),
        "discards": names(state.discards),
        "auction": auction,
        "bidder": state.bidder if state.bidder >= 0 else None,
        "contract": L.bids[state.high_bid] if state.high_bid >= 0 else None,
        "trump": COLOUR_NAMES[state.trump] if state.trump >= 0 else None,
        "trick": [[(state.leader + i) % n, L.card_name(c)] for i, c in enumerate(state.trick)]
        if phase == "play" else [],
        "last_trick": last,
        "tricks_played": len(state.tricks),
        "nest_has_counters": state.nest_has_counters,
        "counters": list(state.points),
        "tricks_won": list(state.tricks_won),
        "scores": list(state.scores),
    }
    out.update(parts.snapshot_extra(state))
    return out


def explain(agent: Any, observation: Mapping[str, np.ndarray], env: Any = None,
            agent_name: str | None = None) -> dict[str, Any] | None:
    """What ``agent`` thinks of ``observation``: ``{"probs": array over action ids, "value": float | None,
    "value_note": str}``, or None when it cannot say (rule-based and random agents)."""
    fn = getattr(agent, "explain", None)
    if callable(fn):
        out = fn(observation)
        if out is None:
            return None
        probs = out.get("probs")
        if isinstance(probs, Mapping):
            arr = np.zeros(len(observation["action_mask"]))
            for a, p in probs.items():
                arr[int(a)] = float(p)
            probs = arr
        return {"probs": None if probs is None else np.asarray(probs, float),
                "value": None if out.get("value") is None else float(out["value"]),
                "value_note": str(out.get("value_note", ""))}
    fn = getattr(agent, "action_probs", None)
    if not callable(fn):
        return None
    probs = np.asarray(fn(observation), float)
    value, note = _critic_value(agent, observation, env, agent_name)
    return {"probs": probs, "value": value, "value_note": note}


def _critic_value(agent: Any, observation: Mapping[str, np.ndarray], env: Any,
                  agent_name: str | None) -> tuple[float | None, str]:
    """The value of an actor-critic agent's ``model`` (``critic_dim`` None: fed the observation;
    else the full state of ``env.state_for``)."""
    model = getattr(agent, "model", None)
    if model is None or not callable(getattr(model, "value", None)):
        return None, ""
    torch = require("torch", "a network's value")  # loaded already: the agent has a network

    central = getattr(model, "critic_dim", None) is not None
    if central:
        if env is None or agent_name is None:
            return None, ""
        vec = env.unwrapped.state_for(agent_name)
    else:
        vec = observation["observation"]
    device = next(model.parameters()).device
    with torch.no_grad():
        v = float(model.value(torch.as_tensor(np.asarray(vec, np.float32), device=device).unsqueeze(0))[0])
    scale = ((getattr(agent, "checkpoint_info", None) or {}).get("config") or {}).get("reward_scale")
    note = "critic sees every hand" if central else "critic sees this seat's observation"
    if scale:
        v /= float(scale)
        note += "; in score points (own team minus opponents)"
    return v, note


def record_hand(
    env: Any,
    agents: Sequence[Any],
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    labels: Sequence[str] | None = None,
) -> HandRecord:
    """Reset ``env`` (``seed``, ``options`` as in ``env.reset``) and play one hand with ``agents[seat]``,
    recording every decision (see the module docstring). ``env``: a Rook or a call-your-partner
    environment. With ``episode="game"`` the first hand is recorded. An illegal action raises
    ``ValueError`` with ``raw_env``; with ``env()`` the episode ends and the record says so."""
    raw = env.unwrapped
    n = len(raw.possible_agents)
    if len(agents) != n:
        raise ValueError(f"record_hand needs {n} agents (one per seat), got {len(agents)}")
    labels = list(labels) if labels is not None else [type(a).__name__ for a in agents]
    if len(labels) != n:
        raise ValueError(f"record_hand needs {n} labels, got {len(labels)}")
    env.reset(seed=seed, options=dict(options) if options else None)
    for ag in agents:
        if callable(getattr(ag, "reset", None)):
            ag.reset()
    game = raw.game
    L = game.L
    rec = HandRecord(agents=labels, flags=json_ready(raw.config.to_dict()), seed=seed,
                     options=json_ready(dict(options)) if options else None, game=game_of(game).name)
    hands_played = game.hands_played
    while not game.is_over and game.hands_played == hands_played:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            rec.ended = "episode ended early (illegal action or truncation)"
            break
        seat = game.current
        obs = env.observe(name)
        legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
        before = snapshot(game)
        why = explain(agents[seat], obs, env, name)
        action = int(agents[seat].act(obs, env.infos[name]))
        step: dict[str, Any] = {
            "seat": seat,
            "phase": before["phase"],
            "action": action,
            "name": L.action_name(action) if 0 <= action < L.n_actions else f"out of range ({action})",
            "legal": [[a, L.action_name(a)] for a in legal],
            "probs": None,
            "value": None,
            "value_note": "",
            "state": before,
        }
        if why is not None:
            if why["probs"] is not None:
                step["probs"] = [round(float(why["probs"][a]), 4) for a in legal]
            step["value"] = None if why["value"] is None else round(why["value"], 2)
            step["value_note"] = why["value_note"]
        rec.steps.append(step)
        env.step(action)
    rec.final = snapshot(game) if game.hands_played == hands_played else _final_of_hand(rec, game)
    if game.hands_played != hands_played:
        rec.result = json_ready(dict(game.hand_result))
        if "called" in rec.result:  # call-your-partner: the summary names the called cards
            rec.result["called_names"] = [L.card_name(c) for c in game.hand_result["called"]]
    return rec


def _final_of_hand(rec: HandRecord, game: Any) -> dict[str, Any]:
    """The table when the recorded hand ended. In a game the next hand is already dealt, so the last
    trick and totals come from the hand's result, not from the new deal."""
    if game.is_over:
        return snapshot(game)
    last = rec.steps[-1]["state"]
    res = game.hand_result
    fin = dict(last)
    counters = res["counters"] if "counters" in res else res["points"]  # call-your-partner: points per seat
    fin.update(phase="over", current=None, hands=[[] for _ in last["hands"]], trick=[],
               counters=list(counters), tricks_won=list(res["tricks_won"]), scores=list(res["scores"]))
    seat, card = rec.steps[-1]["seat"], rec.steps[-1]["name"]
    fin["last_trick"] = {"cards": last["trick"] + [[seat, card]], "winner": None}
    return fin


def json_ready(x: Any) -> Any:
    """A JSON-ready copy: numpy numbers and arrays to Python, tuples to lists, keys to strings, and
    NaN / infinity to None (JSON has no such numbers)."""
    if isinstance(x, Mapping):
        return {str(k): json_ready(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_ready(v) for v in x]
    if isinstance(x, np.ndarray):
        return json_ready(x.tolist())
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def check_selection(n: Any, by: str) -> None:
    """Raise ValueError naming a bad number of hands ``n`` or way ``by`` of choosing them (:data:`SELECT_BY`)."""
    if by not in SELECT_BY:
        raise ValueError(f"by={by!r} is not allowed; allowed values: {', '.join(SELECT_BY)}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n={n!r} must be a non-negative integer")


def select_hands(records: Sequence[HandRecord], n: int, by: str = "swing") -> list[HandRecord]:
    """``n`` hands to look at: ``by="swing"`` the largest score swings; ``"set"`` the hands where the
    bidders were set (largest swing first); ``"order"`` the first ``n``."""
    check_selection(n, by)
    if by == "order":
        return list(records[:n])
    pool = [r for r in records if by == "swing" or (r.result is not None and not r.result["made"])]
    order = sorted(range(len(pool)), key=lambda i: (-pool[i].swing, i))  # ties: recorded order
    return [pool[i] for i in order[:n]]


# ---------------------------------------------------------------------------------- HTML viewer
def write_html(records: Sequence[HandRecord], path: str, title: str = "Rook hand replays") -> str:
    """Write the hands as one self-contained HTML file (no network) and return its path."""
    if not records:
        raise ValueError("write_html needs at least one recorded hand")
    dicts = [r.to_dict() if isinstance(r, HandRecord) else dict(r) for r in records]
    # a seed as text: JavaScript's numbers hold integers exactly only below 2 ** 53, and seeds reach 2 ** 64
    dicts = [{**d, "seed": None if d.get("seed") is None else str(d["seed"])} for d in dicts]
    data = json.dumps(dicts, separators=(",", ":"))
    data = data.replace("</", "<\\/")  # cannot close the <script> element early
    page = _PAGE.replace("__TITLE__", html.escape(title)).replace("__DATA__", data)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path


_PAGE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body{margin:0;font:14px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f1ea;color:#222}
header{padding:8px 14px;background:#1b4d33;color:#f3f1ea;display:flex;gap:14px;align-items:center;flex-wrap:wrap}
header h1{font-size:17px;margin:0 8px 0 0}
select,button{font:inherit;padding:3px 10px}
#nav{display:flex;gap:8px;align-items:center}
#slider{width:260px}
main{display:flex;gap:12px;padding:10px 14px;align-items:flex-start}
#table{position:relative;width:820px;height:540px;background:#16603a;border-radius:18px;flex:none}
.seat{position:absolute;width:270px;transform:translate(-50%,-50%);background:#0e4426;color:#eee;border-radius:8px;
 padding:5px 8px;border:3px solid #0e4426}
.seat.act{border-color:#ffd740}
.seat .who small.secret{color:#ff8cc8;font-weight:600}
.seat .who{font-weight:600;margin-bottom:4px}.seat .who small{font-weight:400;color:#bcd}
.cards{display:flex;flex-wrap:wrap;gap:3px;min-height:44px}
.card{width:28px;height:40px;border-radius:4px;font-weight:700;font-size:15px;padding:1px 0 0 3px;box-sizing:border-box;
 border:1px solid #ddd;position:relative;flex:none}
.card.R{background:#cd2328;color:#fff}.card.Y{background:#fac81e;color:#141414}.card.G{background:#1e9646;color:#fff}
.card.B{background:#191919;color:#fff}.card.Rook{background:#fafaf5;color:#1e6ec8;border:2px solid #1e6ec8;font-size:8px;padding:3px 0 0;text-align:center;letter-spacing:-.3px}
.card.dim{opacity:.35}.card.legal{outline:2px dashed #9fd0ff;outline-offset:1px}
.card.chosen{outline:3px solid #ffd740;outline-offset:1px;transform:translateY(-4px)}
.card.ctr::after{content:"";position:absolute;right:3px;bottom:3px;width:5px;height:5px;border-radius:50%;background:currentColor}
#mid{position:absolute;left:50%;top:50%;transform:translate(-50%,-50%);width:210px;height:150px;border:2px solid #2a7a4c;
 border-radius:50%;color:#cde}
#mid .tc{position:absolute;transform:translate(-50%,-50%)}
#mid .tc .card{width:36px;height:50px;font-size:18px}
#mid .word{position:absolute;left:50%;top:50%;transform:translate(-50%,-50%);white-space:nowrap}
.corner{position:absolute;color:#eee;font-size:13px}
#side{flex:1;min-width:300px}
.panel{background:#fff;border-radius:8px;padding:8px 12px;margin-bottom:10px;box-shadow:0 1px 2px #0002}
.panel h2{font-size:15px;margin:0 0 6px}
table.alts{border-collapse:collapse;width:100%}
table.alts td{padding:2px 6px;border-bottom:1px solid #eee}
table.alts tr.chosen td{background:#fff4c2;font-weight:600}
.bar{height:10px;background:#3b7dd8;border-radius:2px}
#log{max-height:220px;overflow:auto;font-size:13px}
#log span{display:inline-block;padding:1px 5px;margin:1px;border-radius:4px;cursor:pointer;background:#eee}
#log span.now{background:#ffd740}
.swatch{display:inline-block;padding:0 8px;border-radius:4px;color:#fff}
table.seats{border-collapse:collapse;margin:4px 0}table.seats td{padding:1px 10px 1px 0;text-align:right}
table.seats td:first-child{text-align:left}
.secret{color:#c2187a;font-weight:600}
.muted{color:#777}
</style></head>
<body>
<header><h1>__TITLE__</h1>
<label>hand <select id="hand"></select></label>
<div id="nav"><button id="prev" title="previous decision (left arrow)">&#9664; prev</button>
<input id="slider" type="range" min="0" value="0"><button id="next" title="next decision (right arrow)">next &#9654;</button>
<span id="pos"></span></div></header>
<main><div id="table"></div><div id="side">
<div class="panel" id="decision"></div><div class="panel" id="facts" hidden></div><div class="panel" id="info"></div>
<div class="panel"><h2>Every decision of this hand</h2><div id="log"></div></div></div></main>
<script id="data" type="application/json">__DATA__</script>
<script>
"use strict";
const HANDS = JSON.parse(document.getElementById("data").textContent);
const COUNTERS = new Set(["5","10","14","1"]);
const SW = {red:"#cd2328",yellow:"#d9a800",green:"#1e9646",black:"#191919"};
let h = 0, k = 0;
const $ = id => document.getElementById(id);
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
function card(name, cls) {
  if (name === "Rook") return `<div class="card Rook ${cls||""}" title="Rook Bird">ROOK</div>`;
  const col = name[0], rank = name.slice(1), ctr = COUNTERS.has(rank) ? " ctr" : "";
  return `<div class="card ${col}${ctr} ${cls||""}" title="${name}">${rank}</div>`;
}
function frames(rec) {  // one frame per decision, then the end of the hand
  const f = rec.steps.map(s => ({state: s.state, step: s}));
  f.push({state: rec.final, step: null});
  return f;
}
let TW = 820, TH = 540;  // the table's size: four seats in two teams; call-your-partner tables are larger
function seatPos(s, n) {
  const a = Math.PI / 2 + 2 * Math.PI * s / n;
  return [TW / 2 + (TW / 2 - 145) * Math.cos(a), TH / 2 + (TH / 2 - 65) * Math.sin(a), a];
}
function swatch(trump) { return `<span class="swatch" style="background:${SW[trump.split(" ")[0]] || "#555"}">${esc(trump)}</span>`; }
function draw() {
  const rec = HANDS[h], fr = frames(rec), f = fr[k], st = f.state, step = f.step, n = st.hands.length;
  const cp = rec.game === "call_partner";  // no fixed teams: roles per seat, the figures in a side panel
  [TW, TH] = cp ? [940, 680] : [820, 540];
  $("table").style.width = TW + "px"; $("table").style.height = TH + "px";
  $("slider").max = fr.length - 1; $("slider").value = k;
  $("pos").textContent = `decision ${Math.min(k + 1, fr.length - 1)} of ${fr.length - 1}` + (step ? "" : " (end)");
  const legal = new Set(step ? step.legal.map(x => x[1]) : []);
  let out = "<div id=\"mid\"></div>";  // under the seats
  for (let s = 0; s < n; s++) {
    const [x, y] = seatPos(s, n), acting = step && step.seat === s;
    const tags = cp ? [] : [`team ${s % 2}`];
    if (s === st.dealer) tags.push("dealer");
    if (s === st.bidder) tags.push(`bidder ${st.contract}`);
    if (cp && st.partners.includes(s)) tags.push("partner");
    const secret = cp && st.secret_partners.includes(s) ? ` <small class="secret">secret partner</small>` : "";
    const cards = st.hands[s].map(c => {
      let cls = "";  // card decisions taken from the hand: discard and play (a call names a card not held)
      if (acting && !["bid", "trump", "rook", "call"].includes(step.phase)) cls = c === step.name ? "chosen" : (legal.has(c) ? "legal" : "dim");
      return card(c, cls);
    }).join("");
    out += `<div class="seat${acting ? " act" : ""}" style="left:${x}px;top:${y}px;width:${cp ? 280 : 270}px"><div class="who">P${s} · ${esc(rec.agents[s])}
      <small>${tags.join(", ")}${acting ? " · to act" : ""}</small>${secret}</div><div class="cards">${cards || '<span class="muted">no cards</span>'}</div></div>`;
  }
  let mid = "";
  for (const [s, c] of st.trick) {
    const a = seatPos(s, n)[2];
    mid += `<div class="tc" style="left:${105 + 52 * Math.cos(a)}px;top:${75 + 40 * Math.sin(a)}px">${card(c)}</div>`;
  }
  if (!st.trick.length) mid = `<div class="word">${({bid:"bidding",discard:"discarding",trump:"naming trump",rook:"ranking the Rook",call:"calling a partner",over:"hand over"})[st.phase] || "next trick"}</div>`;
  const auction = {};
  for (const [s, w] of st.auction) (auction[s] = auction[s] || []).push(w);
  let tl = `<b>phase: ${st.phase}</b><br>`;
  for (let s = 0; s < n; s++) tl += `P${s}: ${(auction[s] || ["-"]).join(" ")}<br>`;
  if (st.contract !== null) tl += `${st.phase === "bid" ? "high bid" : "contract"}: ${st.contract} by P${st.bidder}<br>`;
  if (st.trump) tl += `trump: ${swatch(st.trump)}`;
  let bl = `nest (as dealt)<div class="cards">${st.nest.map(c => card(c)).join("")}</div>`;
  if (st.discards.length) bl += `discards<div class="cards">${st.discards.map(c => card(c)).join("")}</div>`;
  let lt = "";
  if (st.last_trick) {
    const w = st.last_trick.winner === null ? "" : `, won by P${st.last_trick.winner}`;
    lt = `last trick${w}<div class="cards">${st.last_trick.cards.map(x => card(x[1])).join("")}</div>`;
  }
  if (cp) {  // the figures beside the table: five or six seats leave no free corners
    if (st.rook) tl += ` Rook ${esc(st.rook)}`;
    if (st.called.length) tl += `<br>called:<div class="cards">${st.called.map(c => card(c)).join("")}</div>`;
    if (st.partners_text) tl += `partners: <span class="${st.secret_partners.length ? "secret" : ""}">${esc(st.partners_text)}</span><br>`;
    if (st.nest_announced) tl += `announced: the nest ${st.nest_has_counters ? "holds" : "holds no"} counters<br>`;
    let rows = `<tr class="muted"><td>seat</td><td>points</td><td>tricks</td><td>score</td></tr>`;
    for (let s = 0; s < n; s++) rows += `<tr><td>P${s}</td><td>${st.counters[s]}</td><td>${st.tricks_won[s]}</td><td>${st.scores[s]}</td></tr>`;
    $("facts").innerHTML = `<h2>The table</h2>${tl}<table class="seats">${rows}</table>${bl}${lt}`;
  } else {
    out += `<div class="corner" style="left:12px;top:10px">${tl}</div>`;
    out += `<div class="corner" style="right:12px;top:10px;text-align:right">counters ${st.counters[0]} : ${st.counters[1]}<br>
      tricks ${st.tricks_won[0]} : ${st.tricks_won[1]}<br>score ${st.scores[0]} : ${st.scores[1]}<br><span style="color:#bcd">(team 0 : team 1)</span></div>`;
    out += `<div class="corner" style="left:12px;bottom:10px">${bl}</div>`;
    if (lt) out += `<div class="corner" style="right:12px;bottom:10px">${lt}</div>`;
  }
  $("facts").hidden = !cp;
  $("table").innerHTML = out;
  $("mid").innerHTML = mid;
  // The decision and its alternatives.
  let d;
  if (step) {
    d = `<h2>P${step.seat} (${esc(rec.agents[step.seat])}) in the ${step.phase} phase: <u>${esc(step.name)}</u></h2>`;
    const rows = step.legal.map((x, i) => ({a: x[1], p: step.probs ? step.probs[i] : null}));
    if (step.probs) rows.sort((u, v) => v.p - u.p);
    d += `<table class="alts"><tr class="muted"><td>legal alternatives (${rows.length})</td><td>${step.probs ? "policy probability" : ""}</td><td></td></tr>`;
    for (const r of rows) {
      const pc = r.p === null ? "" : (100 * r.p).toFixed(1) + "%";
      const bar = r.p === null ? "" : `<div class="bar" style="width:${Math.max(1, 150 * r.p)}px"></div>`;
      d += `<tr class="${r.a === step.name ? "chosen" : ""}"><td>${esc(r.a)}${r.a === step.name ? " &#10004;" : ""}</td><td>${pc}</td><td>${bar}</td></tr>`;
    }
    d += "</table>";
    if (!step.probs) d += `<div class="muted">this agent does not report probabilities</div>`;
    if (step.value !== null) d += `<div>value estimate: <b>${step.value.toFixed(2)}</b> <span class="muted">${esc(step.value_note)}</span></div>`;
  } else {
    d = `<h2>End of the hand</h2><div>${esc(rec.summary)}</div>`;
    const r = rec.result;
    if (r && cp) d += `<div>the bidder's side ${r.side.map(s => "P" + s).join(" + ")} took ${r.side_points} of ${r.bid} bid; points ${r.points.join(" : ")}, hand scores ${r.hand_scores.join(" : ")}, game scores ${r.scores.join(" : ")}</div>`;
    else if (r) d += `<div>counters ${r.counters.join(" : ")}, bonus ${r.bonus.join(" : ")}, game scores ${r.scores.join(" : ")}</div>`;
  }
  $("decision").innerHTML = d;
  $("info").innerHTML = `<b>Hand ${h + 1}</b>: ${esc(rec.summary)}<br><span class="muted">seed ${rec.seed}; seats: ${rec.agents.map((a, s) => `P${s} ${esc(a)}`).join(", ")}</span>`;
  $("log").innerHTML = rec.steps.map((s, i) => `<span class="${i === k ? "now" : ""}" data-k="${i}">P${s.seat} ${esc(s.name)}</span>`).join("");
}
function go(to) { const m = frames(HANDS[h]).length - 1; k = Math.max(0, Math.min(m, to)); draw(); }
HANDS.forEach((r, i) => { const o = document.createElement("option"); o.value = i; o.textContent = `${i + 1}: ${r.summary}`; $("hand").appendChild(o); });
$("hand").onchange = e => { h = +e.target.value; k = 0; draw(); };
$("prev").onclick = () => go(k - 1); $("next").onclick = () => go(k + 1);
$("slider").oninput = e => go(+e.target.value);
$("log").onclick = e => { if (e.target.dataset.k !== undefined) go(+e.target.dataset.k); };
document.addEventListener("keydown", e => { if (e.key === "ArrowLeft") go(k - 1); if (e.key === "ArrowRight") go(k + 1); });
const q = new URLSearchParams(location.hash.slice(1));  // file.html#hand=2&step=10 opens there
if (q.has("hand")) h = Math.max(0, Math.min(HANDS.length - 1, +q.get("hand") - 1));
if (q.has("step")) k = Math.max(0, Math.min(frames(HANDS[h]).length - 1, +q.get("step") - 1));
$("hand").value = h;
draw();
</script></body></html>
"""
