"""The drawn table of every game (render_mode="rgb_array"): shape and type (call-your-partner Rook at 4, 5
and 6 seats), states draw differently and deterministically, a seat's view holds nothing hidden from that
seat (neither cards nor who a secret partner is), PettingZoo's render_test, frames a video recorder can
take (gymnasium's RecordVideo), Pillow missing, each game's own table facts."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("PIL")

from helpers import (  # noqa: E402
    GAMES,
    L,
    complete_deal,
    cp_deal,
    ids,
    over_games,
    per_game,
    positions,
    step_text,
)
from pettingzoo.test import render_test  # noqa: E402

import rook_env  # noqa: E402
from rook_env.agents import make_agent  # noqa: E402
from rook_env.core.drawing import (  # noqa: E402
    HEIGHT,
    PANEL_HEIGHT,
    PANEL_WIDTH,
    WIDTH,
    RenderDependencyError,
    Scene,
    draw_scene,
    seat_centres,
)
from rook_env.core.render import draw_seat_view, draw_table  # noqa: E402
from rook_env.games import get_game  # noqa: E402
from rook_env.games.call_partner import rules as cp_rules  # noqa: E402
from rook_env.games.call_partner.render import CALL_PARTNER  # noqa: E402
from rook_env.games.partnership import rules as p_rules  # noqa: E402
from rook_env.games.partnership.render import PARTNERSHIP  # noqa: E402

# The drawing's size in each game: the partnership table, the n-seat panel of call-your-partner Rook.
SHAPE = per_game({"partnership": (HEIGHT, WIDTH, 3), "call_partner": (PANEL_HEIGHT, PANEL_WIDTH, 3)})
# The tables each game draws: the default, and call-your-partner Rook at every table size.
TABLES = per_game({"partnership": [{}], "call_partner": [{"players": 4}, {"players": 5}, {"players": 6}]})


def _id(flags: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in flags.items()) or "default"


def _heuristics(game: str, flags: dict, seed: int = 0):
    """The game's heuristic agent at every seat of the table of ``flags``."""
    rules = {k: v for k, v in flags.items() if k != "max_hands"}  # max_hands is an environment option
    n = rules.get("players", get_game(game).default_players)
    return [make_agent(get_game(game).heuristic, seed=seed + s, game=game, **rules) for s in range(n)]


def _step(e, agents) -> None:
    e.step(agents[e.unwrapped.game.current].act(e.observe(e.agent_selection)))


@pytest.mark.parametrize("game, flags", over_games(TABLES, ids=_id))
def test_rgb_array_shape_and_dtype(game, flags):
    e = rook_env.env(game=game, render_mode="rgb_array", **flags)
    assert "rgb_array" in e.metadata["render_modes"] and e.metadata["render_fps"] > 0
    e.reset(seed=1)
    img = e.render()
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == SHAPE[game]
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 20  # a drawing, not a blank canvas
    for s in range(len(e.possible_agents)):
        assert draw_seat_view(e, f"player_{s}").shape == SHAPE[game]
    assert (PANEL_WIDTH, PANEL_HEIGHT) != (WIDTH, HEIGHT)  # the partnership table keeps its own size


# How far each table is played: 30 decisions of the partnership game, a whole call-your-partner hand.
DECISIONS = per_game({"partnership": [({}, 30)],
                      "call_partner": [({"players": 4}, None), ({"players": 5}, None), ({"players": 6}, None)]})


@pytest.mark.parametrize("game, flags, decisions", over_games(DECISIONS, ids=lambda c: _id(c[0])))
def test_different_states_draw_differently(game, flags, decisions):
    e = rook_env.raw_env(game=game, render_mode="rgb_array", **flags)
    e.reset(seed=2)
    agents = _heuristics(game, flags)
    frames = [e.render()]
    while not e.game.is_over and (decisions is None or len(frames) <= decisions):
        _step(e, agents)
        frames.append(e.render())
    for i, (a, b) in enumerate(zip(frames, frames[1:])):
        assert not np.array_equal(a, b), f"decision {i + 1} did not change the drawing"
    e.reset(seed=3)
    assert not np.array_equal(e.render(), frames[0])  # another deal
    assert np.array_equal(e.render(), e.render())  # deterministic


