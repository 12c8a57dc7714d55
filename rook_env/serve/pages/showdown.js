// Rook showdown: the pages' script (no build step, no network but this server).
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const kid of kids) e.append(kid);
  return e;
};
const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

async function api(method, url, body) {
  // Every request that takes a body sends JSON ({} when it has nothing to say): the server moves
  // nothing for a body of another type (another site's form could send one).
  const opts = {method, headers: {}};
  if (method !== "GET" && method !== "DELETE") {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body === undefined ? {} : body);
  }
  const r = await fetch(url, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = {error: `${r.status} ${r.statusText}`}; }
  if (!r.ok) { const err = new Error(data.error || r.statusText); err.status = r.status; throw err; }
  return data;
}

// A card as the drawn table shows it: its colour's fill, the rank large; the Rook Bird white.
function cardEl(c, extra = "") {
  const rook = c.colour < 0;
  const text = rook ? "Rook" : c.name.replace(/^[A-Z]/, "");
  return el("span", {class: `card ${rook ? "rook" : "c" + c.colour} ${extra}`.trim(), title: c.name,
                     "data-card": String(c.card)}, text);
}

// ----------------------------------------------------------------------------- index
async function indexPage() {
  const opts = await api("GET", "/api/options");
  $("#expire").textContent = opts.limits.expire_hours;
  const form = $("#new-game");
  const gameSel = $("#f-game");
  gameSel.replaceChildren(...Object.entries(opts.games).map(([name, g]) => el("option", {value: name},
    `${cap(g.title.split(",")[0])} (${g.players.length > 1 ? g.players[0] + " to " + g.players[g.players.length - 1] : g.players[0]} players)`)));
  const game = () => gameSel.value;
  let shownGame = null;
  const refresh = () => {
    const g = opts.games[game()];
    const players = $("#f-players");
    const keep = shownGame === game() ? players.value : null;  // another game: its own default table size
    shownGame = game();
    players.replaceChildren(...g.players.map((n) => el("option", {value: n}, String(n))));
    players.value = g.players.includes(Number(keep)) ? keep : g.default_players;
    $("#l-players").hidden = g.players.length < 2;
    $("#l-preset").hidden = !g.presets.length;
    $("#f-preset").replaceChildren(el("option", {value: ""}, "none"),
      ...g.presets.map((p) => el("option", {value: p}, g.preset_labels[p] || p)));
    $("#f-flags").replaceChildren(...Object.entries(g.choices).map(([name, values]) => {
      const lab = g.labels[name] || {label: name, help: "", values: {}};
      const word = (v) => lab.values[String(v)] || String(v);
      return el("label", {title: `${lab.help ? lab.help + " " : ""}(flag ${name})`}, lab.label,
        el("select", {"data-flag": name}, el("option", {value: ""}, `default: ${word(values[0])}`),
          ...values.map((v) => el("option", {value: v}, word(v)))));
    }));
    seats();
  };
  const seats = () => {
    const g = opts.games[game()];
    const n = Number($("#f-players").value);
    const play = $("#f-mode").value === "play";
    const box = $("#f-seats");
    const old = [...box.querySelectorAll("select.agent")].map((s) => s.value);
    const me = box.querySelector("input[name=seat]:checked");
    const mySeat = me ? Number(me.value) : 0;
    box.replaceChildren();
    for (let s = 0; s < n; s++) {
      const sel = el("select", {class: "agent", "data-seat": String(s)}, ...g.agents.map((a) => el("option", {value: a}, a)));
      sel.value = g.agents.includes(old[s]) ? old[s] : g.default_agent;
      const lab = el("label", {}, `Seat P${s}` + (g.teams ? (s % 2 ? " (team P1+P3)" : " (team P0+P2)") : ""));
      if (play) {
        const radio = el("input", {type: "radio", name: "seat", value: String(s)});
        if (s === Math.min(mySeat, n - 1)) radio.checked = true;
        lab.append(el("span", {}, radio, " I sit here"));
      }
      lab.append(sel);
      box.append(lab);
    }
    const disable = () => box.querySelectorAll("label").forEach((lab) => {
      const r = lab.querySelector("input"); lab.querySelector("select").disabled = !!(r && r.checked); });
    box.querySelectorAll("input[name=seat]").forEach((r) => r.addEventListener("change", disable));
    disable();
  };
  gameSel.addEventListener("change", refresh);
  $("#f-players").addEventListener("change", seats);
  $("#f-mode").addEventListener("change", seats);
  refresh();
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const mode = $("#f-mode").value;
    const g = opts.games[game()];
    const flags = {};
    if (g.players.length > 1) flags.players = Number($("#f-players").value);
    if ($("#f-preset").value) flags.preset = $("#f-preset").value;
    if ($("#f-target").value) flags.target_score = Number($("#f-target").value);
    document.querySelectorAll("#f-flags select").forEach((s) => { if (s.value) flags[s.dataset.flag] = s.value; });
    for (const item of $("#f-more").value.split(",").map((x) => x.trim()).filter(Boolean)) {
      const [name, ...rest] = item.split("=");  // the server checks every flag and says which is wrong
      const value = rest.join("=").trim();
      flags[name.trim()] = value !== "" && !Number.isNaN(Number(value)) ? Number(value) : value;
    }
    const seatInput = document.querySelector("input[name=seat]:checked");
    const seat = mode === "play" ? Number(seatInput ? seatInput.value : 0) : null;
    const agents = [...document.querySelectorAll("#f-seats select.agent")].map((s, i) => i === seat ? null : s.value);
    const body = {mode, game: game(), flags, agents};
    if (mode === "play") body.seat = seat;
    const seed = $("#f-seed").value.trim();
    if (seed !== "") body.seed = seed;  // a string: a 64-bit seed is more than a JavaScript number holds
    $("#form-error").textContent = "";
    try { const r = await api("POST", "/api/games", body); location.href = r.url; }
    catch (e) { $("#form-error").textContent = e.message; }
  });
  const list = await api("GET", "/api/games");
  const tbody = $("#games tbody");
  for (const g of list.games) {
    const s = g.spec;
    const info = opts.games[s.game];
    const title = info ? info.title.split(",")[0] : s.game;
    const what = info && info.players.length > 1 ? `${title}, ${s.flags.players || info.default_players} players` : title;
    const seatsText = s.agents.map((a, i) => i === s.seat ? "you" : a).join(", ");
    const url = `/${s.mode}/${g.id}`;
    const del = el("button", {type: "button", onclick: async () => { await api("DELETE", `/api/games/${g.id}`); location.reload(); }}, "delete");
    tbody.append(el("tr", {}, el("td", {}, el("a", {href: url}, what)), el("td", {}, s.mode + (g.over ? " (over)" : "")),
      el("td", {}, seatsText), el("td", {}, String(g.moves)), el("td", {}, el("a", {href: url}, "open")), el("td", {}, del)));
  }
}

