"""The documentation runs: every recipe in README.md and docs/ executes, and the site builds strictly.

**The recipe marker.** A code block is a recipe when a fenced ``python`` block follows the HTML comment
``<!-- recipe: NAME -->`` (NAME: letters, digits, ``_`` and ``-``; unique over README.md and docs/), e.g.::

    <!-- recipe: env-loop -->
    ```python
    import rook_env
    ...
    ```

The marker is a line of its own, the fence on the very next line. The comment does not show on GitHub or on
the site. Each recipe runs as written, in its own Python process
started from the repository root (so the checkout's ``rook_env`` is the one imported), with a time limit:
recipes are short (seconds). A recipe that imports a library that is not installed (``sb3_contrib``, ``ray``,
...) is skipped with the reason; the RL-library recipes run in their own environments through
tests/integrations/ (``.ci/run``). The extraction itself lives in tests/integrations/snippets.py, so both
suites read the same blocks.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from integrations.snippets import PAGES, ROOT, all_recipes

RECIPES = all_recipes()
RECIPE_TIMEOUT_S = 120  # generous for a loaded 2-core machine; a recipe should take seconds
README_MAX_LINES = 200
# docs that say what is: the current figures and the reference stay short; the experiments live in docs/log/
PAGE_MAX_LINES = {"docs/results.md": 300, "docs/training.md": 350}
RESULTS_TABLE_MAX_ROWS = 10
RESULTS_CELL_MAX_CHARS = 160
RELEASE = re.compile(r"\b0\.\d+\.\d+\b")
# The extra that brings each optional library a recipe may import (pyproject.toml), for the skip reason.
EXTRA_OF = {"sb3_contrib": "sb3", "stable_baselines3": "sb3", "tianshou": "tianshou", "torchrl": "torchrl",
            "ray": "rllib", "ray[rllib]": "rllib", "agilerl": "agilerl", "torch": "train", "PIL": "render"}


def _top_level_imports(source: str) -> list[str]:
    """The top-level package of every module the recipe imports (absolute imports only)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return list(dict.fromkeys(names))


def test_recipes_are_found_and_named_once():
    names = [name for name, _, _ in RECIPES]
    assert len(names) >= 10, names  # the pages carry their examples as recipes
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert any(page.name == "README.md" for _, page, _ in RECIPES), "README's example must be a recipe"


def test_every_marker_is_followed_by_a_python_block():
    """A marker with anything but a ```python block after it would silently test nothing."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        markers = re.findall(r"^<!-- recipe: ([\w-]+) -->", text, re.M)
        found = [name for name, p, _ in RECIPES if p == page]
        assert markers == found, f"{page.relative_to(ROOT)}: markers {markers}, recipes {found}"


@pytest.mark.parametrize("name, page, source", RECIPES, ids=[name for name, _, _ in RECIPES])
def test_recipe_runs(name: str, page: Path, source: str):
    missing = [mod for mod in _top_level_imports(source) if importlib.util.find_spec(mod) is None]
    if "rook_env.rllib" in source and importlib.util.find_spec("tree") is None:
        missing.append("ray[rllib]")  # ray without RLlib's own dependencies (dm-tree, ...)
    if missing:
        extras = sorted({EXTRA_OF[mod] for mod in missing if mod in EXTRA_OF})
        hint = f' (pip install -e ".[{",".join(extras)}]")' if extras else ""
        pytest.skip(f"recipe {name!r} ({page.name}) needs {', '.join(missing)}, not installed here{hint}")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", source], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=RECIPE_TIMEOUT_S)
    assert proc.returncode == 0, f"recipe {name!r} in {page.relative_to(ROOT)} failed:\n{proc.stdout}\n{proc.stderr}"


def test_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"


def _table_rows(section: str) -> list[list[str]]:
    """The body rows of the first Markdown table in ``section``, as lists of stripped cells."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines[2:]]


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"README.md has no section {title!r}"
    return match.group(1)


