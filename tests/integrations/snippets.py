"""README's library recipes, run as they are written there.

A recipe in README.md is a fenced ``python`` block right after an HTML comment
``<!-- recipe: NAME -->``; :func:`run_recipe` executes that exact text and returns its namespace,
so the README and the tests cannot drift apart.
"""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def recipe(name: str) -> str:
    """The source of README's recipe ``name`` (raises if it is missing)."""
    text = README.read_text(encoding="utf-8")
    m = re.search(rf"<!-- recipe: {re.escape(name)} -->\s*```python\n(.*?)```", text, re.S)
    if m is None:
        raise LookupError(f"README.md has no recipe {name!r} (a ```python block after <!-- recipe: {name} -->)")
    return m.group(1)


def run_recipe(name: str, **namespace) -> dict:
    """Execute README's recipe ``name`` in a fresh namespace (seeded with ``namespace``); return it."""
    ns = {"__name__": f"readme_recipe_{name}", **namespace}
    exec(compile(recipe(name), f"README.md:recipe:{name}", "exec"), ns)
    return ns
