"""The showdown server against requests a new user or an attacker sends (rook_env.serve): each gets a 4xx
JSON error (or a page at a page's address) and moves nothing; hosts, seeds and the player's words.

Every request here is one that once answered 500, moved a game without JSON, or read as the API
rather than the table; the property test at the end sends anything at all and never gets a 5xx."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
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
from rook_env.serve.routes import MAX_DEPTH

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

BASE = "http://127.0.0.1"
HEUR4 = [None, "heuristic", "heuristic", "heuristic"]


def client(tmp_path: Any, **kw: Any) -> TestClient:
    settings = Settings(data=str(tmp_path / "data"), results=str(tmp_path / "results"), db=":memory:", **kw)
    return TestClient(create_app(settings), base_url=BASE)


def new_game(c: TestClient, **body: Any) -> str:
    r = c.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def moves_of(c: TestClient, gid: str) -> list[int]:
    return c.app.state.store.load(gid, touch=False).actions


def nested(depth: int) -> bytes:
    """``{"action": [[[...]]], "moves": 3}`` with the list nested ``depth`` deep."""
    return b'{"action": ' + b"[" * depth + b"]" * depth + b', "moves": 3}'


def to_your_turn(c: TestClient, gid: str, phase: str | None = None, seed: int = 0) -> dict[str, Any]:
    """Advance the agents (the person playing random legal moves) until it is the person's turn in ``phase``."""
    import random

    rng = random.Random(seed)
    v = c.get(f"/api/games/{gid}").json()
    for _ in range(2000):
        if v["your_turn"] and (phase is None or v["phase"] == phase):
            return v
        if v["your_turn"]:
            r = c.post(f"/api/games/{gid}/action", json={"action": rng.choice(v["legal"])["action"], "moves": v["moves"]})
        else:
            r = c.post(f"/api/games/{gid}/advance", json={"moves": v["moves"]})
        assert r.status_code == 200, r.text
        v = r.json()
    raise AssertionError(f"never the person's turn in phase {phase}")


# ------------------------------------------------------------------------------ 1. no 500s
@pytest.mark.parametrize("depth", [2000, MAX_DEPTH + 1])
def test_deeply_nested_json_is_a_400(tmp_path, depth):
    c = client(tmp_path)
    gid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=3)
    as_json = {"Content-Type": "application/json"}
    body = nested(depth)
    assert len(body) < 16 * 1024  # under the size limit: the depth is what is refused
    for url in (f"/api/games/{gid}/action", f"/api/games/{gid}/advance", "/api/games"):
        r = c.post(url, content=body, headers=as_json)
        assert r.status_code == 400, (url, r.status_code, r.text)
        assert f"more than {MAX_DEPTH} deep" in r.json()["error"]
    game = b'{"mode": "watch", "agents": ["random", "random", "random", "random"], "flags": {"x": ' + b"[" * depth \
        + b"]" * depth + b"}}"
    r = c.post("/api/games", content=game, headers=as_json)
    assert r.status_code == 400 and "deep" in r.json()["error"]
    assert moves_of(c, gid) == [] and len(c.get("/api/games").json()["games"]) == 1


def test_brackets_inside_strings_are_not_nesting(tmp_path):
    c = client(tmp_path)
    gid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=3)
    r = c.post(f"/api/games/{gid}/action", content=b'{"action": "' + b"[" * 500 + b'"}',
               headers={"Content-Type": "application/json"})
    assert r.status_code in (400, 409) and "deep" not in r.json()["error"], r.text  # read as JSON, refused as a move


@pytest.mark.parametrize("mode, status", [("watch", 400), ("play", 403)])
def test_a_view_that_is_not_an_ascii_seat_number_is_refused(tmp_path, mode, status):
    """"²" (U+00B2) counts as a digit to str.isdigit but int() refuses it: never a 500."""
    c = client(tmp_path)
    if mode == "watch":
        gid = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=3)
    else:
        gid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=3)
    for bad in ("%C2%B2", "%D9%A1", "1%C2%B2", "00000000001", "-1", "4"):
        for method, url in (("get", f"/api/games/{gid}?view={bad}"), ("get", f"/api/games/{gid}/table.png?view={bad}"),
                            ("post", f"/api/games/{gid}/advance?view={bad}")):
            kw = {"json": {}} if method == "post" else {}
            r = getattr(c, method)(url, **kw)
            assert r.status_code == status, (url, r.status_code, r.text)
            assert r.headers["content-type"] == "application/json" and r.json()["error"]
    assert moves_of(c, gid) == []


