"""The optional dependencies: the one way the package imports them when it needs them, with an error that says
which extra to install.

The base install is numpy, gymnasium and pettingzoo; everything else comes with an extra of pyproject.toml
(:data:`EXTRAS`). A module that needs an optional dependency at its top (the networks need torch, the RLlib recipes
ray) is itself loaded through :func:`load` by whoever offers it without needing it (``make_agent("ppo")``); a
function that needs one for a moment (a progress bar, a plot) takes it from :func:`require`. Either way a missing
dependency raises :class:`MissingDependency` (a ``ModuleNotFoundError``) naming the extra::

    plt = require("matplotlib.pyplot")  # or: matplotlib is not installed (needed for plots): pip install ...[tools]
    PPOAgent = load("rook_env.agents.learned.agent:PPOAgent", needs=("torch",))  # or: torch is not ... [train]

numba is the batched engines' (:mod:`rook_env.core.kernels` compiles with it where :func:`available` finds it).
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

__all__ = ["EXTRAS", "MissingDependency", "available", "install_hint", "load", "require"]

# each optional dependency (a top-level module, or a submodule with an extra of its own): (what pip installs, the
# extra that installs it, what in the package needs it)
EXTRAS: dict[str, tuple[str, str, str]] = {
    "torch": ("torch", "train", "the trained networks and training"),
    "ray": ("ray", "ray", "train.py on a Ray cluster"),
    "ray.rllib": ("ray[rllib]", "rllib", "the RLlib recipes"),
    "numba": ("numba", "fast", "the compiled kernels"),
    "starlette": ("starlette", "serve", "the browser app"),
    "uvicorn": ("uvicorn", "serve", "the browser app's server"),
    "PIL": ("pillow", "render", "drawn tables"),
    "rich": ("rich", "tools", "tables in colour"),
    "tqdm": ("tqdm", "tools", "progress bars"),
    "matplotlib": ("matplotlib", "tools", "plots"),
}


class MissingDependency(ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install "rook_env[extra]"`` (``-e ".[extra]"`` in a checkout)."""
    return f'pip install "rook_env[{extra}]" (in a checkout: pip install -e ".[{extra}]")'


def _entry(module: str) -> tuple[str, str, str]:
    """:data:`EXTRAS`'s entry of ``module`` or of the nearest package above it that has one."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        entry = EXTRAS.get(".".join(parts[:n]))
        if entry is not None:
            return entry
    raise ValueError(f"{module!r} is not an optional dependency of rook_env; those are: {', '.join(EXTRAS)}")


def available(module: str) -> bool:
    """Whether the optional dependency ``module`` (``"numba"``, ``"rich"``) is installed, without importing it."""
    _entry(module)
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is not installed
        return False


def require(module: str, what: str | None = None) -> ModuleType:
    """The optional dependency ``module`` (``"torch"``, ``"matplotlib.pyplot"``), imported now; raises
    :class:`MissingDependency` naming the extra that installs it when it (or a module it needs) is missing.
    ``what``: what it is needed for, for the message (default: :data:`EXTRAS`'s words)."""
    dist, extra, needs_it = _entry(module)
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "rook_env":
            raise  # the package's own module: a bug, not a missing install
        missing = "" if exc.name == module else f" ({exc.name!r} is missing)"
        raise MissingDependency(f"{dist} is not installed{missing} (needed for {what or needs_it}): "
                                f"{install_hint(extra)}", name=exc.name) from exc


def load(ref: str, needs: tuple[str, ...], what: str | None = None) -> Any:
    """The object ``"rook_env.module:attribute"`` names: a part of the package whose module imports the optional
    dependencies ``needs`` at its top, imported on first use. A missing dependency raises
    :class:`MissingDependency` naming its extra (``what``: what it is needed for, for the message; default ``ref``)."""
    module, _, attr = ref.partition(":")
    if not module.startswith("rook_env.") or not attr:
        raise ValueError(f"a reference must name a module of this package and an attribute "
                         f"('package.module:attribute'), got {ref!r}")
    for dependency in needs:
        require(dependency, what or ref)
    obj: Any = importlib.import_module(module)
    for name in attr.split("."):
        obj = getattr(obj, name)
    return obj
