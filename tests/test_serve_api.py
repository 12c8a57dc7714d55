"""The showdown server's HTTP API (rook_env.serve), through Starlette's test client: whole games in play
mode never show the person's seat a card it may not know; every bad request is a 4xx with a clear
message and changes nothing; games survive a server restart; expiry, limits and Compare's replays."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
import warnings
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette >= 1.0 asks for httpx2 and warns while importing its test client
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

import rook_env
from rook_env.serve import Settings, create_app
from rook_env.serve.store import GameStore, StoreFullError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

HEUR4 = [None, "heuristic", "heuristic", "heuristic"]
CHECKPOINTS = os.path.join(os.path.dirname(rook_env.__file__), "agents", "checkpoints")


def have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


BASE = "http://127.0.0.1"  # a loopback name the server answers (the test client's own "testserver" is refused)


def client(tmp_path: Any, **kw: Any) -> TestClient:
    settings = Settings(data=str(tmp_path / "data"), results=str(tmp_path / "results"), **kw)
    return TestClient(create_app(settings), base_url=BASE)


def new_game(c: TestClient, **body: Any) -> str:
    r = c.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


# ------------------------------------------------------------------------------ hidden information
def card_ids(x: Any, names: dict[str, int], found: set[int]) -> None:
    """Every card a response names: card objects' ids, log actions that are cards, card names in text."""
    if isinstance(x, dict):
        for k, v in x.items():
            if k == "card" and isinstance(v, int):
                found.add(v)
            if k not in ("id", "title"):  # the random id may read like a card ("..._G9..."), the title names Rook
                card_ids(v, names, found)
    elif isinstance(x, list):
        for v in x:
            card_ids(v, names, found)
    elif isinstance(x, str):
        for tok in re.findall(r"[A-Za-z]+\d*", x):
            if tok in names:
                found.add(names[tok])


def knowable(game: str, flags: dict[str, Any], seed: int, actions: list[int], seat: int) -> set[int]:
    """What ``seat`` may know after ``actions``, from the rules state of a separate environment: the
    cards it held (dealt, the nest it picked up, a card received), the cards played, the called
    cards, in this hand and the last one (a response shows the end of the last hand)."""
    env = rook_env.env(game=game, episode="game", **flags)
    env.reset(seed=seed)
    st = env.unwrapped.game
    L = env.unwrapped.layout
    per_hand: dict[int, set[int]] = {}

    def note() -> None:
        k = per_hand.setdefault(st.hands_played, set())
        k.update(c for c in range(L.n_cards) if st.hands[seat] >> c & 1)
        for _, cards in st.tricks:
            k.update(cards)
        k.update(st.trick)
        k.update(getattr(st, "called", []))

    note()
    for a in actions:
        before = st.hands_played
        trick = list(st.trick)
        env.step(a)
        if st.hands_played != before:  # the hand's last trick is public; the new deal starts a new hand
            per_hand.setdefault(before, set()).update(trick + [a])
        note()
    h = st.hands_played - (1 if st.is_over else 0)  # the hand on show (the last one once the game is over)
    return per_hand.get(h, set()) | per_hand.get(h - 1, set())


