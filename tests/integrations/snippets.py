"""The documentation's library recipes (docs/rl_libraries.md), run as they are written there.

A recipe in README.md or a page under docs/ is a fenced ``python`` block right after an HTML comment
``<!-- recipe: NAME -->``; :func:`run_recipe` executes that exact text and returns its namespace,
so the documentation and the tests cannot drift apart (tests/test_docs.py runs every recipe too).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RECIPE = re.compile(r"^<!-- recipe: ([\w-]+) -->\n```python\n(.*?)^```", re.S | re.M)  # marker line, then the block


def all_recipes() -> list[tuple[str, Path, str]]:
    """Every recipe of README.md and docs/, in page order: ``(name, page, source)``."""
    return [(m.group(1), page, m.group(2)) for page in PAGES for m in RECIPE.finditer(page.read_text(encoding="utf-8"))]


def recipe(name: str) -> str:
    """The source of the recipe ``name`` (raises if it is missing)."""
    for found, _, source in all_recipes():
        if found == name:
            return source
    raise LookupError(f"no page has a recipe {name!r} (a ```python block after <!-- recipe: {name} -->)")


def run_recipe(name: str, **namespace) -> dict:
    """Execute the recipe ``name`` in a fresh namespace (seeded with ``namespace``); return it."""
    ns = {"__name__": f"readme_recipe_{name}", **namespace}
    exec(compile(recipe(name), f"recipe:{name}", "exec"), ns)
    return ns
