"""What ``pip install`` puts on a user's machine: the wheel claims only ``rook_env`` (the repository's
every package found below ``rook_env``; evaluate.py, play.py and train.py stay in the checkout),
ships the files the shipped agents load (no other network), and declares the ``rook-eval`` / ``rook-play`` console scripts."""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile

import pytest
import setuptools
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = ("pyproject.toml", "README.md", "rook_env")


def _offline_wheels() -> bool:
    """setuptools builds wheels without downloading anything: it has bdist_wheel (>= 70.1) or the
    ``wheel`` package is installed (the [dev] extra)."""
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


pytestmark = pytest.mark.slow  # builds a wheel: a few seconds


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    if not _offline_wheels():
        pytest.skip('building a wheel offline needs the `wheel` package: pip install -e ".[dev]"')
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:  # a clean copy: no build/ or egg-info left in the checkout
        path = os.path.join(ROOT, name)
        if os.path.isdir(path):
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(path, src / name)
    out = tmp_path_factory.mktemp("wheel")
    # the PEP 517 hook pip calls, run in the copy (pip itself adds ~20 s of start-up on a loaded machine)
    proc = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_wheel({str(out)!r})"],
        capture_output=True, text=True, timeout=300, cwd=src,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob("rook_env-*.whl"))
    assert len(wheels) == 1, os.listdir(out)
    with zipfile.ZipFile(wheels[0]) as z:
        yield z


@pytest.fixture(scope="module")
def wheel_names(wheel) -> list[str]:
    return wheel.namelist()


def test_wheel_claims_only_rook_env(wheel_names):
    top = {name.split("/")[0] for name in wheel_names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert len(dist_info) == 1 and dist_info.pop().startswith("rook_env-")
    assert top - {t for t in top if t.endswith(".dist-info")} == {"rook_env"}, sorted(top)


def test_wheel_holds_the_agents_the_cli_and_the_checkpoint(wheel_names):
    names = set(wheel_names)
    for needed in ("rook_env/agents/registry.py", "rook_env/agents/heuristic/agent.py", "rook_env/agents/learned/agent.py",
                   "rook_env/agents/search/worlds.py",
                   "rook_env/agents/checkpoints/ppo_default.pt", "rook_env/games/partnership/match.py",
                   "rook_env/cli/evaluate.py", "rook_env/cli/play.py", "rook_env/core/loop.py",
                   "rook_env/serve/pages/showdown.js", "rook_env/serve/pages/game.html"):  # the browser app's pages
        assert needed in names, needed
    assert not any(n.startswith("tests/") or n in ("evaluate.py", "play.py", "train.py") for n in names)


def test_wheel_ships_only_the_files_the_shipped_agents_load(wheel, wheel_names):
    """The checkpoints in the wheel are each game's shipped network ("ppo"), the network "best" bids with and the
    model of the hidden cards it draws worlds from, each network with its record: no earlier or league network."""
    from rook_env.agents.checkpoints import BEST_AUCTION, HAND_MODEL
    from rook_env.games import game_names, get_game

    folder = "rook_env/agents/checkpoints/"
    networks = {f for g in game_names() for f in get_game(g).networks.values()} | {os.path.basename(BEST_AUCTION)}
    needed = networks | {n[:-3] + ".json" for n in networks} | {os.path.basename(HAND_MODEL), "__init__.py"}
    needed |= {os.path.basename(HAND_MODEL)[:-4] + ".json"}  # the hidden-card model's record
    shipped = {n[len(folder):] for n in wheel_names if n.startswith(folder)}
    assert shipped == needed
    size = sum(wheel.getinfo(folder + n).file_size for n in shipped)
    assert size < 10e6, f"{size / 1e6:.1f} MB of checkpoints"
    for name in networks | {os.path.basename(HAND_MODEL)}:  # and they are the checkout's files, whole
        with open(os.path.join(ROOT, folder, name), "rb") as f:
            assert wheel.read(folder + name) == f.read(), name


def test_wheel_declares_the_console_scripts(wheel, wheel_names):
    entry = next(n for n in wheel_names if n.endswith(".dist-info/entry_points.txt"))
    text = wheel.read(entry).decode()
    assert "[console_scripts]" in text
    assert "rook-eval = rook_env.cli.evaluate:main" in text and "rook-play = rook_env.cli.play:main" in text


def test_console_scripts_point_at_the_library_mains():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts == {"rook-eval": "rook_env.cli.evaluate:main", "rook-play": "rook_env.cli.play:main",
                       "rook-serve": "rook_env.serve.cli:main", "rook-train": "rook_env.training.cli:main"}
    for target in scripts.values():
        module, func = target.split(":")
        assert callable(getattr(importlib.import_module(module), func))


def test_version_is_the_projects():
    """``rook_env.__version__`` is the version pyproject.toml declares (one number, said twice: keep them equal)."""
    import rook_env

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        declared = tomllib.load(f)["project"]["version"]
    assert rook_env.__version__ == declared