// ----------------------------------------------------------------------------- game
async function gamePage() {
  const id = location.pathname.split("/").pop();
  const params = new URLSearchParams(location.search);
  const agentDelay = params.has("delay") ? Number(params.get("delay")) : 700;
  let view = null, running = false, busy = false, viewer = params.get("view") || "spectator";
  let readResult = -1;  // play mode: the decision count at which you went on from a finished hand
  const watch = location.pathname.startsWith("/watch/");
  const q = () => (watch ? `?view=${viewer}` : "");

  const seatName = (s) => (view.seat === s ? "You" : `P${s} (${view.agents[s]})`);  // "You" in play mode only
  const VERBS = {bid: "bid", discard: "lay a card down into the nest", trump: "name trump", play: "play a card",
                 circus: "pass a card", rook: "choose the Rook's rank", call: "call a partner's card"};
  // Watch mode at any speed holds a finished hand's result on screen this long before the next deal.
  const HAND_END_MS = params.has("hold") ? Number(params.get("hold")) : 4000;
  const lastEvent = (v) => (v.log.length ? v.log[v.log.length - 1] : null);
  // Play mode stops at the end of every hand but the last, until you have read its result.
  const pausedAtHandEnd = (v) => !watch && !v.over && !!(lastEvent(v) && lastEvent(v).result) && readResult !== v.moves;

  function render(v) {
    view = v;
    const body = document.body.dataset;
    const paused = pausedAtHandEnd(v);
    body.moves = v.moves; body.over = v.over; body.yourTurn = v.your_turn; body.hand = v.hand; body.phase = v.phase;
    body.paused = paused; body.players = v.players; body.handOver = !!(lastEvent(v) && lastEvent(v).result);
    document.body.classList.toggle("wide", !v.teams);  // a side panel: the drawn table is wider
    $("#title").textContent = `${cap(v.title)}${v.teams ? "" : ", " + v.players + " players"} · ${v.mode} · hand ${v.hand}` +
      ` · game to ${v.target_score}`;
    drawTable(`/api/games/${id}/table.png${q()}${q() ? "&" : "?"}m=${v.moves}`);
    renderStatus(v, paused);
    // choices: every legal action that is not a card (bids, pass, trump, rook, redeal, circus)
    const ch = $("#choices");
    // a card to call (call-your-partner) is a button in that card's colour: its name, never where it lies
    const tint = (a) => (a.kind !== "call" ? "" : a.name === "Rook" ? " call rook" : ` call c${"RYGB".indexOf(a.name[0])}`);
    ch.replaceChildren(...(paused ? [] : v.legal.filter((a) => a.kind !== "card").map((a) =>
      el("button", {type: "button", class: "legal" + tint(a), "data-action": String(a.action), onclick: () => move(a.action)}, a.name))));
    renderHand(v, paused);
    renderLog(v);
    renderSheet(v);
    renderExplain(v);
  }

  function renderStatus(v, paused) {
    const last = lastEvent(v);
    let status;
    if (v.over) status = el("span", {class: "banner"}, `Game over. ${winnerText(v)}`);
    else if (paused) {
      status = el("span", {class: "banner"}, `Hand ${v.hand - 1} is over: ${resultText(last.result)}. `,
        el("button", {type: "button", id: "continue", onclick: () => { readResult = v.moves; render(view); schedule(); }},
          "Next hand"));
    } else if (watch && last && last.result) {
      status = el("span", {class: "banner"}, `Hand ${v.hand - 1} is over: ${resultText(last.result)}. ` +
        `${seatName(v.to_act)} is to ${VERBS[v.phase] || v.phase} next.`);
    } else if (v.your_turn) status = `Your turn: ${phaseHint(v)}`;
    else status = (v.seat !== null ? "Waiting for " : "") + `${seatName(v.to_act)} ${v.seat !== null ? "to" : "is to"} ` +
      `${VERBS[v.phase] || v.phase}`;
    $("#status").replaceChildren(status);
    // the trick on the table, in words and cards (readable however small the drawn table is)
    const trick = v.scene.trick || [];
    $("#trick").replaceChildren(...(trick.length ? [el("span", {class: "dim"}, "Trick: "),
      ...trick.map(([s, c]) => el("span", {class: "played"}, `${seatName(s)} `, cardEl(c, "mini")))] : []));
  }

  function renderHand(v, paused) {
    // the hand: every card shown; the legal ones raised and clickable (a click on another is refused by the server)
    const hand = $("#hand");
    const mine = v.viewer === null ? null : v.scene.hands[v.viewer];
    const legalCards = new Set(paused ? [] : v.legal.filter((a) => a.kind === "card").map((a) => a.action));
    hand.classList.toggle("waiting", !v.your_turn || paused);
    hand.replaceChildren();
    if (Array.isArray(mine)) {
      for (const c of mine) {
        const e = cardEl(c, legalCards.has(c.card) ? "legal" : "");
        if (v.seat !== null) e.addEventListener("click", () => { if (!pausedAtHandEnd(view)) move(c.card); });
        hand.append(e);
      }
    }
    hand.hidden = !Array.isArray(mine);  // the spectator sees every hand on the drawn table
  }

  function renderLog(v) {
    const log = $("#log");
    log.replaceChildren();
    for (const e of v.log) {
      const li = el("li", {}, e.text);
      if (e.redeal) li.append(" · the same dealer deals again");
      log.append(li);
      if (e.trick) log.append(el("li", {class: "trick"}, `Trick won by ${seatName(e.trick.winner)}: `,
        ...e.trick.cards.map(([s, c]) => cardEl(c, "mini"))));
      if (e.result) log.append(el("li", {class: "result"}, `Hand over: ${resultText(e.result)}`));
    }
    log.scrollTop = log.scrollHeight;
  }

  // The drawn table is swapped in once loaded (no blank flash); a picture older than the one shown is dropped.
  let tableWanted = 0;
  function drawTable(url) {
    const n = ++tableWanted, img = new Image();
    img.onload = () => { if (n === tableWanted) $("#table").src = url; };
    img.src = url;
  }

  function phaseHint(v) {
    const size = Array.isArray(v.scene.nest) ? v.scene.nest.length : 0;  // the bidder sees the nest as dealt
    const done = v.log.filter((e) => e.hand === v.hand && e.phase === "discard" && e.seat === v.viewer).length;
    const redeal = v.legal.some((a) => a.kind === "redeal");
    return {bid: redeal ? "bid, pass or call a redeal" : "bid or pass",
            discard: `lay a card of your hand down into the nest (${done + 1} of ${size})`, trump: "name trump",
            rook: "choose Rook high or low", call: "call a card: its holder becomes your partner",
            play: v.scene.trick.length ? "play a card" : "lead a card", circus: "pass a card to your left"}[v.phase] || v.phase;
  }
  function winnerText(v) {
    if (v.winner === null || v.winner < 0) return "";
    if (!v.teams) return `${seatName(v.winner)} won.`;
    const team = v.winner === 0 ? "P0+P2" : "P1+P3";
    return `Team ${team} won` + (v.seat !== null ? (v.seat % 2 === v.winner ? ": you win!" : ": you lose.") : ".");
  }
  function resultText(r) {
    const scores = r.hand_scores.map((x) => (x >= 0 ? "+" : "") + x).join(" / ");
    return `P${r.bidder} bid ${r.bid} in ${r.trump}, ${r.made ? "made" : "set"}; hand ${scores}; totals ${r.scores.join(" / ")}`;
  }
  function renderSheet(v) {
    const cols = v.teams ? ["P0+P2", "P1+P3"] : [...Array(v.players).keys()].map((s) => `P${s}`);
    const t = el("table", {class: "list"}, el("thead", {}, el("tr", {}, ...["hand", "bid", "trump", ""].concat(cols).map((h) => el("th", {}, h)))));
    const tb = el("tbody");
    for (const r of v.sheet) {
      tb.append(el("tr", {}, el("td", {}, String(r.hand)), el("td", {}, `P${r.bidder} ${r.bid}`), el("td", {}, r.trump),
        el("td", {}, r.made ? "made" : "set"), ...r.scores.map((x, i) => el("td", {}, `${x} (${r.hand_scores[i] >= 0 ? "+" : ""}${r.hand_scores[i]})`))));
    }
    t.append(tb);
    $("#sheet").replaceChildren(t, el("p", {class: "dim"}, `Game to ${v.target_score}.`));
  }
  function renderExplain(v) {
    const box = $("#explain-box");
    const last = [...v.log].reverse().find((e) => e.explain);
    box.hidden = !watch;
    if (!watch) return;
    if (!last) { $("#explain").replaceChildren(el("p", {class: "dim", id: "no-explain"},
      "The last decision visible from this view came without probabilities (rule-based agents, or another seat's decision).")); return; }
    const x = last.explain, kids = [el("p", {}, `${last.text}`)];
    if (x.probs) {
      kids.push(el("h2", {}, "Action probabilities"));
      for (const [a, name, p] of x.probs.slice().sort((u, w) => w[2] - u[2])) {
        kids.push(el("div", {class: "bar prob" + (a === last.action ? " chosen" : "")}, el("span", {}, name),
          el("span", {class: "b", style: `width:${Math.max(1, p * 100)}%`}), el("span", {}, p.toFixed(3))));
      }
    }
    if (x.value !== null && x.value !== undefined) kids.push(el("p", {}, `Value: ${x.value} ${x.value_note ? "(" + x.value_note + ")" : ""}`));
    if (x.search) {
      kids.push(el("h2", {}, "Search: mean hand score difference per card"));
      for (const [a, name, val] of x.search) kids.push(el("div", {class: "bar search" + (a === last.action ? " chosen" : "")},
        el("span", {}, name), el("span", {}), el("span", {}, String(val))));
    }
    $("#explain").replaceChildren(...kids);
  }

  // A request refused because the game moved on (another tab or window): show the game as it is now.
  async function recover(e) {
    $("#message").textContent = e.status === 404 ? "This game no longer exists (deleted or expired)." : e.message;
    if (e.status === 409) {
      try { render(await api("GET", `/api/games/${id}${q()}`)); } catch (e2) { /* the message above stays */ }
    }
  }
  async function move(action) {
    if (busy) return;
    busy = true;
    $("#message").textContent = "";
    try { render(await api("POST", `/api/games/${id}/action`, {action, moves: view.moves})); }
    catch (e) { await recover(e); }
    busy = false;
    schedule();
  }
  async function advance() {
    if (busy || view.over || view.your_turn) return;
    busy = true;
    try { render(await api("POST", `/api/games/${id}/advance${q()}`, {moves: view.moves})); $("#message").textContent = ""; }
    catch (e) { await recover(e); running = false; }
    busy = false;
  }
  // Back to a tab: another tab may have moved the game meanwhile.
  async function refresh() {
    if (busy || !view) return;
    try {
      const v = await api("GET", `/api/games/${id}${q()}`);
      if (v.moves !== view.moves && !busy) { render(v); schedule(); }
    } catch (e) { /* shown on the next move */ }
  }
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  window.addEventListener("focus", refresh);

  let timer = null;
  function schedule() {
    clearTimeout(timer);
    if (!view || view.over) { running = false; $("#run").textContent = "Play"; return; }
    if (pausedAtHandEnd(view)) return;  // until "Next hand"
    // a finished trick stays on screen a little longer before the agents go on
    const last = lastEvent(view);
    const pause = last && last.trick ? agentDelay * 2.5 : agentDelay;
    if (!watch && !view.your_turn) timer = setTimeout(async () => { await advance(); schedule(); }, pause);
    const speed = Number($("#speed").value);
    const hold = last && last.result ? Math.max(HAND_END_MS, speed) : speed;  // a hand's result stays a while
    if (watch && running) timer = setTimeout(async () => { await advance(); schedule(); }, hold);
  }

  if (watch) {
    $("#watch-controls").hidden = false;
    $("#step").addEventListener("click", async () => { running = false; $("#run").textContent = "Play"; await advance(); });
    $("#run").addEventListener("click", () => { running = !running; $("#run").textContent = running ? "Pause" : "Play"; schedule(); });
    $("#view").addEventListener("change", async () => {
      viewer = $("#view").value;
      history.replaceState(null, "", `?view=${viewer}`);
      render(await api("GET", `/api/games/${id}${q()}`));
    });
  }
  try { render(await api("GET", `/api/games/${id}${q()}`)); }
  catch (e) { $("#message").textContent = e.message; return; }
  if (watch) {
    $("#view").replaceChildren(el("option", {value: "spectator"}, "spectator (all hands)"),
      ...[...Array(view.players).keys()].map((s) => el("option", {value: String(s)}, `P${s}'s seat (${view.agents[s]})`)));
    $("#view").value = viewer;
  }
  schedule();
}