def test_deleting_a_game_while_an_agent_decides(tmp_path):
    """The agent's move cannot be stored once the game is gone: 404 saying so, not a FOREIGN KEY 500."""
    c = client(tmp_path)
    gid = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=3)
    table = c.app.state.showdown.table(gid)
    deciding, deleted = threading.Event(), threading.Event()
    decide = table.agent_move

    def slow_agent_move(explained: bool) -> Any:
        out = decide(explained)
        deciding.set()
        assert deleted.wait(10)
        return out

    table.agent_move = slow_agent_move
    answer: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: answer.update(r=c.post(f"/api/games/{gid}/advance", json={"moves": 0})))
    worker.start()
    assert deciding.wait(10)
    assert c.delete(f"/api/games/{gid}").status_code == 200
    deleted.set()
    worker.join(10)
    r = answer["r"]
    assert r.status_code == 404, r.text
    assert "deleted while this move was being made" in r.json()["error"]
    assert c.get(f"/api/games/{gid}").status_code == 404
    assert c.app.state.store.load(gid) is None


# ------------------------------------------------------------------------------ 2. not JSON: 415
@pytest.mark.parametrize("body, headers", [
    (b"", {"Content-Type": "text/plain"}),
    (b"", {}),
    (b"", {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}),
    (b"moves=0", {"Content-Type": "application/x-www-form-urlencoded"}),
    (b"moves=0", {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}),
    (b'{"moves": 0}', {"Content-Type": "text/plain", "Origin": "http://evil.example"}),
    (b"--x\r\n\r\n--x--", {"Content-Type": "multipart/form-data; boundary=x"}),
])
def test_a_request_that_is_not_json_moves_nothing(tmp_path, body, headers):
    c = client(tmp_path)
    gid = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=3)
    pid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=3)
    for url in (f"/api/games/{gid}/advance", f"/api/games/{pid}/action", f"/api/games/{pid}/advance", "/api/games"):
        r = c.post(url, content=body, headers=headers)
        assert r.status_code == 415, (url, r.status_code, r.text)
        assert "as JSON" in r.json()["error"]
    assert moves_of(c, gid) == [] and moves_of(c, pid) == []
    assert len(c.get("/api/games").json()["games"]) == 2
    # the same request as JSON moves the watched game: an empty JSON body is {}
    assert c.post(f"/api/games/{gid}/advance", content=b"", headers={"Content-Type": "application/json"}).status_code \
        == 200
    assert len(moves_of(c, gid)) == 1


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "http://127.0.0.1.evil.example"},
    {"Origin": "http://127.0.0.1:9999"},  # another port is another site
    {"Origin": "null"},  # a sandboxed frame or a file:// page
    {"Origin": "http://[::1"},
    {"Origin": "http://127.0.0.1/x"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
])
def test_json_from_another_site_moves_nothing(tmp_path, headers):
    """A JSON request whose browser says it comes from another page's site: 403, nothing moves or is deleted."""
    c = client(tmp_path)
    gid = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=3)
    pid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=3)
    for url, body in ((f"/api/games/{gid}/advance", {"moves": 0}), (f"/api/games/{pid}/advance", {}),
                      (f"/api/games/{pid}/action", {"action": 41, "moves": 0}),
                      ("/api/games", {"mode": "watch", "agents": ["random"] * 4})):
        r = c.post(url, json=body, headers=headers)
        assert r.status_code == 403, (url, r.status_code, r.text)
        assert "another site" in r.json()["error"]
    r = c.delete(f"/api/games/{gid}", headers=headers)
    assert r.status_code == 403 and "another site" in r.json()["error"]
    assert moves_of(c, gid) == [] and moves_of(c, pid) == []
    assert len(c.get("/api/games").json()["games"]) == 2


@pytest.mark.parametrize("headers", [{"Origin": BASE}, {"Origin": BASE + "/"}, {"Sec-Fetch-Site": "same-origin"},
                                     {"Origin": BASE.upper(), "Sec-Fetch-Site": "same-origin"}, {}])
