"""Pieces shared by the command lines: ``--flag NAME=VALUE`` parsing, output paths."""

from __future__ import annotations

import os
import re
from typing import Any, Iterable

from rook_env.agents.registry import game_config

__all__ = ["parse_flags", "prepare_out_path"]


def parse_flags(items: Iterable[str] | None, game: str = "partnership") -> dict[str, Any]:
    """``["deck=full", "target_score=500"]`` -> ``{"deck": "full", "target_score": 500}`` (validated
    against the rules of ``game`` (``"partnership"`` or ``"call_partner"``): a bad name or value
    raises ValueError naming it). The result holds the rule flags only, not ``game``."""
    flags: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"--flag {item!r}: expected NAME=VALUE, e.g. --flag deck=full")
        k, v = (s.strip() for s in item.split("=", 1))
        if not k or not v:
            raise ValueError(f"--flag {item!r}: expected NAME=VALUE, e.g. --flag deck=full")
        if k == "game":
            raise ValueError(f"--flag {item!r}: game is not a rule flag (evaluate.py and play.py take --game)")
        flags[k] = int(v) if re.fullmatch(r"[+-]?\d+", v) else v
    game_config({**flags, "game": game})
    return flags


def prepare_out_path(option: str, path: str | None) -> None:
    """Create the folder of an output file (``runs/eval/x.json``); raises ValueError when ``path`` is
    a folder or its folder cannot be made."""
    if not path:
        return
    if os.path.isdir(path):
        raise ValueError(f"{option} {path}: is a directory; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot create the folder {folder} ({exc.strerror})") from exc