@pytest.mark.parametrize("game, flags", over_games(TABLES, ids=_id))
def test_render_is_deterministic(game, flags):
    e = rook_env.raw_env(game=game, render_mode="rgb_array", **flags)
    e.reset(seed=4)
    assert np.array_equal(e.render(), e.render())
    for _ in positions(e, 4, 12):
        pass
    assert np.array_equal(e.render(), e.render())


# ------------------------------------------------------------------------------ hidden information
# A fixed deal of each game and a script that plays into the first tricks.
# The partnership game (dealer 3): player_0 bids 70, the others pass; player_0 lays down five red cards
# of its own (keeping the nest), names red, and the first trick is R14 R5 B14 B13.
# Call-your-partner Rook, five players, dealer 4: player_0 bids 100 and the others pass; player_0 lays
# down five of the nest's blacks, R6 and R7, names red, Rook high and calls G14 (player_2's in the base
# deal). Two tricks follow in which neither G14 nor Y5 is played, so nobody but G14's holder knows the
# partner.
DEALS = per_game({
    "partnership": dict(
        flags={}, dealer=3, tricks=1, play=p_rules.PLAY,
        deal=lambda e, d: complete_deal(d["hands"], d["nest"]),
        hands={0: "R14 R13 R12 R11 R10 R9 R8 R7 R6", 1: "R5 G5 Rook", 2: "B14", 3: "B13 Y5 B12"},
        nest="G14 G13 G12 G11 G10",
        script=["bid 70", "pass", "pass", "pass", "R6", "R7", "R8", "R9", "R10", "trump red", "R14", "R5", "B14",
                "B13"]),
    "call_partner": dict(
        flags={"players": 5}, dealer=4, tricks=2, play=cp_rules.PLAY,
        deal=lambda e, d: cp_deal(e.config, d["hands"], d["nest"]),
        hands={0: "R1 R14 R13 R12 R11 R10 R9 R8 R7 R6", 1: "R4 Y14 Y13 Y12 Y11 Y10 Y9 Y8 Y7 Y6",
               2: "R3 G14 G13 G12 G11 G10 G9 G8 G7 G6", 3: "R2 Y5 B8 B7 B6 B5 B4 B3 B2 B1",
               4: "R5 G5 G4 G3 G2 G1 Y4 Y3 Y2 Y1"},
        nest="B14 B13 B12 B11 B10 B9 Rook",
        script=["bid 100", "pass", "pass", "pass", "pass", "B14", "B13", "B12", "B11", "B10", "R6", "R7",
                "trump red", "rook high", "G14", "R1", "R4", "R3", "R2", "R5", "R14", "Y14", "G13", "B7", "G5"]),
})


def _deal(game: str, swap: tuple[str, str] | None = None):
    """A raw env of ``game`` reset with the game's fixed deal, cards ``swap`` exchanged between their holders."""
    d = DEALS[game]
    e = rook_env.raw_env(game=game, **d["flags"])
    hands, nest = d["deal"](e, d)
    if swap is not None:
        a, b = (e.layout.parse_card(t) for t in swap)
        exchange = {a: b, b: a}
        hands = [[exchange.get(c, c) for c in h] for h in hands]
        nest = [exchange.get(c, c) for c in nest]
    e.reset(seed=0, options={"hands": hands, "nest": nest, "dealer": d["dealer"]})
    return e