def test_json_from_the_servers_own_pages_moves(tmp_path, headers):
    """What the pages send (Chromium adds its own Origin and Sec-Fetch-Site), and a client that sends neither."""
    c = client(tmp_path)
    gid = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=3)
    r = c.post(f"/api/games/{gid}/advance", json={"moves": 0}, headers=headers)
    assert r.status_code == 200, r.text
    assert len(moves_of(c, gid)) == 1
    assert c.delete(f"/api/games/{gid}", headers=headers).status_code == 200


# ------------------------------------------------------------------------------ 3. hosts
def test_only_the_loopback_names_are_answered(tmp_path):
    assert "testserver" not in Settings().allowed_hosts
    app = create_app(Settings(db=":memory:", results=None))
    for host in ("127.0.0.1", "127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000", "[::1]"):
        r = TestClient(app, base_url=BASE).get("/api/options", headers={"Host": host})
        assert r.status_code == 200, (host, r.text)
    for host in ("testserver", "evil.example", "evil.example:8000", "127.0.0.1.evil.example", "[::2]:8000", "",
                 "localhost:8000:1", "[::1]evil", "[::1]:80x", "127.0.0.1:abc", "localhost:", "[::1", "::1:8000",
                 "127.0.0.1:8000\u00b2"):
        for path in ("/api/options", "/", "/play/abcdefgh123"):
            r = TestClient(app, base_url=BASE).get(path, headers={"Host": host.encode("latin-1")})
            assert r.status_code == 400, (host, r.status_code)
            assert r.headers["content-type"] == "application/json" and "answers requests addressed to" in \
                r.json()["error"]
    anywhere = create_app(Settings(db=":memory:", results=None, allowed_hosts=("*",)))
    assert TestClient(anywhere, base_url="http://box.lan:8000").get("/api/options").status_code == 200


@pytest.mark.parametrize("host, url", [("::1", "http://[::1]:8123/"), ("[::1]", "http://[::1]:8123/"),
                                       ("127.0.0.1", "http://127.0.0.1:8123/"), ("localhost", "http://localhost:8123/"),
                                       ("0.0.0.0", "http://127.0.0.1:8123/")])
def test_rook_serve_prints_an_address_that_answers(tmp_path, monkeypatch, capsys, host, url):
    import uvicorn

    from rook_env.serve.cli import main

    ran: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: ran.update(app=app, **kw))
    assert main(["--host", host, "--port", "8123", "--data", str(tmp_path / "data"), "--results", ""]) == 0
    out = capsys.readouterr()
    assert f"rook-serve: {url} " in out.out
    assert ran["host"] == host.strip("[]") and ran["port"] == 8123
    assert ("warning" in out.err) == (host == "0.0.0.0")
    c = TestClient(ran["app"], base_url=url.rstrip("/"))
    assert c.get("/").status_code == 200 and c.get("/api/options").status_code == 200
    if host != "0.0.0.0":  # loopback: another name is refused
        assert TestClient(ran["app"], base_url="http://evil.example:8123").get("/").status_code == 400


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_rook_serve_on_ipv6_answers_at_the_address_it_prints(tmp_path):
    """The real command on a real socket: ``--host ::1`` prints ``http://[::1]:PORT/`` and that address answers;
    a test-only or foreign Host gets the JSON error shape."""
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
        sock.bind(("::1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "rook_env.serve.cli", "--host", "::1", "--port", str(port),
                             "--data", str(tmp_path / "data"), "--results", ""],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # printed before the server starts listening
        assert line.startswith(f"rook-serve: http://[::1]:{port}/ "), line
        url = line.split()[1]
        for _ in range(200):  # bounded: 20 s
            try:
                with urllib.request.urlopen(url + "api/options", timeout=5) as r:
                    assert r.status == 200 and "games" in json.loads(r.read())
                break
            except urllib.error.URLError:
                time.sleep(0.1)
        else:
            raise AssertionError("rook-serve --host ::1 never answered at " + url)
        with urllib.request.urlopen(url, timeout=5) as r:
            assert r.status == 200 and b"New game" in r.read()
        for host in ("testserver", "evil.example", f"[::1]evil:{port}"):
            req = urllib.request.Request(url + "api/options", headers={"Host": host})
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(req, timeout=5)
            assert err.value.code == 400 and err.value.headers["content-type"] == "application/json"
            assert "answers requests addressed to" in json.loads(err.value.read())["error"]
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------------------ 4. seeds
def test_a_fresh_seed_is_64_bits_from_the_os(tmp_path, monkeypatch):
    import secrets

    c = client(tmp_path, max_games=50)
    seeds = []
    for _ in range(8):
        gid = new_game(c, mode="watch", agents=["random"] * 4)
        v = c.get(f"/api/games/{gid}").json()
        assert isinstance(v["seed"], str)
        seeds.append(int(v["seed"]))
    assert len(set(seeds)) == 8 and all(0 <= s < 2**64 for s in seeds)
    assert max(seeds) >= 2**40  # eight draws all below 2**40 happen once in 2**192 tries
    drawn: list[int] = []

    def randbits(k: int) -> int:
        drawn.append(k)
        return 2**64 - 5

    monkeypatch.setattr(secrets, "randbits", randbits)  # the OS's random source: the seed is what it gives
    gid = new_game(c, mode="watch", agents=["random"] * 4)
    assert drawn == [64] and c.get(f"/api/games/{gid}").json()["seed"] == str(2**64 - 5)


def test_a_64_bit_seed_travels_exactly_and_never_in_play_mode(tmp_path):
    c = client(tmp_path)
    seed = 7824990879007939751  # JavaScript's numbers would show 7824990879007940000
    gid = new_game(c, mode="watch", agents=["random"] * 4, seed=str(seed))
    v = c.get(f"/api/games/{gid}").json()
    assert v["seed"] == str(seed)
    assert [g["spec"]["seed"] for g in c.get("/api/games").json()["games"]] == [str(seed)]
    env = rook_env.env()
    env.reset(seed=seed)
    hands = [sorted(x["card"] for x in h) for h in v["scene"]["hands"]]
    assert hands == [[i for i in range(41) if env.unwrapped.game.hands[s] >> i & 1] for s in range(4)]
    pid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=seed)
    assert c.get(f"/api/games/{pid}").json()["seed"] is None
    assert {g["id"]: g["spec"]["seed"] for g in c.get("/api/games").json()["games"]}[pid] is None


