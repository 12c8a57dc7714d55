"""The showdown pages end to end in a real browser: the system Chromium driven by Playwright's Python API
(``executable_path``: nothing downloaded). The server runs in a thread on a loopback port.

Play one whole hand by clicking (the new-game form, a reload in the middle, an illegal click refused),
watch two agents with their probabilities, open the leaderboard and a match's replays.
Set ``ROOK_SHOWDOWN_SCREENSHOTS=docs`` to write the screenshots of docs/showdown.md there."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import urllib.request
from typing import Any, Iterator

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from rook_env.serve import Settings, create_app  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs the chromium browser (apt-get install chromium)")
TIMEOUT_MS = 20_000


def have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on 127.0.0.1 (a free port), with a results folder holding one small match."""
    from rook_env.evaluation import play_match, round_robin

    root = tmp_path_factory.mktemp("showdown")
    results = root / "results"
    results.mkdir()
    res = play_match("heuristic", "random", deals=4, seed=1, block_size=2)
    (results / "heuristic-random.json").write_text(json.dumps(res.to_dict()))
    rr = round_robin(["heuristic", "search", "random"], deals=2, seed=1, rating_boot=20)
    (results / "round-robin.json").write_text(json.dumps(rr.to_dict()))
    app = create_app(Settings(data=str(root / "data"), results=str(results)))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):  # bounded: 10 s
        if srv.started:
            break
        time.sleep(0.05)
    assert srv.started, "the server did not start"
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)
    sock.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    ctx.close()
    assert not errors, f"JavaScript errors: {errors}"


def shot(pg: Any, name: str, tmp_path: Any) -> None:
    folder = os.environ.get("ROOK_SHOWDOWN_SCREENSHOTS") or str(tmp_path)
    pg.wait_for_function("() => [...document.images].every((i) => i.complete)")  # the drawn table is in
    pg.screenshot(path=os.path.join(folder, name), full_page=False)


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def data(pg: Any, key: str) -> str:
    return pg.evaluate(f"document.body.dataset.{key}")


def test_play_a_whole_hand_by_clicking(server, page, tmp_path):
    pg = page
    pg.goto(server + "/")
    pg.wait_for_selector("#f-seats select.agent")
    pg.fill("#f-seed", "7")
    pg.click("summary")  # the rule flags: a bad one is refused with the server's reason, no game made
    pg.fill("#f-more", "majority_tricks_bonus=lots")
    pg.click("#start")
    pg.wait_for_function("() => document.querySelector('#form-error').textContent.includes('majority_tricks_bonus')")
    pg.fill("#f-more", "majority_tricks_bonus=20")
    shot(pg, "showdown_new_game.png", tmp_path)
    pg.click("#start")
    pg.wait_for_url("**/play/*")
    pg.goto(pg.url + "?delay=30")  # agents move at once (the page waits 0.7 s between them by default)
    clicks = reloaded = 0
    refused = False
    for _ in range(400):  # bounded: a hand has well under 100 of your decisions and waits
        pg.wait_for_function("() => { const d = document.body.dataset; "
                             "return d.hand !== undefined && (d.yourTurn === 'true' || d.hand !== '1'); }")
        if data(pg, "hand") != "1":
            break
        moves = data(pg, "moves")
        phase = data(pg, "phase")
        if phase == "play" and not refused and pg.locator(".hand .card:not(.legal)").count():
            pg.locator(".hand .card:not(.legal)").first.click()  # an illegal card: refused, nothing moves
            pg.wait_for_function("() => document.querySelector('#message').textContent.includes('not legal')")
            assert data(pg, "moves") == moves
            shot(pg, "showdown_refused.png", tmp_path)
            refused = True
        if clicks == 6 and not reloaded:  # a reload in the middle of the hand resumes it
            hand_before = pg.locator(".hand .card").count()
            pg.reload()
            pg.wait_for_function(f"() => document.body.dataset.moves === '{moves}'")
            assert pg.locator(".hand .card").count() == hand_before
            reloaded = True
        target = pg.locator(".choices button.legal, .hand .card.legal").first
        target.click()
        pg.wait_for_function(f"() => document.body.dataset.moves !== '{moves}'")
        clicks += 1
        if clicks == 8:
            shot(pg, "showdown_play.png", tmp_path)
    assert data(pg, "hand") == "2", "the hand did not finish"
    assert reloaded and refused and clicks >= 9
    sheet = pg.inner_text("#sheet")
    assert "made" in sheet or "set" in sheet  # the finished hand is on the score sheet
    pg.wait_for_function("() => { const t = document.querySelector('#table'); "
                         "return t.complete && t.naturalWidth > 0; }")  # the drawn table loaded


@pytest.mark.skipif(not have_torch(), reason="the ppo agent needs torch")
def test_watch_two_agents_with_their_probabilities(server, page, tmp_path):
    pg = page
    game = post(server + "/api/games", {"mode": "watch", "agents": ["ppo", "heuristic", "ppo", "heuristic"],
                                        "seed": 3})
    pg.goto(server + game["url"] + "?view=spectator")
    pg.wait_for_function("() => document.body.dataset.moves === '0'")  # rendered: the buttons are wired
    for _ in range(13):  # the auction, the discard, trump, then P2 (ppo) leads: probabilities over its cards
        moves = data(pg, "moves")
        pg.click("#step")
        pg.wait_for_function(f"() => document.body.dataset.moves !== '{moves}'")
    pg.wait_for_selector(".bar.prob")
    assert pg.locator(".bar.prob").count() >= 1
    assert "Action probabilities" in pg.inner_text("#explain")
    assert pg.locator(".hand .card").count() == 0  # the spectator's hands are on the drawn table
    shot(pg, "showdown_watch.png", tmp_path)
    # one seat's view, mid-hand: its own cards appear below the table (before the run at speed, which may finish
    # the hand before the pause lands)
    pg.select_option("#view", "1")
    pg.wait_for_function("() => document.querySelectorAll('.hand .card').length > 0")
    moves = int(data(pg, "moves"))
    pg.select_option("#speed", "0")
    pg.click("#run")  # at speed
    pg.wait_for_function(f"() => Number(document.body.dataset.moves) >= {moves + 10}")
    pg.click("#run")  # pause


def test_compare_leaderboard_and_replays(server, page, tmp_path):
    pg = page
    pg.goto(server + "/compare")
    pg.wait_for_selector("#matches tbody tr a.replays")
    assert "heuristic" in pg.inner_text("#matches")
    assert pg.locator("table.ratings tbody tr").count() == 3  # the round robin's ratings
    shot(pg, "showdown_compare.png", tmp_path)
    pg.click("#matches a.replays")
    pg.wait_for_url("**/replays/match-*.html", timeout=60_000)  # played again, then the replay viewer
    assert "Rook replays" in pg.title()