def _seat_frames(game: str, swap=None) -> tuple[list[list[np.ndarray]], list[np.ndarray]]:
    """Every seat's view and the spectator's after each scripted decision."""
    e = _deal(game, swap)
    seats, spectator = [], []
    for action in [None, *DEALS[game]["script"]]:
        if action is not None:
            step_text(e, action)
        seats.append([draw_seat_view(e, agent) for agent in e.possible_agents])
        spectator.append(draw_table(e.game))
    assert e.game.phase == DEALS[game]["play"] and len(e.game.tricks) == DEALS[game]["tricks"]
    return seats, spectator


SWAPS = per_game({
    "partnership": [
        (("G5", "Y5"), (0, 2), (1, 3)),  # between player_1's and player_3's hands
        (("G14", "B12"), (1, 2), (0, 3)),  # between the nest (player_0 takes it) and player_3's hand
    ],
    "call_partner": [
        (("G14", "Y5"), (0, 1, 4), (2, 3)),  # the called card: player_2 or player_3 is the secret partner
        (("B9", "B1"), (1, 2, 4), (0, 3)),  # between the nest (player_0 takes it) and player_3's hand
    ],
})


@pytest.mark.parametrize("game, swap, blind, seeing", over_games(SWAPS, ids=lambda c: "-".join(c[0])))
def test_seat_view_does_not_change_when_only_hidden_cards_change(game, swap, blind, seeing):
    base, base_spec = _seat_frames(game)
    other, other_spec = _seat_frames(game, swap)
    for step, (x, y) in enumerate(zip(base, other)):
        for s in blind:
            assert np.array_equal(x[s], y[s]), f"player_{s}'s view changed at step {step}: hidden information leaked"
    for s in seeing:  # the seats holding the swapped cards see the difference: the test can fail
        assert not np.array_equal(base[-1][s], other[-1][s])
    assert not np.array_equal(base_spec[-1], other_spec[-1])  # and so does the spectator


@pytest.mark.parametrize("game", GAMES)
def test_seat_view_differs_from_spectator_view(game):
    e = rook_env.raw_env(game=game, render_mode="rgb_array")
    e.reset(seed=5)
    assert not np.array_equal(e.render(), draw_seat_view(e, "player_0"))
    assert not np.array_equal(draw_seat_view(e, "player_0"), draw_seat_view(e, "player_1"))


# ------------------------------------------------------------------------------ render_test, videos
@pytest.mark.parametrize("game, flags", over_games(TABLES, ids=_id))
def test_pettingzoo_render_test(game, flags):
    def is_table(img):
        return img.shape == SHAPE[game] and img.dtype == np.uint8

    render_test(lambda render_mode=None: rook_env.env(game=game, render_mode=render_mode, **flags),
                custom_tests={"rgb_array": is_table})


# Whole episodes, every phase: a partnership game of two hands between random players; call-your-partner
# Rook with 6 players' two called cards in a game, and 4 players under the German discard, by heuristics.
EPISODES = per_game({
    "partnership": [({"episode": "game", "max_hands": 2}, "random", {p_rules.TRUMP, p_rules.PLAY}, p_rules.TRUMP)],
    "call_partner": [
        ({"players": 6, "episode": "game", "max_hands": 2}, None, {cp_rules.CALL, cp_rules.PLAY}, cp_rules.CALL),
        ({"players": 4, "nest_discard": "no_counters_unless_forced", "deck": "no_twos_to_fours"}, None,
         {cp_rules.CALL, cp_rules.PLAY}, cp_rules.CALL),
    ],
})


@pytest.mark.parametrize("game, flags, agent, phases_seen, seat_view_phase",
                         over_games(EPISODES, ids=lambda c: _id(c[0])))