def play_whole_game(c: TestClient, game: str, flags: dict[str, Any], agents: list[Any], seat: int, seed: int,
                    max_requests: int = 4000) -> tuple[int, set[str]]:
    """Play a game to its end through the API with random legal moves for the person; check every
    response against what the seat may know; return the number of hands and the phases seen."""
    gid = new_game(c, mode="play", game=game, flags=flags, agents=agents, seat=seat, seed=seed)
    store = c.app.state.store
    rng = random.Random(seed)
    env = rook_env.env(game=game, **flags)
    L = env.unwrapped.layout
    names = {L.card_name(i): i for i in range(L.n_cards)}
    v = c.get(f"/api/games/{gid}").json()
    phases: set[str] = set()
    for _ in range(max_requests):
        phases.add(v["phase"])
        found: set[int] = set()
        if v["phase"] == "call" and v["your_turn"]:
            # calling a partner: the choices are every card not in the hand, by name (no card's place)
            hand = {c["card"] for c in v["scene"]["hands"][seat]}
            assert {a["action"] for a in v["legal"]} == set(range(L.n_cards)) - hand
            assert all(a["kind"] == "call" and "card" not in a for a in v["legal"])
            card_ids({k: x for k, x in v.items() if k != "legal"}, names, found)
        else:
            card_ids(v, names, found)
        actions = store.load(gid, touch=False).actions
        allowed = knowable(game, flags, seed, actions, seat) if found else set()
        leaked = found - allowed
        assert not leaked, (f"response after {len(actions)} moves names cards seat {seat} may not know: "
                            f"{[L.card_name(x) for x in sorted(leaked)]}")
        assert "explain" not in json.dumps(v["log"]), "play mode must never show an agent's probabilities"
        assert v["seed"] is None, "the seed decides every hand: play mode never sends it"
        if v["over"]:
            assert [g["spec"]["seed"] for g in c.get("/api/games").json()["games"]] == [None]
            return len(v["sheet"]), phases
        if v["your_turn"]:
            action = rng.choice(v["legal"])["action"]
            r = c.post(f"/api/games/{gid}/action", json={"action": action, "moves": v["moves"]})
        else:
            r = c.post(f"/api/games/{gid}/advance", json={"moves": v["moves"]})
        assert r.status_code == 200, r.text
        v = r.json()
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("flags, agents, seat, seed, phase", [
    ({"target_score": 200}, [None, "heuristic", "random", "heuristic"], 0, 5, "discard"),
    # circus: each seat passes a card to its left, seen only by giver and receiver
    ({"circus_rook": "on", "target_score": 150}, [None, "random", "heuristic", "random"], 0, 5, "circus"),
])
def test_play_partnership_whole_game_shows_only_what_the_seat_may_know(tmp_path, flags, agents, seat, seed, phase):
    c = client(tmp_path, db=":memory:")
    hands, phases = play_whole_game(c, "partnership", flags, agents, seat=seat, seed=seed)
    assert hands >= 1 and phase in phases


def test_play_call_partner_whole_game_shows_only_what_the_seat_may_know(tmp_path):
    c = client(tmp_path, db=":memory:")
    agents = ["call_partner_heuristic"] * 5
    agents[2] = None
    hands, phases = play_whole_game(c, "call_partner", {"players": 5, "target_score": 150}, agents, seat=2, seed=11)
    assert hands >= 1 and {"discard", "call", "play"} <= phases


def test_the_leak_check_catches_a_leak(tmp_path):
    """The check itself: another seat's hand in a response is caught."""
    c = client(tmp_path, db=":memory:")
    gid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=1)
    env = rook_env.env()
    env.reset(seed=1)  # the same deal as the server's: the seed decides it
    L = env.unwrapped.layout
    names = {L.card_name(i): i for i in range(L.n_cards)}
    other = [i for i in range(L.n_cards) if env.unwrapped.game.hands[1] >> i & 1]
    v = c.get(f"/api/games/{gid}").json()
    found: set[int] = set()
    card_ids(v, names, found)
    assert found == knowable("partnership", {}, 1, [], 0)  # the seat's own nine cards, nothing else
    card_ids({"log": [{"text": f"P1 holds {L.card_name(other[0])}"}]}, names, found)
    assert other[0] in found - knowable("partnership", {}, 1, [], 0)


