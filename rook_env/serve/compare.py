"""Compare: a leaderboard from ``rook-eval`` results (JSON) and the replays of each match's biggest swings.

The server reads every ``*.json`` of its results folder (``--results``, default ``runs/eval``), as
``rook-eval --json`` writes them: a match (``team_a``, ``team_b``, ``mean_points_per_deal``), a round
robin (``ratings`` and ``matches``), a field (``candidate``, ``field`` and ``matches``) or a
call-your-partner rotation match (``game: call_partner``). Each two-team match gets a replay link:
the server plays the match again from its own record (deals, seed, flags, block size: the hands are
those the statistics counted, :func:`rook_env.evaluation.play_match`), picks its largest score swings
with :func:`rook_env.evaluation.replays.match_replays` and writes them with the existing replay viewer
(:func:`rook_env.evaluation.replay.write_html`) into the server's data folder, once; later visits open the file.
Playing a match again takes a while for slow agents: it runs in a background thread and the page
says so until the file is there.

Agents named in a results file are rebuilt only from the agents' registry or from the configured
checkpoint folder (a checkpoint path is matched by its file name there): a results file cannot make
the server load a file from elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from rook_env.agents.registry import GAME_SPECS
from rook_env.agents.search.spec import parse_search
from rook_env.evaluation import play_match
from rook_env.evaluation.replay import write_html
from rook_env.evaluation.replays import match_replays

__all__ = ["ReplayJobs", "leaderboard", "list_results", "match_of", "replay_agent"]

REPLAY_HANDS = 3  # hands per match replay: its largest swings


def list_results(folder: str | None) -> list[str]:
    """The ``*.json`` file names of ``folder`` (sorted; none when it is absent)."""
    if not folder or not os.path.isdir(folder):
        return []
    return sorted(f for f in os.listdir(folder) if f.endswith(".json") and os.path.isfile(os.path.join(folder, f)))


def _load(folder: str, name: str) -> Any:
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return json.load(f)


def _matches(doc: Any) -> list[dict[str, Any]]:
    """The two-team matches of a results document, in file order."""
    if not isinstance(doc, dict):
        return []
    if "team_a" in doc and "mean_points_per_deal" in doc:
        return [doc]
    return [m for m in doc.get("matches", []) if isinstance(m, dict) and "team_a" in m and "mean_points_per_deal" in m]


def leaderboard(folder: str | None) -> dict[str, Any]:
    """Every results file of ``folder`` summarised for the Compare page: ``files`` (name, kind,
    ratings / field rows / rotation agents, matches with their index for replay links) and
    ``matches`` (all two-team matches, best mean first). A file that is not results JSON is listed
    with the reason."""
    files, all_matches = [], []
    for name in list_results(folder):
        try:
            doc = _load(folder, name)  # type: ignore[arg-type]
        except (OSError, ValueError) as exc:
            files.append({"name": name, "kind": "unreadable", "error": str(exc)})
            continue
        entry: dict[str, Any] = {"name": name, "kind": "unknown", "matches": []}
        if isinstance(doc, dict) and "ratings" in doc:
            entry.update(kind="round_robin", ratings=doc["ratings"], rating_model=doc.get("rating_model"))
        elif isinstance(doc, dict) and "candidate" in doc and "field" in doc:
            entry.update(kind="field", candidate=doc["candidate"], field=doc["field"], minimum=doc.get("minimum"))
        elif isinstance(doc, dict) and doc.get("scheme") == "rotation":  # a rotation match (call-your-partner)
            entry.update(kind="rotation", agents=doc.get("agents", []), mean=doc.get("mean"), ci=doc.get("ci"),
                         players=doc.get("players"))
        elif isinstance(doc, dict) and "team_a" in doc:
            entry["kind"] = "match"
        for i, m in enumerate(_matches(doc)):
            row = {"file": name, "index": i, "team_a": m["team_a"], "team_b": m["team_b"],
                   "mean": m["mean_points_per_deal"], "ci": m.get("ci"), "deals": m.get("deals"),
                   "win_rate": (m.get("games") or {}).get("win_rate"), "flags": m.get("flags", {})}
            entry["matches"].append(row)
            all_matches.append(row)
        files.append(entry)
    all_matches.sort(key=lambda r: -(r["mean"] if isinstance(r["mean"], (int, float)) else float("-inf")))
    return {"folder": folder, "files": files, "matches": all_matches}


def match_of(folder: str | None, name: str, index: int) -> dict[str, Any]:
    """Match ``index`` of results file ``name`` (a file listed by :func:`list_results`); KeyError when absent."""
    if name not in list_results(folder):
        raise KeyError(f"no results file {name!r} in the results folder")
    matches = _matches(_load(folder, name))  # type: ignore[arg-type]
    if not 0 <= index < len(matches):
        raise KeyError(f"{name} has {len(matches)} match(es); there is no match {index}")
    return matches[index]


def replay_agent(spec: str, checkpoints: Mapping[str, str]) -> str:
    """A results file's agent spec as one the server may build: a registry spec, a search spec on one,
    or a checkpoint of the configured folder (matched by file name). ValueError otherwise."""
    members = spec.split("+")
    out = []
    for m in members:
        search = parse_search(m)  # "search:", "search-auction:", "search-bids:", with or without [options]
        if search and not search[2]:  # "search-bids", "search[samples=8]": search alone
            out.append(m)
            continue
        prefix, rest = (m[:len(m) - len(search[2])], search[2]) if search else ("", m)
        if rest in GAME_SPECS["partnership"]:
            out.append(prefix + rest)
            continue
        base = os.path.basename(rest)
        if rest.endswith(".pt") and base in checkpoints:
            out.append(prefix + checkpoints[base])
            continue
        raise ValueError(f"agent {m!r} of this match is neither a registry agent nor a checkpoint of the configured "
                         f"folder: its replays cannot be played here")
    return "+".join(out)


class ReplayJobs:
    """Replays of matches, written once into ``folder`` by background threads."""

    def __init__(self, folder: str, checkpoints: Callable[[], Mapping[str, str]]) -> None:
        self.folder = folder
        self.checkpoints = checkpoints  # the configured folder's checkpoints, listed when a job starts
        self._lock = threading.Lock()
        self._running: dict[str, threading.Thread] = {}
        self.errors: dict[str, str] = {}

    def file_name(self, match: Mapping[str, Any]) -> str:
        """The replay file of ``match``: named by a hash of what defines its hands."""
        key = json.dumps({k: match.get(k) for k in ("team_a", "team_b", "deals", "seed", "duplicate", "flags",
                                                      "block_size", "common_seeds")}, sort_keys=True)
        return "match-" + hashlib.sha256(key.encode()).hexdigest()[:16] + ".html"

    def status(self, match: Mapping[str, Any]) -> tuple[str, str]:
        """("ready" | "running" | "failed" | "absent", file name or the error)."""
        name = self.file_name(match)
        with self._lock:
            if name in self.errors:
                return "failed", self.errors[name]
            if name in self._running and self._running[name].is_alive():
                return "running", name
        return ("ready" if os.path.isfile(os.path.join(self.folder, name)) else "absent"), name

    def start(self, match: Mapping[str, Any]) -> None:
        """Start writing ``match``'s replays unless they exist or are being written; ValueError when its
        agents cannot be built here."""
        known = self.checkpoints()
        a = replay_agent(match["team_a"], known)
        b = replay_agent(match["team_b"], known)
        name = self.file_name(match)
        with self._lock:
            if name in self._running and self._running[name].is_alive():
                return
            self.errors.pop(name, None)
            t = threading.Thread(target=self._run, args=(dict(match), a, b, name), daemon=True)
            self._running[name] = t
            t.start()

    def _run(self, match: dict[str, Any], a: str, b: str, name: str) -> None:
        try:
            res = play_match(a, b, deals=int(match["deals"]), seed=int(match["seed"]), flags=match.get("flags") or {},
                             duplicate=bool(match.get("duplicate", True)), names=(match["team_a"], match["team_b"]),
                             block_size=int(match.get("block_size", 50)),
                             common_seeds=bool(match.get("common_seeds", True)), n_boot=10)
            records, _notes = match_replays(res, a, b, REPLAY_HANDS, by="swing")
            os.makedirs(self.folder, exist_ok=True)
            tmp = os.path.join(self.folder, name + ".tmp")
            title = (f"Rook replays: A = {match['team_a']} vs B = {match['team_b']}, the {len(records)} largest "
                     f"swings of {match['deals']} deals, seed {match['seed']}")
            # seeds as strings: the viewer's JavaScript numbers would round a 64-bit seed
            pages = [{**r.to_dict(), "seed": None if r.seed is None else str(r.seed)} for r in records]
            write_html(pages, tmp, title=title)
            os.replace(tmp, os.path.join(self.folder, name))
        except Exception as exc:  # shown on the page; the server goes on
            with self._lock:
                self.errors[name] = f"{type(exc).__name__}: {exc}"