@pytest.mark.parametrize("page, limit", sorted(PAGE_MAX_LINES.items()))
def test_reference_pages_stay_short(page: str, limit: int):
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    assert len(lines) <= limit, f"{page} has {len(lines)} lines (at most {limit}; experiments go to docs/log/)"


def test_readme_results_table_is_short_and_current():
    rows = _table_rows(_readme_section("Results"))
    assert 0 < len(rows) <= RESULTS_TABLE_MAX_ROWS, f"{len(rows)} rows (at most {RESULTS_TABLE_MAX_ROWS})"
    for row in rows:
        for cell in row:
            assert len(cell) <= RESULTS_CELL_MAX_CHARS, f"a cell of {len(cell)} characters: {cell!r}"
            assert not RELEASE.search(cell), f"a release number in the results table: {cell!r}"
            assert "not shipped" not in cell, f"an experiment in the results table (it belongs in docs/log/): {cell!r}"


def test_readme_sets_up_once_then_tests_then_runs_the_main_job():
    """The set-up block: one install, then the test command, then the main job, each with its time."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- --8<-- \[start:setup\] -->\n```bash\n(.*?)```", text, re.S).group(1)
    commands, comments, comment = [], [], ""
    for line in block.splitlines():
        if line.startswith("#"):
            comment += line + " "
        elif line.strip():
            commands.append(line)
            comments.append(comment)  # the comment lines just above the command
            comment = ""
    assert [c.split()[0:3] for c in commands] == [["pip", "install", "torch==2.13.0"], ["python", "-m", "pytest"],
                                                 ["python", "train.py", "--config"]], commands
    for command, comment in zip(commands, comments):
        assert re.search(r"\d+(\.\d+)? (seconds|minutes)", comment), f"{command!r} is not given its time"


def test_the_changelog_is_not_named_by_a_version():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if "(docs/changelog.md)" in line)
    assert not RELEASE.search(row), row


def test_log_entries_are_dated_and_name_their_commit():
    """Each entry of docs/log/ is dated and names the commit that recorded it (one that exists, in a clone)."""
    pages = sorted((ROOT / "docs" / "log").glob("*.md"))
    assert len(pages) >= 2
    have_git = (ROOT / ".git").exists() and shutil.which("git")
    for page in pages:
        entries = re.split(r"^## ", page.read_text(encoding="utf-8"), flags=re.M)[1:]
        if page.name == "index.md":
            continue
        assert entries, f"{page.name} has no entries"
        for entry in entries:
            assert re.match(r"\d{4}-\d{2}-\d{2}", entry), f"{page.name}: an entry without a date: {entry[:60]!r}"
            commit = re.search(r"Recorded at commit `([0-9a-f]{7,40})`", entry)
            assert commit, f"{page.name}: the entry {entry[:60]!r} names no commit"
            if have_git:
                proc = subprocess.run(["git", "cat-file", "-e", commit.group(1) + "^{commit}"], cwd=ROOT,
                                      capture_output=True)
                if proc.returncode != 0 and (ROOT / ".git" / "shallow").exists():
                    continue  # a shallow clone lacks the history
                assert proc.returncode == 0, f"{page.name}: commit {commit.group(1)} is not in this repository"


def test_readme_links_to_docs_pages_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#[^)]*)?\)", text)
    assert links, "README links to the documentation pages"
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, missing


@pytest.mark.skipif(shutil.which("mkdocs") is None and importlib.util.find_spec("mkdocs") is None,
                    reason='mkdocs is not installed (pip install -e ".[docs]")')
def test_site_builds_strictly(tmp_path):
    """What CI runs: broken links, pages missing from the nav and docstrings mkdocstrings cannot render fail."""
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "api" / "environments" / "index.html").is_file()


def test_changelog_leads_with_the_package_version():
    """The version in pyproject.toml has its entry at the top of the changelog page."""
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    entries = re.findall(r"^## (\S+)", (ROOT / "docs" / "changelog.md").read_text(encoding="utf-8"), re.M)
    assert entries and entries[0] == version, f"pyproject.toml says {version}; the changelog's first entry is {entries[:1]}"