# ------------------------------------------------------------------------------ validation
def test_bad_requests_get_4xx_and_change_nothing(tmp_path):
    c = client(tmp_path, db=":memory:", max_body=2048)
    gid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=3)
    v = c.get(f"/api/games/{gid}").json()
    while not v["your_turn"]:
        v = c.post(f"/api/games/{gid}/advance", json={"moves": v["moves"]}).json()
    legal = {a["action"] for a in v["legal"]}
    illegal = next(a for a in range(58) if a not in legal)
    act = f"/api/games/{gid}/action"
    as_json = {"Content-Type": "application/json"}
    cases = [
        ("post", f"/api/games/{gid}/action", {"json": {"action": illegal}}, 400, "not a legal move now"),
        ("post", f"/api/games/{gid}/action", {"json": {"action": 999}}, 400, "not a legal move now"),
        ("post", f"/api/games/{gid}/action", {"json": {"action": "R14"}}, 400, "must be an integer"),
        ("post", f"/api/games/{gid}/action", {"json": {"action": True}}, 400, "must be an integer"),
        ("post", f"/api/games/{gid}/action", {"json": {}}, 400, "missing field 'action'"),
        ("post", f"/api/games/{gid}/action", {"json": {"action": min(legal), "cheat": 1}}, 400, "unknown field"),
        ("post", act, {"content": b"{not json", "headers": as_json}, 400, "not valid JSON"),
        ("post", act, {"content": b'{"action": NaN}', "headers": as_json}, 400, "NaN is not a JSON value"),
        ("post", act, {"content": b"[1, 2]", "headers": as_json}, 400, "must be a JSON object"),
        ("post", f"/api/games/{gid}/action", {"json": {"action": min(legal), "moves": v["moves"] - 1}}, 409,
         "moved on"),
        ("post", act, {"content": b"{" + b" " * 4096 + b"}", "headers": as_json}, 413, "over the limit"),
        ("post", f"/api/games/{gid}/advance", {"json": {}}, 409, "your turn"),
        ("post", f"/api/games/{gid}/action", {"content": json.dumps({"action": min(legal)}),
                                              "headers": {"Content-Type": "text/plain"}}, 415, "as JSON"),
        ("get", f"/api/games/{gid}?view=spectator", {}, 403, "only that seat"),
        ("get", f"/api/games/{gid}?view=1", {}, 403, "only that seat"),
        ("get", f"/api/games/{gid}/table.png?view=spectator", {}, 403, "only that seat"),
        ("get", "/api/games/NoSuchGame123", {}, 404, "no game"),
        ("get", "/api/games/..%2F..%2Fetc", {}, 404, ""),
        ("post", "/api/games/NoSuchGame123/action", {"json": {"action": 1}}, 404, "no game"),
        ("delete", "/api/games/NoSuchGame123", {}, 404, "no game"),
    ]
    store = c.app.state.store
    before = store.load(gid, touch=False).actions
    for method, url, kw, status, words in cases:
        r = getattr(c, method)(url, **kw)
        assert r.status_code == status, (url, kw, r.status_code, r.text)
        assert words in r.json()["error"], (url, r.json())
        assert store.load(gid, touch=False).actions == before
    r = c.get(f"/api/games/{gid}", headers={"Host": "evil.example"})  # DNS rebinding
    assert r.status_code == 400
    assert c.get(f"/api/games/{gid}").json() == v  # the game unchanged