def test_reset_deals_from_every_bit_of_a_64_bit_seed():
    """Seeds that differ only above bit 32 deal different hands (a 32-bit seed search finds nothing), and the
    same 64-bit seed deals the same hands: the server's seeds reach the environment whole."""
    def deal(game: str, seed: int) -> list[int]:
        env = rook_env.env(game=game)
        env.reset(seed=seed)
        return [int(h) for h in env.unwrapped.game.hands]

    # (CPython's random.Random(a) and Random(a + ((a - 1) << 32)) start alike: 2**32 such pairs among 2**64 seeds,
    # none of them here)
    for game in ("partnership", "call_partner"):
        for low in (1, 12345, 2**32 - 1):
            seeds = [low + (k << 32) for k in (0, 1, 2**31, 2**32 - 1)]
            deals = [deal(game, s) for s in seeds]
            assert len({tuple(d) for d in deals}) == len(seeds), (game, low)
            assert deals == [deal(game, s) for s in seeds]
        assert deal(game, 2**64 - 1) == deal(game, 2**64 - 1) != deal(game, 2**64 - 2)


# ------------------------------------------------------------------------------ 5. the player's words
def test_an_illegal_card_is_refused_in_the_words_of_the_table(tmp_path):
    c = client(tmp_path)
    colours = ("red", "yellow", "green", "black")
    for seed in range(40):  # a deal where the person must follow suit holding another colour
        gid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=seed)
        v = to_your_turn(c, gid, "play", seed)
        legal = {a["action"] for a in v["legal"]}
        hand = [x["card"] for x in v["scene"]["hands"][0]]
        wrong = [x for x in hand if x not in legal]
        if v["scene"]["trick"] and wrong:
            break
        c.delete(f"/api/games/{gid}")
    else:
        raise AssertionError("no deal made the person follow suit")
    r = c.post(f"/api/games/{gid}/action", json={"action": wrong[0], "moves": v["moves"]})
    assert r.status_code == 400
    message = r.json()["error"]
    m = re.fullmatch(r"you must follow suit: play a (\w+) card( \(trump\))?( or the Rook)?", message)
    assert m, message
    assert {x["card"]["colour"] for x in v["legal"] if x["kind"] == "card"} - {-1} == {colours.index(m.group(1))}
    assert moves_of(c, gid) == moves_of(c, gid)[:v["moves"]]  # nothing moved
    other = next(x for x in range(41) if x not in hand)
    r = c.post(f"/api/games/{gid}/action", json={"action": other, "moves": v["moves"]})
    assert r.status_code == 400 and re.fullmatch(r"you do not hold \S+: play a card from your hand", r.json()["error"])
    r = c.post(f"/api/games/{gid}/action", json={"action": 9999, "moves": v["moves"]})
    assert r.status_code == 400 and r.json()["error"].startswith("action 9999 is not a legal move now: you may ")


