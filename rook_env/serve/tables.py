"""A live game of the showdown server: the environment, the agents, the history, and what a viewer may see.

A :class:`Table` is rebuilt from a stored game (:class:`~rook_env.serve.store.GameRecord`): the
environment (``rook_env.env(game=..., episode="game", **flags)``) is reset with the game's seed and
its actions are replayed; the agents are built afresh from their specs with
:func:`rook_env.agents.make_agent` (an agent's memory of the current hand starts afresh after a
server restart; its moves so far are in the history, so the table is exactly as it was).

Hidden information is decided in one place, :meth:`Table.view`: a seat's view is built from that
seat's observation alone (the game's ``seat_view`` of :mod:`rook_env.core.render`, the same data the
``rgb_array`` seat view draws), and the log of
the hand shows a discard into the nest or a circus pass only to the seat that made it; action
probabilities and search values of a decision are shown only to the spectator or to the seat that
decided (they would reveal a hand). Play mode's viewer is always the person's seat.
"""

from __future__ import annotations

import hashlib
import io
import reprlib
import secrets
import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import rook_env
from rook_env.agents import make_agent
from rook_env.agents.registry import GAME_SPECS, game_config
from rook_env.core.deck import COLOUR_NAMES
from rook_env.core.drawing import draw_scene, require_pillow
from rook_env.core.render import table_parts
from rook_env.evaluation.replay import explain
from rook_env.games import get_game

__all__ = ["AgentError", "MoveError", "Table", "agent_choices", "check_spec", "new_seed", "resolve_agent", "shown"]

MODES = ("play", "watch")
HIDDEN_PHASES = ("discard", "circus")  # a card laid into the nest / passed in circus: seen by its owner only
CHECKPOINT = "checkpoint:"  # agent spec prefix naming a file of the configured checkpoint folder
SEARCH = "search:"  # search plays the cards on top of the agent named after it (games that have "search")
FLAG_NUMBER = 10_000  # the largest number a rule flag may be (a bid, a score to play to, a bonus)
SEED_BITS = 64  # a deal's seed: drawn from the OS (secrets), too many to try every one against a hand
_shown = reprlib.Repr()
_shown.maxlevel, _shown.maxstring, _shown.maxother, _shown.maxlist, _shown.maxdict = 3, 40, 40, 6, 6


def shown(value: Any) -> str:
    """A client's value as an error message quotes it: short, however long or deeply nested it is."""
    return _shown.repr(value)


def new_seed() -> int:
    """A fresh deal seed of :data:`SEED_BITS` bits from the operating system's random source."""
    return secrets.randbits(SEED_BITS)


def agent_seed(seed: int, seat: int) -> int:
    """The seed of the agent at ``seat`` (32 bits, what every agent takes), a hash of the game's seed:
    an agent's choices tell nothing of the deal's seed."""
    return int.from_bytes(hashlib.sha256(f"{seed}/{seat}".encode()).digest()[:4], "big")


class MoveError(ValueError):
    """A move the table refuses (an illegal action, not this seat's turn, the game over); ``status``
    is the HTTP status the server answers with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class AgentError(RuntimeError):
    """An agent failed or broke the rules: a bug in that agent, reported, never papered over."""


# ------------------------------------------------------------------------------------ agents
def agent_choices(game: str, checkpoints: list[str]) -> list[str]:
    """The agent specs a client may pick for ``game``: the registry's, search on top of them
    (partnership), and ``checkpoint:<file>`` for each file of the configured folder."""
    base = list(GAME_SPECS[game])
    out = list(base)
    if "search" in base:
        out += [SEARCH + s for s in base if s not in ("search", "random")]
    out += [CHECKPOINT + name for name in checkpoints]
    return out


def resolve_agent(spec: Any, game: str, checkpoints: Mapping[str, str]) -> str:
    """The :func:`make_agent` spec of a client's agent spec; raises ValueError saying what is wrong.

    Accepted: a spec of the agents' registry for ``game``, ``search:<one of them>`` (where the game has
    a search agent) and ``checkpoint:<name>`` with ``name`` a file of the configured folder
    (``checkpoints``: name -> path). Never a path: a checkpoint outside the configured folder cannot
    be named."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"an agent spec must be a non-empty string, got {shown(spec)}")
    rest, prefix = spec, ""
    if "search" in GAME_SPECS[game] and rest.startswith(SEARCH):
        rest, prefix = rest[len(SEARCH):], SEARCH
    if rest.startswith(CHECKPOINT):
        name = rest[len(CHECKPOINT):]
        if name not in checkpoints:
            known = ", ".join(sorted(checkpoints)) or "none: start the server with --checkpoints FOLDER"
            raise ValueError(f"unknown checkpoint {shown(name)}; the configured folder holds: {known}")
        return prefix + f"ppo:{checkpoints[name]}"
    if rest not in GAME_SPECS[game] or (prefix and rest == "search"):
        allowed = ", ".join(agent_choices(game, sorted(checkpoints)))
        raise ValueError(f"unknown agent {shown(spec)} for game {game!r}; allowed: {allowed}")
    return prefix + rest