@pytest.mark.parametrize("body, words", [
    ({"mode": "play", "agents": HEUR4, "seat": 0, "flags": {"rook_rank": "sideways"}}, "rook_rank"),
    ({"mode": "play", "agents": HEUR4, "seat": 0, "flags": {"episode": "hand"}}, "episode"),
    ({"mode": "play", "agents": HEUR4, "seat": 4}, "seat must be"),
    ({"mode": "play", "agents": HEUR4[1:], "seat": 0}, "list of 4"),
    ({"mode": "play", "agents": ["heuristic"] * 4, "seat": 0}, "must be null"),
    ({"mode": "play", "agents": [None, "genius", "heuristic", "heuristic"], "seat": 0}, "unknown agent"),
    ({"mode": "play", "agents": [None, "/etc/passwd.pt", "heuristic", "heuristic"], "seat": 0}, "unknown agent"),
    ({"mode": "play", "agents": [None, "ppo:/tmp/x.pt", "heuristic", "heuristic"], "seat": 0}, "unknown agent"),
    ({"mode": "play", "agents": [None, "search:../x.pt", "heuristic", "heuristic"], "seat": 0}, "unknown agent"),
    ({"mode": "play", "agents": [None, "checkpoint:../../x.pt", "heuristic", "heuristic"], "seat": 0},
     "unknown checkpoint"),
    ({"mode": "play", "agents": [None, "rllib:/tmp", "heuristic", "heuristic"], "seat": 0}, "unknown agent"),
    ({"mode": "play", "game": "call_partner", "flags": {"players": 5}, "agents": HEUR4, "seat": 0}, "list of 5"),
    ({"mode": "play", "game": "call_partner", "flags": {"players": 4}, "agents": HEUR4, "seat": 0},
     "unknown agent 'heuristic' for game 'call_partner'"),
    ({"mode": "play", "game": "call_partner", "flags": {"players": 7}, "agents": HEUR4, "seat": 0}, "players"),
    ({"mode": "fight", "agents": HEUR4}, "mode must be"),
    ({"mode": "watch", "agents": ["heuristic"] * 4, "seat": 1}, "seat is for play mode"),
    ({"mode": "watch", "agents": ["heuristic"] * 4, "seed": -1}, "seed must be"),
    ({"mode": "watch", "agents": ["heuristic"] * 4, "seed": 2**64}, "seed must be"),
    ({"mode": "watch", "agents": ["heuristic"] * 4, "seed": "12a"}, "seed must be"),
    ({"mode": "watch", "agents": ["heuristic"] * 4, "seed": "\u00b2"}, "seed must be"),
    ({"mode": "watch", "game": {"name": "partnership"}, "agents": ["heuristic"] * 4}, "game must be"),
    ({"mode": ["watch"], "agents": ["heuristic"] * 4}, "mode must be"),
    ({"mode": "watch", "agents": [["heuristic"]] * 4}, "agent spec must be"),
    ({"mode": "watch", "agents": ["heuristic"] * 4, "flags": {"target_score": [300]}}, "target_score"),
    ({"mode": "watch", "agents": ["heuristic"] * 4, "flags": ["deck"]}, "flags must be"),
    ({"mode": "watch", "agents": ["heuristic"] * 4, "colour": "red"}, "unknown field"),
])
def test_a_bad_new_game_is_refused_with_a_clear_message(tmp_path, body, words):
    c = client(tmp_path, db=":memory:")
    r = c.post("/api/games", json=body)
    assert r.status_code == 400, r.text
    assert words in r.json()["error"]
    assert c.get("/api/games").json()["games"] == []


def test_limits_on_open_games(tmp_path):
    c = client(tmp_path, db=":memory:", max_games=2)
    ids = [new_game(c, mode="watch", agents=["random"] * 4, seed=s) for s in range(2)]
    r = c.post("/api/games", json={"mode": "watch", "agents": ["random"] * 4})
    assert r.status_code == 429 and "too many open games" in r.json()["error"]
    assert c.delete(f"/api/games/{ids[0]}").status_code == 200
    assert c.get(f"/api/games/{ids[0]}").status_code == 404
    new_game(c, mode="watch", agents=["random"] * 4, seed=9)


def test_store_expiry_rule(tmp_path):
    store = GameStore(str(tmp_path / "s.sqlite"), expire_hours=1, max_open=1)
    store.create("old-game-1", {"mode": "watch"}, now=time.time() - 7200)
    assert store.load("old-game-1", touch=False) is not None
    with pytest.raises(StoreFullError):  # not yet expired an hour ago... but now it is: create expires first
        store.create("second-game", {"mode": "watch"}, now=time.time() - 7100)
    store.create("new-game-1", {"mode": "watch"})  # expiry ran: the old game is gone, room for a new one
    assert store.load("old-game-1") is None
    assert [g["id"] for g in store.list()] == ["new-game-1"]


# ------------------------------------------------------------------------------ persistence
def test_a_game_survives_a_server_restart(tmp_path):
    c = client(tmp_path)
    gid = new_game(c, mode="play", game="call_partner", flags={"players": 4},
                   agents=[None, "call_partner_heuristic", "random", "call_partner_heuristic"], seat=0, seed=8)
    v = c.get(f"/api/games/{gid}").json()
    for _ in range(25):
        if v["your_turn"]:
            v = c.post(f"/api/games/{gid}/action", json={"action": v["legal"][-1]["action"]}).json()
        else:
            v = c.post(f"/api/games/{gid}/advance", json={}).json()
    c.app.state.store.close()
    c2 = client(tmp_path)  # a new server on the same data folder
    assert c2.get(f"/api/games/{gid}").json() == v
    assert c2.get(f"/play/{gid}").status_code == 200
    r = c2.post(f"/api/games/{gid}/advance" if not v["your_turn"] else f"/api/games/{gid}/action",
                json={} if not v["your_turn"] else {"action": v["legal"][0]["action"]})
    assert r.status_code == 200 and r.json()["moves"] == v["moves"] + 1


