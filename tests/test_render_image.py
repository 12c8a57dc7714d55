"""The drawn table (render_mode="rgb_array"): shape and type, states draw differently, a seat's view
holds nothing hidden from that seat, PettingZoo's render_test, gymnasium's RecordVideo, Pillow missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("PIL")

import rook_env  # noqa: E402
from helpers import L, complete_deal, ids, step_text  # noqa: E402
from pettingzoo.test import render_test  # noqa: E402
from rook_env.agents import make_agent  # noqa: E402
from rook_env.core.render import draw_seat_view  # noqa: E402
from rook_env.core.drawing import HEIGHT, WIDTH, RenderDependencyError, Scene, draw_scene, seat_centres  # noqa: E402


def _play(e, n: int, seed: int = 0) -> None:
    agents = [make_agent("heuristic", seed=seed + i) for i in range(4)]
    for _ in range(n):
        e.step(agents[e.unwrapped.game.current].act(e.observe(e.agent_selection)))


def test_rgb_array_shape_and_dtype():
    e = rook_env.env(render_mode="rgb_array")
    assert "rgb_array" in e.metadata["render_modes"] and e.metadata["render_fps"] > 0
    e.reset(seed=1)
    img = e.render()
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == (HEIGHT, WIDTH, 3)
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 20  # a drawing, not a blank canvas


def test_different_states_draw_differently():
    e = rook_env.raw_env(render_mode="rgb_array")
    e.reset(seed=2)
    frames = [e.render()]
    for _ in range(30):
        _play(e, 1)
        frames.append(e.render())
    for a, b in zip(frames, frames[1:]):
        assert not np.array_equal(a, b)
    e.reset(seed=3)
    assert not np.array_equal(e.render(), frames[0])  # another deal


def test_render_is_deterministic():
    e = rook_env.raw_env(render_mode="rgb_array")
    e.reset(seed=4)
    assert np.array_equal(e.render(), e.render())


# A fixed deal (dealer 3): player_0 bids 70, the others pass; player_0 lays down five red cards
# of its own (keeping the nest), names red, and the first trick is R14 R5 B14 B13.
FIXED = {0: "R14 R13 R12 R11 R10 R9 R8 R7 R6", 1: "R5 G5 Rook", 2: "B14", 3: "B13 Y5 B12"}
NEST = "G14 G13 G12 G11 G10"
SCRIPT = ["bid 70", "pass", "pass", "pass", "R6", "R7", "R8", "R9", "R10", "trump red", "R14", "R5", "B14", "B13"]


def _swapped(a: str, b: str):
    """The fixed deal with cards ``a`` and ``b`` exchanged between their holders."""
    hands, nest = complete_deal(FIXED, NEST)
    ca, cb = L.parse_card(a), L.parse_card(b)
    swap = {ca: cb, cb: ca}
    return [[swap.get(c, c) for c in h] for h in hands], [swap.get(c, c) for c in nest]


def _seat_frames(hands, nest) -> list[list[np.ndarray]]:
    e = rook_env.raw_env()
    e.reset(seed=0, options={"hands": hands, "nest": nest, "dealer": 3})
    frames = []
    for action in [None, *SCRIPT]:
        if action is not None:
            step_text(e, action)
        frames.append([draw_seat_view(e, f"player_{s}") for s in range(4)])
    return frames


@pytest.mark.parametrize(
    "a, b, blind, seeing",
    [
        ("G5", "Y5", (0, 2), (1, 3)),  # between player_1's and player_3's hands
        ("G14", "B12", (1, 2), (0, 3)),  # between the nest (player_0 takes it) and player_3's hand
    ],
)
def test_seat_view_does_not_change_when_only_hidden_cards_change(a, b, blind, seeing):
    base = _seat_frames(*complete_deal(FIXED, NEST))
    swapped = _seat_frames(*_swapped(a, b))
    for step, (x, y) in enumerate(zip(base, swapped)):
        for s in blind:
            assert np.array_equal(x[s], y[s]), f"player_{s}'s view changed at step {step}: a hidden card leaked"
    # The swap is visible to the seats that hold the cards: the test can see a difference.
    for s in seeing:
        assert not np.array_equal(base[-1][s], swapped[-1][s])


def test_seat_view_differs_from_spectator_view():
    e = rook_env.raw_env(render_mode="rgb_array")
    e.reset(seed=5)
    assert not np.array_equal(e.render(), draw_seat_view(e, "player_0"))
    assert not np.array_equal(draw_seat_view(e, "player_0"), draw_seat_view(e, "player_1"))


def test_pettingzoo_render_test_rgb_array():
    def is_table(img):
        return img.shape == (HEIGHT, WIDTH, 3) and img.dtype == np.uint8

    render_test(lambda render_mode=None: rook_env.env(render_mode=render_mode), custom_tests={"rgb_array": is_table})


def test_draw_table_whole_hand_and_game_episode():
    # Every phase draws, including the end of a hand and the next hand of a game.
    e = rook_env.raw_env(render_mode="rgb_array", episode="game", max_hands=2)
    e.reset(seed=6)
    agents = [make_agent("random", seed=i) for i in range(4)]
    while not (e.terminations["player_0"] or e.truncations["player_0"]):
        e.step(agents[e.game.current].act(e.observe(e.agent_selection)))
        assert e.render().shape == (HEIGHT, WIDTH, 3)


def test_n_seats_around_the_table():
    # Later variants seat five or six players: the drawing places any number of seats.
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


def test_missing_pillow_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # makes `import PIL` fail
    with pytest.raises(RenderDependencyError, match=r'pip install "rook_env\[render\]"') as info:
        rook_env.raw_env(render_mode="rgb_array")
    assert isinstance(info.value, ImportError)
    e = rook_env.raw_env(render_mode="ansi")  # the other modes need nothing
    e.reset(seed=0)
    assert isinstance(e.render(), str)


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


def test_with_pillow_rgb_array_is_listed():
    assert "rgb_array" in rook_env.raw_env.metadata["render_modes"]
    assert "rgb_array" in rook_env.SingleAgentRookEnv.metadata["render_modes"]


def test_a_no_trump_call_is_drawn():
    """With extended trump calls, a no-trump contract has no colour swatch: the call is written out."""
    import numpy as np

    from rook_env.games.partnership.render import PARTNERSHIP

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


def test_every_registered_game_has_table_views():
    """Each game of the registry names its table views (render_scene): text, spectator and seat scenes."""
    from rook_env.games import game_names, get_game
    from rook_env.core.render import TableParts, draw_table, table_parts

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


def test_a_table_without_a_nest_draws_no_nest_backs():
    """nest='off': a seat's view shows as many nest backs as there are nest cards, none (it drew five)."""
    from rook_env.games.partnership.render import PARTNERSHIP

    e = rook_env.raw_env(render_mode="rgb_array", nest="off", rook_bird="off")
    e.reset(seed=2)
    scene = PARTNERSHIP.seat_view(e.observe("player_1"), 1, e.config)
    assert scene.nest == 0 and PARTNERSHIP.spectator(e.game).nest == []
    default = rook_env.raw_env()
    default.reset(seed=2)
    assert PARTNERSHIP.seat_view(default.observe("player_1"), 1, default.config).nest == 5
