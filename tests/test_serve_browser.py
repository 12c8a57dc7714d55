"""The showdown pages end to end in a real browser: the system Chromium driven by Playwright's Python API
(``executable_path``: nothing downloaded). The server runs in a thread on a loopback port.

Play one whole hand by clicking (the new-game form, a reload in the middle, an illegal click refused in the
table's words, the pause at the hand's end), two tabs on one game, a phone and a five-player table,
watch two agents with their probabilities, open the leaderboard and a match's replays.
Set ``ROOK_SHOWDOWN_SCREENSHOTS=docs`` to write the screenshots of docs/showdown.md there."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from rook_env.serve import Settings, create_app

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
    pg.select_option("#f-game", "call_partner")  # its default table: five seats
    assert pg.input_value("#f-players") == "5" and pg.locator("#f-seats select.agent").count() == 5
    pg.select_option("#f-game", "partnership")
    assert pg.locator("#f-seats select.agent").count() == 4
    pg.fill("#f-seed", "7")
    pg.click("summary")  # the rule flags: a bad one is refused with the server's reason, no game made
    assert "Redeal a hand without counters" in pg.inner_text("#f-flags")  # flags in words, not no_counter_redeal
    assert "no_counter_redeal" not in pg.inner_text("#f-flags")
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
        if phase == "bid":  # "call a redeal" only where a redeal is a choice
            redeal = pg.locator(".choices button", has_text="redeal").count()
            assert ("redeal" in pg.inner_text("#status")) == bool(redeal)
        if phase == "play" and not refused and pg.locator(".hand .card:not(.legal)").count():
            pg.locator(".hand .card:not(.legal)").first.click()  # an illegal card: refused, nothing moves
            pg.wait_for_function("() => document.querySelector('#message').textContent.includes('must follow suit')")
            assert re.fullmatch(r"you must follow suit: play a (red|yellow|green|black) card( \(trump\))?( or the Rook)?",
                                pg.inner_text("#message")), pg.inner_text("#message")
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
    # the hand's end: the result stays on screen, nothing moves, until "Next hand"
    pg.wait_for_selector("#continue")
    assert data(pg, "paused") == "true" and "Hand 1 is over" in pg.inner_text("#status")
    assert pg.locator(".hand .card.legal, .choices button.legal").count() == 0
    shot(pg, "showdown_hand_over.png", tmp_path)
    moves = data(pg, "moves")
    pg.wait_for_timeout(1500)  # at ?delay=30 the agents would have made dozens of moves
    assert data(pg, "moves") == moves and data(pg, "paused") == "true"
    pg.click("#continue")
    pg.wait_for_function(f"() => document.body.dataset.paused === 'false' && (document.body.dataset.moves !== "
                         f"'{moves}' || document.body.dataset.yourTurn === 'true')")
    assert data(pg, "hand") == "2"
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


def test_watching_at_speed_holds_each_hands_result(server, page):
    """Watch mode at the fastest speed: a finished hand's result stays on screen (the banner, nothing moves) for
    a few seconds, then the agents deal on; the status line names who is to act in words, never "You"."""
    pg = page
    game = post(server + "/api/games", {"mode": "watch", "agents": ["heuristic"] * 4, "seed": 3})
    pg.goto(server + game["url"] + "?view=1")
    pg.wait_for_function("() => document.body.dataset.moves === '0'")
    assert re.fullmatch(r"P\d \(heuristic\) is to bid", pg.inner_text("#status")), pg.inner_text("#status")
    pg.select_option("#speed", "0")
    pg.click("#run")
    pg.wait_for_function("() => document.body.dataset.handOver === 'true'", timeout=60_000)
    moves = data(pg, "moves")
    status = pg.inner_text("#status")
    assert re.match(r"Hand 1 is over: P\d bid \d+ in \w+", status), status
    assert "You" not in status and "You" not in pg.inner_text("#log")
    pg.wait_for_timeout(2500)  # at the fastest speed the agents would have made dozens of moves
    assert data(pg, "moves") == moves and data(pg, "handOver") == "true"
    pg.wait_for_function(f"() => document.body.dataset.moves !== '{moves}'", timeout=10_000)  # then they go on
    assert data(pg, "hand") == "2"
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


def test_two_tabs_on_one_game_the_stale_one_recovers(server, browser):
    """A move made in one tab leaves the other a view behind: its click is refused (409) and it shows the game
    as it is now, without a reload, and plays on from there."""
    game = post(server + "/api/games", {"mode": "play", "agents": [None, "heuristic", "heuristic", "heuristic"],
                                        "seat": 0, "seed": 11})
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        a, b = ctx.new_page(), ctx.new_page()
        for pg in (a, b):
            pg.set_default_timeout(TIMEOUT_MS)
        b.goto(server + game["url"] + "?delay=30")
        b.wait_for_function("() => document.body.dataset.yourTurn === 'true'")  # the agents before you have moved
        a.goto(server + game["url"] + "?delay=100000")  # this tab never asks the agents to move
        a.wait_for_function("() => document.body.dataset.yourTurn === 'true'")
        seen = data(a, "moves")
        b.locator(".choices button.legal").first.click()  # B moves; A still shows the old view
        b.wait_for_function(f"() => document.body.dataset.moves !== '{seen}'")
        assert data(a, "moves") == seen
        a.locator(".choices button.legal").first.click()  # A's click on the old view: refused, then A catches up
        a.wait_for_function(f"() => document.body.dataset.moves !== '{seen}'")
        assert "moved on" in a.inner_text("#message")
        now = json.loads(urllib.request.urlopen(server + "/api/games/" + game["id"], timeout=30).read())
        assert int(data(a, "moves")) <= now["moves"]  # A shows the game as the server has it (B's agents go on)
    finally:
        ctx.close()


@pytest.mark.parametrize("width, height", [(390, 844), (1400, 1000)])
def test_a_five_player_table_reads_on_a_phone_and_a_laptop(server, browser, width, height, tmp_path):
    agents = [None] + ["call_partner_heuristic"] * 4
    game = post(server + "/api/games", {"mode": "play", "game": "call_partner", "flags": {"players": 5},
                                        "agents": agents, "seat": 0, "seed": 5})
    ctx = browser.new_context(viewport={"width": width, "height": height})
    try:
        pg = ctx.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.goto(server + game["url"] + "?delay=100000")
        pg.wait_for_function("() => document.body.dataset.moves !== undefined && "
                             "document.querySelector('#table').complete && document.querySelector('#table').naturalWidth")
        sizes = pg.evaluate("""() => {
            const px = (sel) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize);
            const img = document.querySelector('#table');
            return {status: px('#status'), log: px('#log'), card: px('.hand .card'), body: px('body'),
                    scale: img.getBoundingClientRect().width / img.naturalWidth,
                    page: document.documentElement.scrollWidth};
        }""")
        assert sizes["status"] >= 15 and sizes["log"] >= 15 and sizes["card"] >= 20 and sizes["body"] >= 15, sizes
        # the drawn table's 13 px labels show at 10 px or more (a phone scrolls the picture sideways, not the page)
        assert sizes["scale"] >= (0.75 if width < 700 else 0.95), sizes
        assert sizes["page"] <= width + 1, sizes
        status = pg.inner_text("#status")  # the agents' turn in words (the page waits: ?delay=100000)
        assert re.fullmatch(r"Your turn: bid(, pass or call a redeal| or pass)|Waiting for P[1-4] \(call_partner_heuristic\) to bid", status), status
        if width < 700:
            shot(pg, "showdown_phone.png", tmp_path)
    finally:
        ctx.close()