def test_several_games_at_once(tmp_path):
    c = client(tmp_path, db=":memory:")
    a = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=1)
    b = new_game(c, mode="watch", game="call_partner", flags={"players": 6}, agents=["random"] * 6, seed=2)
    for _ in range(5):
        for gid in (a, b):
            assert c.post(f"/api/games/{gid}/advance", json={}).status_code == 200
    assert c.get(f"/api/games/{a}").json()["moves"] == 5
    assert c.get(f"/api/games/{b}").json()["players"] == 6


# ------------------------------------------------------------------------------ watch mode
def test_watch_shows_search_values_to_the_spectator_only(tmp_path):
    c = client(tmp_path, db=":memory:")
    gid = new_game(c, mode="watch", agents=["search", "heuristic", "heuristic", "heuristic"], seed=4)
    v = c.get(f"/api/games/{gid}").json()
    for _ in range(200):
        v = c.post(f"/api/games/{gid}/advance?view=spectator", json={"moves": v["moves"]}).json()
        if any(e.get("explain") for e in v["log"]):
            break
    searched = [e for e in v["log"] if e.get("explain")]
    assert searched and searched[0]["seat"] == 0 and searched[0]["phase"] == "play"
    x = searched[0]["explain"]["search"]
    assert {a for a, _, _ in x} >= {searched[0]["action"]} and len(x) >= 2
    seen_by_1 = c.get(f"/api/games/{gid}?view=1").json()
    assert not any("explain" in e for e in seen_by_1["log"] if e["seat"] == 0)
    seen_by_0 = c.get(f"/api/games/{gid}?view=0").json()
    assert any("explain" in e for e in seen_by_0["log"])
    assert c.get(f"/api/games/{gid}/table.png?view=2").headers["content-type"] == "image/png"


@pytest.mark.skipif(not have_torch(), reason="the ppo agent needs torch")
def test_watch_shows_ppo_probabilities_and_a_checkpoint_from_the_folder(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    shutil.copy(os.path.join(CHECKPOINTS, "ppo_default.pt"), folder / "mine.pt")
    shutil.copy(os.path.join(CHECKPOINTS, "ppo_default.json"), folder / "mine.json")
    c = client(tmp_path, db=":memory:", checkpoints=str(folder))
    assert "checkpoint:mine.pt" in c.get("/api/options").json()["games"]["partnership"]["agents"]
    gid = new_game(c, mode="watch", agents=["ppo", "heuristic", "checkpoint:mine.pt", "heuristic"], seed=6)
    v = c.post(f"/api/games/{gid}/advance", json={}).json()
    while v["log"][-1]["seat"] not in (0, 2):
        v = c.post(f"/api/games/{gid}/advance", json={}).json()
    x = v["log"][-1]["explain"]
    assert x["probs"] and abs(sum(p for _, _, p in x["probs"]) - 1) < 1e-3
    assert x["value"] is not None


def test_options_list_the_registry_agents(tmp_path):
    from rook_env.agents.registry import GAME_SPECS

    opts = client(tmp_path, db=":memory:").get("/api/options").json()
    for game, specs in GAME_SPECS.items():
        assert set(specs) <= set(opts["games"][game]["agents"])
    assert opts["games"]["call_partner"]["players"] == [4, 5, 6]
    assert "one_high_partnership" in opts["games"]["partnership"]["presets"]


def test_a_preset_and_call_partner_six_players_play(tmp_path):
    c = client(tmp_path, db=":memory:")
    gid = new_game(c, mode="play", flags={"preset": "regular_partnership"}, agents=HEUR4, seat=0, seed=2)
    v = c.get(f"/api/games/{gid}").json()
    assert len(v["scene"]["hands"][0]) == 14  # full deck without a nest: 14 cards each
    gid = new_game(c, mode="play", game="call_partner", flags={"players": 6},
                   agents=[None] + ["call_partner_heuristic"] * 5, seat=0, seed=2)
    assert c.get(f"/api/games/{gid}").json()["players"] == 6


# ------------------------------------------------------------------------------ compare
def test_leaderboard_and_replays_of_the_biggest_swings(tmp_path):
    from rook_env.evaluation import play_match

    results = tmp_path / "results"
    results.mkdir()
    res = play_match("heuristic", "random", deals=6, seed=2, block_size=3)
    (results / "hr.json").write_text(json.dumps(res.to_dict()))
    (results / "junk.json").write_text("{")
    from rook_env.evaluation import play_rotation_match

    rot = play_rotation_match(["call_partner_heuristic", "random"], players=4, deals=2, seed=1)
    (results / "rot.json").write_text(json.dumps(rot.to_dict()))
    c = client(tmp_path, db=":memory:")
    board = c.get("/api/leaderboard").json()
    assert [m["team_a"] for m in board["matches"]] == ["heuristic"]
    assert any(f["kind"] == "unreadable" for f in board["files"])
    (entry,) = [f for f in board["files"] if f["name"] == "rot.json"]
    assert entry["kind"] == "rotation" and entry["players"] == 4 and entry["agents"] == rot.to_dict()["agents"]
    link = board["matches"][0]["replays"]
    for _ in range(100):
        r = c.get(link, follow_redirects=False)
        if r.status_code == 303:
            break
        assert r.status_code == 200 and "reloads" in r.text
        time.sleep(0.1)
    assert r.status_code == 303
    page = c.get(r.headers["location"])
    assert page.status_code == 200 and "Rook replays" in page.text
    hands = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page.text, re.DOTALL).group(1))
    assert hands and all(isinstance(h["seed"], str) and h["seed"].isdigit() for h in hands)  # exact in JavaScript
    assert c.get("/compare/replays/nothere.json/0").status_code == 404
    assert c.get("/replays/..%2Fhr.json").status_code == 404
    assert c.get("/compare").status_code == 200