// ----------------------------------------------------------------------------- compare
async function comparePage() {
  const board = await api("GET", "/api/leaderboard");
  $("#folder").textContent = board.folder || "(none)";
  const tb = $("#matches tbody");
  const fmt = (x) => (typeof x === "number" ? (x >= 0 ? "+" : "") + x.toFixed(2) : "");
  board.matches.forEach((m, i) => {
    tb.append(el("tr", {}, el("td", {}, String(i + 1)), el("td", {}, m.team_a), el("td", {}, m.team_b), el("td", {}, fmt(m.mean)),
      el("td", {}, m.ci ? `[${fmt(m.ci[0])}, ${fmt(m.ci[1])}]` : ""), el("td", {}, String(m.deals)),
      el("td", {}, m.win_rate === null || m.win_rate === undefined ? "" : `${(100 * m.win_rate).toFixed(0)}%`),
      el("td", {}, m.file), el("td", {}, el("a", {href: m.replays, class: "replays"}, "replays"))));
  });
  if (!board.matches.length) tb.append(el("tr", {}, el("td", {colspan: "9", class: "dim"}, "No results yet: run rook-eval with --json into this folder.")));
  const files = $("#files");
  for (const f of board.files) {
    if (f.kind === "round_robin") {
      const t = el("table", {class: "list ratings"}, el("thead", {}, el("tr", {}, ...["rank", "agent", "Elo", "interval", "points/deal"].map((h) => el("th", {}, h)))));
      const body = el("tbody");
      for (const r of f.ratings) body.append(el("tr", {}, el("td", {}, String(r.rank)), el("td", {}, r.name), el("td", {}, r.elo.toFixed(0)),
        el("td", {}, r.elo_ci ? `[${r.elo_ci[0].toFixed(0)}, ${r.elo_ci[1].toFixed(0)}]` : ""), el("td", {}, fmt(r.mean_points))));
      t.append(body);
      files.append(el("section", {class: "panel"}, el("h1", {}, `Ratings: ${f.name}`), t, el("p", {class: "dim"}, f.rating_model || "")));
    } else if (f.kind === "field") {
      files.append(el("section", {class: "panel"}, el("h1", {}, `Field: ${f.name}`),
        el("p", {}, `${f.candidate}: minimum ${fmt(f.minimum && f.minimum.mean_points_per_deal)} against ${f.minimum && f.minimum.opponent}`)));
    } else if (f.kind === "rotation") {
      files.append(el("section", {class: "panel"}, el("h1", {}, `Call your partner (${f.players} players): ${f.name}`),
        el("p", {}, `candidate minus field: ${fmt(f.mean)}`)));
    } else if (f.kind === "unreadable" || f.kind === "unknown") {
      files.append(el("p", {class: "dim"}, `${f.name}: not rook-eval results${f.error ? " (" + f.error + ")" : ""}`));
    }
  }
  const reps = await api("GET", "/api/replays");
  const ul = $("#replay-files");
  for (const name of reps.files.concat(reps.written)) ul.append(el("li", {}, el("a", {href: `/replays/${name}`}, name)));
  if (!ul.children.length) ul.append(el("li", {class: "dim"}, "none yet"));
}

const page = document.body.dataset.page;
const pages = {index: indexPage, game: gamePage, compare: comparePage};
if (pages[page]) pages[page]().catch((e) => {
  const m = document.querySelector("#message") || document.querySelector("#form-error");
  if (m) m.textContent = e.message;
});
