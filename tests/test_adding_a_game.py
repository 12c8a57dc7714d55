"""docs/adding_a_game.md: its example game module works as written. The module is cut from the
page, imported in a fresh interpreter (the registry is process-wide), registered, and played
through the package's doors with random legal actions."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

PLAY = r"""
import random, sys, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
import cutthroat_example as game
import rook_env
from rook_env.games import game_names, get_game

assert "cutthroat" in game_names() and get_game("cutthroat").flag_names == game.FLAG_NAMES
for door in (rook_env.raw_env, rook_env.env):
    for seed in range(8):
        e = door(game="cutthroat", episode="game", max_hands=3, nest_discard=random.Random(seed).choice(
            ["any", "no_counters_unless_forced"]))
        assert type(e).__name__ in ("CutthroatEnv", "CheckedCutthroatEnv") and len(e.possible_agents) == 3
        e.reset(seed=seed)
        rng, total, hands = random.Random(seed), np.zeros(3), 0
        while e.agents:
            a = e.agent_selection
            if e.terminations[a] or e.truncations[a]:
                e.step(None)
                continue
            obs = e.observe(a)
            assert obs["observation"].shape == e.observation_space(a)["observation"].shape
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            st = e.unwrapped.game
            if st.hand_result is not None and st.hands_played > hands:
                hands = st.hands_played
                assert sum(st.hand_result["points"]) == st.L.total_points  # 120 points a hand
        assert 1 <= hands <= 3
        assert e.state_space.shape[0] == e.obs_layout.size + 4 * e.layout.n_cards
try:
    rook_env.env(game="cutthroat", players=4)
except ValueError as exc:
    assert "players=4 is not allowed for game='cutthroat'" in str(exc), exc
else:
    raise AssertionError("players=4 accepted")
try:
    rook_env.raw_env(game="cutthroat", rook_rank="low")
except ValueError as exc:
    assert "rook_rank for game='cutthroat'" in str(exc) and "game='partnership'" in str(exc), exc
else:
    raise AssertionError("rook_rank accepted")
print("ok")
"""


def test_the_example_game_of_the_docs_plays_through_every_door(tmp_path):
    page = (ROOT / "docs" / "adding_a_game.md").read_text()
    module = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    assert "register_game(GameSpec(" in module
    (tmp_path / "cutthroat_example.py").write_text(module)
    out = subprocess.run([sys.executable, "-c", PLAY, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