def test_rook_serve_command_line(capsys):
    from rook_env.serve.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0 and "127.0.0.1" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["--port", "0"])
    assert e.value.code == 2 and "--port must be" in capsys.readouterr().err


def test_a_seat_view_shows_the_last_trick_of_the_hand(tmp_path):
    c = client(tmp_path, db=":memory:")
    gid = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=2)
    v = c.get(f"/api/games/{gid}?view=1").json()
    assert v["scene"]["last_trick"] is None
    while not any("trick" in e for e in v["log"]):
        v = c.post(f"/api/games/{gid}/advance?view=1", json={}).json()
    trick = next(e["trick"] for e in v["log"] if "trick" in e)
    assert v["scene"]["last_trick"] == trick["cards"] and v["scene"]["last_winner"] == trick["winner"]


def test_the_drawn_table_is_the_rgb_array_picture(tmp_path):
    """The spectator's PNG is, pixel for pixel, what render_mode="rgb_array" draws for the same table."""
    import io

    import numpy as np

    Image = pytest.importorskip("PIL.Image")
    from rook_env.core.render import draw_table

    c = client(tmp_path, db=":memory:")
    gid = new_game(c, mode="watch", agents=["heuristic", "random", "heuristic", "random"], seed=5)
    for _ in range(20):
        c.post(f"/api/games/{gid}/advance", json={})
    png = c.get(f"/api/games/{gid}/table.png?view=spectator").content
    env = rook_env.env(episode="game")
    env.reset(seed=5)
    for a in c.app.state.store.load(gid).actions:
        env.step(a)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("RGB")), draw_table(env.unwrapped.game))


def test_simultaneous_requests_on_one_view_move_once(tmp_path):
    """Requests made on the same view (a double click, two tabs) play one decision; the rest get 409."""
    from concurrent.futures import ThreadPoolExecutor

    c = client(tmp_path, db=":memory:")
    gid = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=1)
    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(lambda _: c.post(f"/api/games/{gid}/advance", json={"moves": 0}).status_code, range(4)))
    assert sorted(codes) == [200, 409, 409, 409]
    assert len(c.app.state.store.load(gid).actions) == 1