def test_not_your_turn_and_the_agents_turn_speak_as_the_table(tmp_path):
    c = client(tmp_path)
    for seat in range(4):  # a seat that does not bid first
        agents: list[Any] = ["heuristic"] * 4
        agents[seat] = None
        gid = new_game(c, mode="play", agents=agents, seat=seat, seed=1)
        v = c.get(f"/api/games/{gid}").json()
        if not v["your_turn"]:
            break
    r = c.post(f"/api/games/{gid}/action", json={"action": 41, "moves": v["moves"]})
    assert r.status_code == 409
    assert re.fullmatch(r"it is not your turn: wait for P\d \(heuristic\) to bid", r.json()["error"]), r.json()
    v = to_your_turn(c, gid)
    r = c.post(f"/api/games/{gid}/advance", json={"moves": v["moves"]})
    assert r.status_code == 409 and r.json()["error"] == "it is your turn: the agents wait for your move"
    bids = [a for a in v["legal"] if a["kind"] == "bid"]
    r = c.post(f"/api/games/{gid}/action", json={"action": min(a["action"] for a in bids) - 1, "moves": v["moves"]})
    assert re.fullmatch(r"bid \d+ is not a legal move now \(bid\): you may pass(, bid| or bid) \d+ to \d+( or redeal)?",
                        r.json()["error"]), r.json()


@pytest.mark.parametrize("flags", [{"max_bid": 10**30}, {"max_bid": 2**40, "bid_step": 1}, {"target_score": -10**30},
                                   {"min_bid": 2**63}, {"majority_tricks_bonus": 10_001}, {"max_bid": 1e300}])
def test_a_rule_number_out_of_range_is_a_400(tmp_path, flags):
    """max_bid=10**30 once overflowed (500) and 2**40 ran out of memory building the table's bids."""
    c = client(tmp_path)
    r = c.post("/api/games", json={"mode": "watch", "flags": flags, "agents": ["random"] * 4})
    assert r.status_code == 400, r.text
    assert "out of range" in r.json()["error"] or "must be an integer" in r.json()["error"]
    assert c.get("/api/games").json()["games"] == []


def test_a_lone_surrogate_is_quoted_not_a_500(tmp_path):
    """JSON may carry "\\ud800" (a lone surrogate); UTF-8 cannot: the error says it as its escape."""
    c = client(tmp_path)
    as_json = {"Content-Type": "application/json"}
    for body in (b'{"mode": "watch", "flags": {"\\ud800": 1}, "agents": ["random", "random", "random", "random"]}',
                 b'{"mode": "\\udfff"}', b'{"x\\ud800": 1}', b'{"game": "\\ud800\\ud800"}',
                 b'{"mode": "watch", "flags": {"preset": "\\ud800"}, "agents": ["random", "random", "random", "random"]}'):
        r = c.post("/api/games", content=body, headers=as_json)
        assert r.status_code == 400, (body, r.text)
        assert "ud800" in r.json()["error"] or "udfff" in r.json()["error"]
    pid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=3)
    r = c.post(f"/api/games/{pid}/action", content=b'{"action": "\\ud800"}', headers=as_json)
    assert r.status_code in (400, 409) and r.json()["error"]


def test_an_unknown_game_address_is_a_page(tmp_path):
    c = client(tmp_path)
    for path in ("/play/NoSuchGame123", "/watch/NoSuchGame123", "/play/x", "/nothing/here", "/static/x.js"):
        r = c.get(path)
        assert r.status_code == 404 and r.headers["content-type"].startswith("text/html"), path
        assert "<h1>" in r.text and "Start a new game" in r.text
    assert "No such game" in c.get("/play/NoSuchGame123").text
    r = c.get("/api/games/NoSuchGame123")
    assert r.status_code == 404 and r.headers["content-type"] == "application/json"