def test_every_phase_draws_frames_a_video_can_take(game, flags, agent, phases_seen, seat_view_phase):
    """Every phase draws, the end of a hand and the next hand of a game included; every frame of the episode
    has one shape, even sides and uint8 (what gymnasium's RecordVideo and the video encoders need)."""
    e = rook_env.env(game=game, render_mode="rgb_array", **flags)
    e.reset(seed=6)
    n = len(e.possible_agents)
    agents = [make_agent(agent, seed=s) for s in range(n)] if agent else _heuristics(game, flags)
    phases, shapes = set(), set()
    while not (e.terminations["player_0"] or e.truncations["player_0"]):
        _step(e, agents)
        frame = e.render()
        phases.add(e.unwrapped.game.phase)
        shapes.add((frame.shape, frame.dtype.str))
        if e.unwrapped.game.phase == seat_view_phase:
            assert draw_seat_view(e, e.agent_selection).shape == SHAPE[game]
    assert shapes == {(SHAPE[game], "|u1")} and SHAPE[game][0] % 2 == 0 and SHAPE[game][1] % 2 == 0
    assert phases_seen <= phases


@pytest.mark.partnership
def test_record_video_through_single_agent_env(tmp_path):
    pytest.importorskip("moviepy")
    import gymnasium

    env = rook_env.SingleAgentRookEnv(make_agent("heuristic", seed=0), render_mode="rgb_array")
    env = gymnasium.wrappers.RecordVideo(env, str(tmp_path), episode_trigger=lambda i: True, disable_logger=True)
    for ep in range(2):
        obs, info = env.reset(seed=ep)
        done = False
        while not done:
            action = int(np.flatnonzero(info["action_mask"])[0])
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
    env.close()
    videos = sorted(p.name for p in tmp_path.glob("*.mp4"))
    assert len(videos) == 2 and all((tmp_path / v).stat().st_size > 1000 for v in videos)


@pytest.mark.partnership
def test_render_collection_through_single_agent_env():
    # Without moviepy: gymnasium's RenderCollection gathers the frames a video would hold.
    import gymnasium

    env = gymnasium.wrappers.RenderCollection(
        rook_env.SingleAgentRookEnv(make_agent("random", seed=0), render_mode="rgb_array")
    )
    obs, info = env.reset(seed=0)
    steps, done = 0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done, steps = terminated or truncated, steps + 1
    frames = env.render()
    assert len(frames) == steps + 1 and all(f.shape == (HEIGHT, WIDTH, 3) for f in frames)


# ------------------------------------------------------------------------------ Pillow and render modes
@pytest.mark.parametrize("game", GAMES)
def test_missing_pillow_names_the_extra(monkeypatch, game):
    monkeypatch.setitem(sys.modules, "PIL", None)  # makes `import PIL` fail
    for make in (rook_env.raw_env, rook_env.env):
        with pytest.raises(RenderDependencyError, match=r'pip install "rook_env\[render\]"') as info:
            make(game=game, render_mode="rgb_array")
        assert isinstance(info.value, ImportError)
    e = rook_env.raw_env(game=game, render_mode="ansi")  # the other modes need nothing
    e.reset(seed=0)
    assert isinstance(e.render(), str)
    e = rook_env.env(game=game, render_mode="ansi")
    e.reset(seed=0)
    assert isinstance(e.render(), str)


@pytest.mark.partnership
def test_environment_imports_without_pillow():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["PIL"] = None
        import rook_env, rook_env.core.drawing, rook_env.evaluation.replay
        e = rook_env.env()
        e.reset(seed=0)
        e.step(int(e.observe(e.agent_selection)["action_mask"].argmax()))
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