def check_spec(spec: Mapping[str, Any], checkpoints: Mapping[str, str]) -> dict[str, Any]:
    """A new game's start, validated and completed: ``mode`` (play / watch), ``game``, ``flags`` (rule
    flags, ``players`` and ``preset`` included), ``seed`` (an integer or a string of digits below
    2**64; none: a fresh one, :func:`new_seed`), ``agents`` (one spec per seat; the person's seat
    ``None`` in play mode), ``seat`` (play: the person's). Raises ValueError saying what is wrong."""
    known = {"mode", "game", "flags", "seed", "agents", "seat"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise ValueError(f"unknown field(s) {shown(', '.join(unknown))}; allowed: {', '.join(sorted(known))}")
    mode = spec.get("mode", "play")
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {shown(mode)}")
    game = spec.get("game", "partnership")
    if not isinstance(game, str) or game not in GAME_SPECS:
        raise ValueError(f"game must be one of {', '.join(GAME_SPECS)}, got {shown(game)}")
    flags = spec.get("flags", {})
    if not isinstance(flags, dict):
        raise ValueError(f"flags must be an object of rule flags, got {shown(flags)}")
    if "episode" in flags or "game" in flags:
        raise ValueError("flags may not set 'episode' or 'game': the server plays whole games; give 'game' on its own")
    for name, value in flags.items():  # max_bid=10**12 would make a table of 10**12 bids: refused before it is built
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not -FLAG_NUMBER <= value <= FLAG_NUMBER:
            raise ValueError(f"rule flag {shown(name)}={shown(value)} is out of range: a number of the rules is "
                             f"-{FLAG_NUMBER}..{FLAG_NUMBER} here")
    game_config({"game": game, **flags})  # ValueError naming a bad flag
    n = len(rook_env.env(game=game, **flags).possible_agents)  # the table's seats
    seed = check_seed(spec.get("seed"))
    agents = spec.get("agents")
    if not isinstance(agents, list) or len(agents) != n:
        raise ValueError(f"agents must be a list of {n} agent specs, one per seat (null for your seat in play mode), "
                         f"got {shown(agents)}")
    seat = spec.get("seat")
    if mode == "play":
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            raise ValueError(f"seat must be your seat, an integer 0..{n - 1}, got {shown(seat)}")
        if agents[seat] is not None:
            raise ValueError(f"agents[{seat}] must be null: seat {seat} is yours")
    elif seat is not None:
        raise ValueError("seat is for play mode; watch mode picks the view per request (?view=)")
    for s, a in enumerate(agents):
        if s != seat:
            resolve_agent(a, game, checkpoints)
    return {"mode": mode, "game": game, "flags": dict(flags), "seed": seed, "agents": list(agents), "seat": seat}


def check_seed(seed: Any) -> int:
    """A client's seed: None (a fresh one), an integer or a string of ASCII digits, below 2**64."""
    if seed is None:
        return new_seed()
    if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 20:
        seed = int(seed)  # a seed as a string: JavaScript numbers cannot hold 64 bits
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**SEED_BITS:
        raise ValueError(f"seed must be an integer 0..{2**SEED_BITS - 1} (or a string of its digits) or null, "
                         f"got {shown(seed)}")
    return seed


# ------------------------------------------------------------------------------------- cards
def card_json(L: Any, card: int) -> dict[str, Any]:
    """A card as every response holds one: ``{"card": id, "name": "R14", "colour": 0..3 or -1}``."""
    return {"card": int(card), "name": L.card_name(int(card)), "colour": int(L.card_colour[int(card)])}


def _cards(L: Any, cards: Any) -> Any:
    """Card ids as card objects; an int (a count of backs) or None stays as it is."""
    if cards is None or isinstance(cards, (int, np.integer)):
        return None if cards is None else int(cards)
    return [card_json(L, c) for c in cards]


def scene_json(scene: Any) -> dict[str, Any]:
    """A :class:`rook_env.core.drawing.Scene` as JSON (cards as card objects, per absolute seat)."""
    L = scene.layout
    d = {f: getattr(scene, f) for f in scene.__dataclass_fields__ if f != "layout"}
    d["hands"] = [_cards(L, h) for h in scene.hands]
    d["trick"] = [[s, card_json(L, c)] for s, c in scene.trick]
    d["last_trick"] = None if scene.last_trick is None else [[s, card_json(L, c)] for s, c in scene.last_trick]
    d["nest"] = _cards(L, scene.nest)
    d["discards"] = _cards(L, scene.discards)
    d["called"] = _cards(L, scene.called)
    d["auction"] = [list(x) for x in scene.auction]
    return d


def scene_builders(state: Any) -> tuple[Callable[[Any], Any], Callable[[Any, int, Any, int | None], Any]]:
    """The game's public scene builders (the ``rgb_array`` look): ``(spectator(state),
    seat(observation, seat, config, to_act))``: the game's table views in the registry."""
    parts = table_parts(state)
    return parts.spectator, parts.seat_view


# ------------------------------------------------------------------------------------- table
class Table:
    """One game being played: rebuilt from ``spec`` and its history (see the module docstring)."""

    def __init__(self, game_id: str, spec: Mapping[str, Any], actions: list[int],
                 explains: list[dict[str, Any] | None], checkpoints: Mapping[str, str]) -> None:
        self.id = game_id
        self.spec = dict(spec)
        self.lock = threading.Lock()  # one request at a time moves this table
        self.game_name = spec["game"]
        game = get_game(self.game_name)
        self.title = game.title.split(",")[0]  # "call-your-partner Rook"
        self.teams = game.groups == 2  # two fixed teams (seats 0+2 and 1+3)
        self.flags = {**spec["flags"], "episode": "game"}
        self.env = rook_env.env(game=self.game_name, **self.flags)
        self.env.reset(seed=spec["seed"])
        raw = self.env.unwrapped
        self.config = raw.config
        self.L = raw.layout
        self.n = len(raw.possible_agents)
        self.agent_names = list(raw.possible_agents)
        self.seat = spec["seat"]  # the person's seat (play mode) or None
        self.labels = [("you" if s == self.seat else str(a)) for s, a in enumerate(spec["agents"])]
        self.agents: dict[int, Any] = {}
        for s, a in enumerate(spec["agents"]):
            if s == self.seat:
                continue
            real = resolve_agent(a, self.game_name, checkpoints)
            try:
                self.agents[s] = make_agent(real, seed=agent_seed(spec["seed"], s), game=self.game_name, **self.flags)
            except ImportError as exc:
                raise ValueError(f"agent {a!r} cannot be built here: {exc}") from exc
        self.events: list[dict[str, Any]] = []
        for action, why in zip(actions, explains):
            self.apply(int(action), why)

    # ---------------------------------------------------------------- state
    @property
    def state(self) -> Any:
        return self.env.unwrapped.game

    @property
    def over(self) -> bool:
        return bool(self.state.is_over)

    @property
    def moves(self) -> int:
        return len(self.events)

    def phase_name(self) -> str:
        return self.state.PHASE_NAMES[self.state.phase]

    def to_act(self) -> int | None:
        return None if self.over else int(self.state.current)

    def legal(self) -> list[int]:
        if self.over:
            return []
        mask = self.env.observe(self.agent_names[self.state.current])["action_mask"]
        return [int(a) for a in np.flatnonzero(mask)]

    # ---------------------------------------------------------------- moves
    def check_person_move(self, action: Any) -> int:
        """The person's ``action`` checked (play mode); raises :class:`MoveError` saying why not, in the
        words of the table ("you must follow suit: play a green card")."""
        if self.seat is None:
            raise MoveError("this is a watched game: the agents play every seat", 409)
        if self.over:
            raise MoveError("the game is over", 409)
        if self.state.current != self.seat:
            s = self.state.current
            raise MoveError(f"it is not your turn: wait for P{s} ({self.labels[s]}) to {self.phase_verb()}", 409)
        if isinstance(action, bool) or not isinstance(action, int):
            raise MoveError(f"action must be an integer action id, got {shown(action)}")
        legal = self.legal()
        if action not in legal:
            raise MoveError(self.refusal(action, legal))
        return action

    def phase_verb(self) -> str:
        """What the seat to act does now, as a verb: "bid", "lay a card down", "play a card", ..."""
        return {"bid": "bid", "discard": "lay a card down into the nest", "trump": "name trump",
                "play": "play a card", "circus": "pass a card", "rook": "choose the Rook's rank",
                "call": "call a partner's card"}.get(self.phase_name(), "move")

    def choices_text(self, legal: list[int]) -> str:
        """The legal moves in words, the bids as one range: "pass, bid 75 to 120 or redeal"."""
        L = self.L
        bids = [a for a in legal if L.action_kind(a) == "bid"]
        words = [L.action_name(a) for a in legal if L.action_kind(a) != "bid"]
        if bids:
            first, last = L.action_name(min(bids)), L.action_name(max(bids)).split()[-1]
            words.insert(min(1, len(words)), first if len(bids) == 1 else f"{first} to {last}")
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]

    def refusal(self, action: int, legal: list[int]) -> str:
        """Why the person may not make ``action`` now, in player words."""
        L, st = self.L, self.state
        phase = self.phase_name()
        if not 0 <= action < L.n_actions:
            return f"action {action} is not a legal move now: you may {self.choices_text(legal)}"
        name = L.action_name(action)
        kind = L.action_kind(action)
        held = kind == "card" and bool(int(st.hands[self.seat]) >> action & 1)
        cards = [a for a in legal if L.action_kind(a) == "card"]
        if phase in ("play", "discard", "circus") and kind == "card" and not held:
            return f"you do not hold {name}: {self.phase_verb()} from your hand"
        if phase == "play" and held and cards:
            colours = {int(L.card_colour[c]) for c in cards if c != L.rook}
            if len(colours) == 1:
                (c,) = colours
                names = getattr(L, "colour_names", COLOUR_NAMES)
                trump = " (trump)" if c == getattr(st, "trump", -2) else ""
                rook = " or the Rook" if L.rook in cards else ""
                return f"you must follow suit: play a {names[c]} card{trump}{rook}"
            return f"you must follow suit: play {', '.join(L.card_name(c) for c in cards)}"
        if phase == "call" and held:
            return f"you hold {name}: call a card you do not hold"
        if phase == "discard" and held:
            return f"you may not lay {name} down now: lay down {', '.join(L.card_name(c) for c in cards)}"
        return f"{name} is not a legal move now ({phase}): you may {self.choices_text(legal)}"

    def agent_move(self, explained: bool) -> tuple[int, dict[str, Any] | None]:
        """The acting agent's decision (not applied): (action, its explanation when ``explained``)."""
        if self.over:
            raise MoveError("the game is over", 409)
        seat = self.state.current
        if seat == self.seat:
            raise MoveError("it is your turn: the agents wait for your move", 409)
        name = self.agent_names[seat]
        agent = self.agents[seat]
        obs = self.env.observe(name)
        why = explain(agent, obs, self.env, name) if explained else None
        try:
            action = int(agent.act(obs, self.env.infos[name]))
        except Exception as exc:  # the agent's own failure: say which agent, do not move
            raise AgentError(f"agent {self.labels[seat]!r} at P{seat} failed: {exc}") from exc
        if not (0 <= action < len(obs["action_mask"]) and obs["action_mask"][action]):
            raise AgentError(f"agent {self.labels[seat]!r} at P{seat} chose an illegal action {action}")
        out = None
        if explained:
            L = self.L
            legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
            out = {"probs": None, "value": None, "value_note": "", "search": None}
            if why is not None:
                if why["probs"] is not None:
                    out["probs"] = [[a, L.action_name(a), round(float(why["probs"][a]), 4)] for a in legal]
                out["value"] = None if why["value"] is None else round(float(why["value"]), 2)
                out["value_note"] = why["value_note"]
            values = getattr(agent, "last_values", None)  # a searching agent's mean outcome per card it tried
            if values:
                out["search"] = [[int(a), L.action_name(int(a)), round(float(v), 2)] for a, v in sorted(values.items())]
            if out["probs"] is None and out["search"] is None and out["value"] is None:
                out = None
        return action, out

    def apply(self, action: int, why: dict[str, Any] | None = None) -> dict[str, Any]:
        """Step the environment with a checked ``action`` and log the decision (its public parts and who
        may see the rest)."""
        st = self.state
        seat, phase = int(st.current), self.phase_name()
        hands, deals = st.hands_played, st.deals
        trick_done = None
        if phase == "play" and len(st.trick) == self.n - 1:  # this card ends the trick
            cards = [*st.trick, action]
            trick_done = {"leader": int(st.leader), "cards": [int(c) for c in cards],
                          "winner": int((st.leader + st.trick_winner_index(cards)) % self.n)}
        self.env.step(action)
        st = self.state
        ev: dict[str, Any] = {"n": len(self.events), "hand": hands + 1, "seat": seat, "phase": phase,
                              "action": action, "explain": why, "trick": trick_done, "result": None,
                              "redeal": st.deals != deals and st.hands_played == hands}
        if st.hands_played != hands:
            ev["result"] = dict(st.hand_result)
        self.events.append(ev)
        return ev

    # ---------------------------------------------------------------- views
    def may_see(self, viewer: int | None, seat: int) -> bool:
        return viewer is None or viewer == seat

    def event_json(self, ev: Mapping[str, Any], viewer: int | None) -> dict[str, Any]:
        """One decision as ``viewer`` may see it (None: the spectator)."""
        L = self.L
        seat, a = ev["seat"], ev["action"]
        who = "You" if self.seat is not None and seat == self.seat else f"P{seat}"  # play mode's person only
        out: dict[str, Any] = {"n": ev["n"], "hand": ev["hand"], "seat": seat, "phase": ev["phase"]}
        kind = L.action_kind(a)
        if ev["phase"] in HIDDEN_PHASES and not self.may_see(viewer, seat):
            out["text"] = f"{who}: " + ("lays a card down into the nest" if ev["phase"] == "discard"
                                        else "passes a card to the left (circus)")
        else:
            out["action"] = a
            out["name"] = L.action_name(a)
            if kind == "card":
                out["card"] = card_json(L, a)
            verb = {"discard": "lays down", "circus": "passes", "call": "calls", "play": "plays"}.get(ev["phase"], "")
            out["text"] = f"{who}: {verb + ' ' if kind == 'card' and verb else ''}{L.action_name(a)}"
        if ev["explain"] is not None and self.may_see(viewer, seat):
            out["explain"] = ev["explain"]
        if ev["trick"] is not None:
            t = ev["trick"]
            out["trick"] = {"leader": t["leader"], "winner": t["winner"],
                            "cards": [[(t["leader"] + i) % self.n, card_json(L, c)] for i, c in enumerate(t["cards"])]}
        if ev["redeal"]:
            out["redeal"] = True
        if ev["result"] is not None:
            out["result"] = self.result_json(ev["result"])
        return out

    def result_json(self, res: Mapping[str, Any]) -> dict[str, Any]:
        """A finished hand's public result (scores, contract; no card but the called ones)."""
        out = {k: res[k] for k in ("bidder", "bid", "made", "hand_scores", "scores", "tricks_won", "game_winner")}
        out["trump"] = res.get("call") or (COLOUR_NAMES[res["trump"]] if res["trump"] >= 0 else "no trump")
        if "counters" in res:
            out["counters"] = res["counters"]
        if "points" in res:  # call-your-partner
            out.update(points=res["points"], partners=res["partners"], rook=res["rook"],
                       called=[card_json(self.L, c) for c in res["called"]], side_points=res["side_points"])
        return out

    def scene(self, viewer: int | None) -> Any:
        """The drawn scene: the spectator's, or ``viewer``'s from its observation alone."""
        st = self.state
        spectator_scene, seat_scene = scene_builders(st)
        if viewer is None:
            return spectator_scene(st)
        vec = self.env.observe(self.agent_names[viewer])["observation"]
        scene = seat_scene(vec, viewer, self.config, self.to_act())
        # the last trick of this hand, face up as every seat saw it (the observation keeps only who played what)
        hand = st.hands_played + 1
        last = next((e for e in reversed(self.events) if e["hand"] == hand and e["trick"]), None)
        if last is not None and scene.last_trick is None:
            t = last["trick"]
            scene.last_trick = [((t["leader"] + i) % self.n, c) for i, c in enumerate(t["cards"])]
            scene.last_winner = t["winner"]
        return scene

    def png(self, viewer: int | None) -> bytes:
        """The table as drawn by ``render_mode="rgb_array"`` (PNG), for ``viewer`` (None: spectator)."""
        Image, _, _ = require_pillow()
        buf = io.BytesIO()
        Image.fromarray(draw_scene(self.scene(viewer))).save(buf, format="PNG", optimize=False, compress_level=1)
        return buf.getvalue()

    def view(self, viewer: int | None) -> dict[str, Any]:
        """Everything ``viewer`` (a seat, or None: the spectator) may see, as JSON."""
        L = self.L
        hand_no = self.state.hands_played + (0 if self.over else 1)
        last_hand = [e for e in self.events if e["hand"] >= hand_no - 1]  # this hand and the last one
        sheet = [self.result_json(e["result"]) | {"hand": e["hand"]} for e in self.events if e["result"] is not None]
        to_act = self.to_act()
        mine = viewer is not None and to_act == viewer and self.seat == viewer
        legal = []
        if mine:
            calling = self.phase_name() == "call"  # call-your-partner: name any card not in hand
            for a in self.legal():
                item = {"action": a, "name": L.action_name(a), "kind": L.action_kind(a)}
                if item["kind"] == "card" and calling:
                    item["kind"] = "call"  # a card's name, not a card seen: shown as a button
                elif item["kind"] == "card":
                    item["card"] = card_json(L, a)
                legal.append(item)
        return {
            "id": self.id,
            "mode": self.spec["mode"],
            "game": self.game_name,
            "title": self.title,
            "teams": self.teams,
            "players": self.n,
            "flags": self.spec["flags"],
            # play: the seed would tell every hand; a string, as JavaScript numbers cannot hold 64 bits
            "seed": str(self.spec["seed"]) if self.seat is None else None,
            "agents": self.labels,
            "seat": self.seat,
            "viewer": viewer,
            "moves": self.moves,
            "hand": hand_no,
            "phase": self.phase_name(),
            "to_act": to_act,
            "your_turn": mine,
            "over": self.over,
            "target_score": self.config.target_score,
            "winner": None if not self.over else self.state.winner,
            "legal": legal,
            "scene": scene_json(self.scene(viewer)),
            "log": [self.event_json(e, viewer) for e in last_hand],
            "sheet": sheet,
        }