def test_rule_flags_have_readable_names_and_call_your_partner_seats_five(tmp_path):
    c = client(tmp_path)
    opts = c.get("/api/options").json()
    for g in opts["games"].values():
        assert set(g["labels"]) == set(g["choices"])
        for name, lab in g["labels"].items():
            assert "_" not in lab["label"] and set(lab["values"]) == {str(v) for v in g["choices"][name]}, name
            assert all("_" not in text for text in lab["values"].values()), lab
    assert opts["games"]["partnership"]["labels"]["no_counter_redeal"]["label"] == "Redeal a hand without counters"
    assert opts["games"]["call_partner"]["default_players"] == 5
    gid = new_game(c, mode="watch", game="call_partner", agents=["call_partner_heuristic"] * 5)
    assert c.get(f"/api/games/{gid}").json()["players"] == 5


def test_watching_from_a_seat_does_not_call_it_you(tmp_path):
    c = client(tmp_path)
    gid = new_game(c, mode="watch", agents=["heuristic"] * 4, seed=2)
    for _ in range(8):
        c.post(f"/api/games/{gid}/advance", json={})
    for view in ("1", "2", "spectator"):
        texts = [e["text"] for e in c.get(f"/api/games/{gid}?view={view}").json()["log"]]
        assert texts and not any(t.startswith("You") for t in texts), texts
    pid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=2)
    v = to_your_turn(c, pid)
    v = c.post(f"/api/games/{pid}/action", json={"action": v["legal"][0]["action"], "moves": v["moves"]}).json()
    assert any(e["text"].startswith("You:") for e in v["log"] if e["seat"] == 0)


def test_a_stale_tab_is_told_the_game_moved_on(tmp_path):
    c = client(tmp_path)
    gid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=4)
    v = to_your_turn(c, gid)
    assert c.post(f"/api/games/{gid}/action", json={"action": v["legal"][0]["action"], "moves": v["moves"]}).status_code \
        == 200
    r = c.post(f"/api/games/{gid}/action", json={"action": v["legal"][0]["action"], "moves": v["moves"]})
    assert r.status_code == 409 and "moved on" in r.json()["error"]


# ------------------------------------------------------------------------------ anything at all
def test_nothing_a_client_sends_gets_a_5xx(tmp_path):
    """Any method, path, query, content type and body (JSON of any shape and depth, or bytes) is answered
    below 500, an error as ``{"error": ...}`` (or a page off the API), and a refused request moves nothing."""
    hypothesis = pytest.importorskip("hypothesis")
    from urllib.parse import quote

    st = hypothesis.strategies
    c = client(tmp_path, max_games=100_000)
    pid = new_game(c, mode="play", agents=HEUR4, seat=0, seed=2)
    wid = new_game(c, mode="watch", agents=["random"] * 4, seed=2)
    text = st.text(st.characters(exclude_categories=()), max_size=12)  # lone surrogates included
    scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False)
               | text)
    values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(text, kids, max_size=4),
                          max_leaves=8)
    keys = st.sampled_from(["action", "moves", "mode", "game", "flags", "seed", "agents", "seat", "x"])
    # a new game's body with the real fields: real rule flag names with their own values or anything at all
    opts = c.get("/api/options").json()["games"]
    flag_names = sorted({f for g in opts.values() for f in g["choices"]} | {"players", "preset", "target_score", "min_bid",
                                                                             "max_bid", "bid_step", "episode"})
    flag_values = st.sampled_from(sorted({str(v) for g in opts.values() for vs in g["choices"].values() for v in vs})) \
        | st.integers(-2**70, 2**70) | st.integers(0, 400) | scalars
    game_bodies = st.fixed_dictionaries({"mode": st.sampled_from(["watch", "play"]),
                                         "game": st.sampled_from(sorted(opts) + ["x"]),
                                         "flags": st.dictionaries(st.sampled_from(flag_names) | text, flag_values, max_size=3),
                                         "agents": st.lists(st.sampled_from([None, "random", "heuristic", "x"]),
                                                            min_size=3, max_size=7)},
                                        optional={"seat": st.integers(-1, 7), "seed": values})
    json_bodies = (st.dictionaries(keys, values, max_size=4) | values | game_bodies).map(lambda v: json.dumps(v).encode())
    deep = st.builds(lambda d, k, brackets: b'{"' + k.encode() + b'": ' + brackets[0] * d + b"1" + brackets[1] * d + b"}",
                     st.integers(1, 3000), keys, st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
    bodies = json_bodies | deep | st.binary(max_size=64)
    games = st.sampled_from([pid, wid, "NoSuchGame123", "x", "..", "%00", "\u00b2" * 8])
    tails = st.sampled_from(["", "/action", "/advance", "/table.png", "/x"])
    views = st.one_of(st.none(), st.text(st.characters(exclude_categories=()), max_size=6))
    ctypes = st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain",
                              "application/x-www-form-urlencoded", "", "APPLICATION/JSON"])
    origins = st.sampled_from([None, BASE, "http://evil.example", "null", "http://[::1"])
    pages = st.sampled_from(["/", "/compare", "/api/options", "/api/games", "/api/leaderboard", "/api/replays",
                             "/static/style.css", "/replays/x.html", "/compare/replays/x.json/\u00b2"])

    @hypothesis.settings(max_examples=250, deadline=None, database=None, derandomize=True)
    @hypothesis.given(method=st.sampled_from(["GET", "POST", "DELETE", "PUT"]), game=games, tail=tails, view=views,
                      body=bodies, ctype=ctypes, page=pages, where=st.booleans(), origin=origins)
    def check(method: str, game: str, tail: str, view: str | None, body: bytes, ctype: str, page: str,
              where: bool, origin: str | None) -> None:
        hypothesis.assume(not (method == "DELETE" and where and game in (pid, wid) and origin in (None, BASE)))
        before = (moves_of(c, pid), moves_of(c, wid))
        path = f"/api/games/{quote(game, safe='')}{tail}" if where else page
        if view is not None:
            path += f"?view={quote(view, safe='', errors='surrogatepass')}"
        headers = {"Content-Type": ctype} if ctype else {}
        if origin is not None:
            headers["Origin"] = origin
        r = c.request(method, path, content=body if method in ("POST", "PUT") else None, headers=headers)
        assert r.status_code < 500, (method, path, body[:80], r.status_code, r.text[:300])
        if r.status_code >= 400:
            if r.url.path.startswith("/api"):  # the path as sent ("/api/games/.." is "/api")
                assert r.json()["error"]
            assert (moves_of(c, pid), moves_of(c, wid)) == before

    check()