@pytest.mark.partnership
def test_without_pillow_rgb_array_is_not_listed_and_checkers_pass():
    """Without Pillow, ``rgb_array`` is not a listed render mode (gymnasium's check_env makes the
    environment in every listed mode), and asking for it still names the extra to install."""
    code = textwrap.dedent(
        """
        import sys, warnings
        sys.modules["PIL"] = None
        import gymnasium
        from gymnasium.utils.env_checker import check_env
        import rook_env
        from rook_env.single_agent import SINGLE_AGENT_ID
        assert "rgb_array" not in rook_env.raw_env.metadata["render_modes"]
        assert "rgb_array" not in rook_env.SingleAgentRookEnv.metadata["render_modes"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_env(gymnasium.make(SINGLE_AGENT_ID).unwrapped)
        try:
            rook_env.raw_env(render_mode="rgb_array")
        except ImportError as exc:
            assert "rook_env[render]" in str(exc), exc
        else:
            raise AssertionError("rgb_array without Pillow was accepted")
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "ok", out.stderr[-2000:]  # human mode prints tables


@pytest.mark.partnership
def test_with_pillow_rgb_array_is_listed():
    assert "rgb_array" in rook_env.raw_env.metadata["render_modes"]
    assert "rgb_array" in rook_env.SingleAgentRookEnv.metadata["render_modes"]


@pytest.mark.parametrize("game", GAMES)
def test_render_modes_are_the_same_in_every_game(game):
    raw = get_game(game).load("raw_env")
    assert "rgb_array" in raw.metadata["render_modes"]
    assert raw.metadata["render_modes"] == rook_env.raw_env.metadata["render_modes"]
    with pytest.raises(ValueError, match="rgb_array"):
        rook_env.env(game=game, render_mode="video")


# ------------------------------------------------------------------------------ the drawing, every game
def test_n_seats_around_the_table():
    # Five or six players: the drawing places any number of seats.
    for n in (4, 5, 6):
        centres = seat_centres(n)
        assert len({(round(x), round(y)) for x, y, _ in centres}) == n
        assert all(0 < x < WIDTH and 0 < y < HEIGHT for x, y, _ in centres)
    scene = Scene(
        layout=L, n_seats=6, bottom=0, title="six seats", phase="play", to_act=2, dealer=5,
        hands=[ids("R5 R6 R7"), 3, ids("Y5 Y6"), 2, 3, ids("Rook")], auction=[(0, "70"), (1, "pass")],
        bidder=0, contract=70, trump=1, trick=[(0, L.parse_card("R14")), (1, L.parse_card("B5"))],
        last_trick=None, last_winner=None, nest=None, nest_label="nest", discards=None,
        nest_has_counters=False, counters=[0, 0], tricks_won=[0, 0], scores=[0, 0], tricks_left=9,
    )
    img = draw_scene(scene)
    assert img.shape == (HEIGHT, WIDTH, 3) and img.dtype == np.uint8


def test_every_registered_game_has_table_views():
    """Each game of the registry names its table views (render_scene): text, spectator and seat scenes."""
    from rook_env.core.render import TableParts, table_parts
    from rook_env.games import game_names

    for game in game_names():
        parts = get_game(game).load("render_scene")
        assert isinstance(parts, TableParts)
        e = rook_env.raw_env(game=game, render_mode="rgb_array")
        e.reset(seed=1)
        assert table_parts(e) is parts and table_parts(e.game) is parts
        assert parts.text(e.game).count(" hand: ") == len(e.possible_agents)  # the spectator sees every hand
        assert parts.text(e.game, seat=0).count(" hand: ") == 1
        assert np.array_equal(draw_table(e.game), e.render())
        assert draw_seat_view(e, "player_0").shape == e.render().shape
    with pytest.raises(TypeError, match="no registered game"):
        table_parts(object())


def test_png_command_line(tmp_path, capsys):
    """python -m rook_env.cli.render_image: a PNG of the table, the spectator's or one seat's, any game."""
    from PIL import Image

    from rook_env.cli.render_image import main

    out = tmp_path / "t.png"
    assert main(["--seed", "3", "--decisions", "5", "--out", str(out)]) == 0
    assert Image.open(out).size == (WIDTH, HEIGHT)
    cp = tmp_path / "cp.png"
    assert main(["--game", "call_partner", "--players", "6", "--decisions", "8", "--seat", "5", "--out", str(cp)]) == 0
    assert Image.open(cp).size == (1344, 768) and f"wrote {cp}" in capsys.readouterr().out
    for argv, message in ((["--seat", "4"], "--seat must be a seat 0..3"),
                          (["--players", "5"], "--players is for --game call_partner")):
        with pytest.raises(SystemExit):
            main([*argv, "--out", str(out)])
        assert message in capsys.readouterr().err


# ------------------------------------------------------------------------------ the partnership game
@pytest.mark.partnership
def test_a_no_trump_call_is_drawn():
    """With extended trump calls, a no-trump contract has no colour swatch: the call is written out."""
    env = rook_env.raw_env(render_mode="rgb_array", trump_calls="extended")
    env.reset(seed=0)
    g = env.unwrapped.game
    while g.phase != 3:  # play the auction, the discard and the call: bid, then "no trump high"
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = np.flatnonzero(mask)
        no_trump_high = env.unwrapped.layout.TRUMP0 + 8
        env.step(int(no_trump_high if no_trump_high in legal else legal[0]))
    assert g.trump == -1 and PARTNERSHIP.spectator(g).call == "no trump high"
    img = env.render()
    assert img.shape == (700, 1000, 3)


@pytest.mark.partnership
def test_a_table_without_a_nest_draws_no_nest_backs():
    """nest='off': a seat's view shows as many nest backs as there are nest cards, none (it drew five)."""
    e = rook_env.raw_env(render_mode="rgb_array", nest="off", rook_bird="off")
    e.reset(seed=2)
    scene = PARTNERSHIP.seat_view(e.observe("player_1"), 1, e.config)
    assert scene.nest == 0 and PARTNERSHIP.spectator(e.game).nest == []
    default = rook_env.raw_env()
    default.reset(seed=2)
    assert PARTNERSHIP.seat_view(default.observe("player_1"), 1, default.config).nest == 5


# ------------------------------------------------------------------------------ call-your-partner Rook
@pytest.mark.call_partner
def test_partners_as_each_viewer_may_know_them():
    e = _deal("call_partner")
    step_text(e, *DEALS["call_partner"]["script"])
    view = lambda s: CALL_PARTNER.seat_view(e.observe(f"player_{s}"), s, e.config)  # noqa: E731
    assert e.game.partners == (2,)
    assert view(2).partners == [2] and "me" in view(2).partners_text  # the holder knows from the call
    for s in (0, 1, 3, 4):
        assert view(s).partners == [] and "unknown" in view(s).partners_text
    spec = CALL_PARTNER.spectator(e.game)
    assert spec.secret_partners == [2] and spec.partners == [] and "secret" in spec.partners_text
    step_text(e, "R13", "Y13", "G14")  # player_2 plays the called card: now everyone knows
    for s in range(5):
        assert view(s).partners == [2]
    spec = CALL_PARTNER.spectator(e.game)
    assert spec.partners == [2] and spec.secret_partners == [] and spec.partners_text == "P2"


@pytest.mark.call_partner
def test_called_card_in_the_nest_means_alone_for_the_spectator():
    e = _deal("call_partner")
    step_text(e, *DEALS["call_partner"]["script"][:14])
    step_text(e, "B14")  # the bidder calls one of its own discards
    assert e.game.phase == cp_rules.PLAY and e.game.partners == ()
    assert "alone" in CALL_PARTNER.spectator(e.game).partners_text
    assert "unknown" in CALL_PARTNER.seat_view(e.observe("player_1"), 1, e.config).partners_text
    assert draw_table(e.game).shape == SHAPE["call_partner"]


@pytest.mark.call_partner
def test_six_players_show_two_called_cards():
    e = rook_env.raw_env(game="call_partner", players=6)
    e.reset(seed=4)
    agents = _heuristics("call_partner", {"players": 6})
    while e.game.phase != cp_rules.PLAY:
        _step(e, agents)
    assert len(CALL_PARTNER.spectator(e.game).called) == 2
    assert len(CALL_PARTNER.seat_view(e.observe("player_1"), 1, e.config).called) == 2
    assert draw_scene(CALL_PARTNER.spectator(e.game)).shape == SHAPE["call_partner"]