def test_no_new_game_gets_a_5xx(tmp_path):
    """POST /api/games with the real fields, real rule flag names (and any other text) with their own values or
    anything at all (numbers up to 2**70, lone surrogates): a 201 or a 4xx saying what is wrong, never a 5xx."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    c = client(tmp_path, max_games=100_000)
    opts = c.get("/api/options").json()["games"]
    text = st.text(st.characters(exclude_categories=()), max_size=8)
    names = sorted({f for g in opts.values() for f in g["choices"]} | {"players", "preset", "target_score", "min_bid",
                                                                        "max_bid", "bid_step", "majority_tricks_bonus",
                                                                        "last_trick_bonus", "episode", "game"})
    words = sorted({str(v) for g in opts.values() for vs in g["choices"].values() for v in vs} |
                   {p for g in opts.values() for p in g["presets"]})
    edges = st.sampled_from([10**30, -10**30, 2**63, 2**64, 10**6, 10_001, -10_001, 2**40, 1e300, "\ud800", "x\udfff"])
    values = (st.sampled_from(words) | edges | st.integers(-2**70, 2**70) | st.integers(-5, 400) | st.none()
              | st.booleans() | st.floats() | text | st.lists(st.integers(), max_size=2))
    agents = st.sampled_from([None, "random", "heuristic", "call_partner_heuristic", "search:random", "x", 3, "\ud800"])
    bodies = st.fixed_dictionaries({"mode": st.sampled_from(["watch", "play"]), "game": st.sampled_from(sorted(opts)),
                                    "flags": st.dictionaries(st.sampled_from(names) | st.sampled_from(["\ud800", "x\udfff"])
                                                             | text, values, max_size=3),
                                    "agents": st.lists(agents, min_size=4, max_size=6)},
                                   optional={"seat": st.integers(-1, 6) | values, "seed": values})

    @hypothesis.settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @hypothesis.given(body=bodies)
    def check(body: dict[str, Any]) -> None:
        r = c.post("/api/games", content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        assert r.status_code in (201, 400), (body, r.status_code, r.text[:300])
        assert r.json()["id" if r.status_code == 201 else "error"]

    check()
