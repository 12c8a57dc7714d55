"""Pieces shared by the command lines: ``--flag NAME=VALUE`` parsing, output paths."""

from __future__ import annotations

import os
import re
from typing import Any, Iterable

from rook_env.config import make_config

__all__ = ["parse_flags", "prepare_out_path"]


def parse_flags(items: Iterable[str] | None) -> dict[str, Any]:
    """``["deck=full", "target_score=500"]`` -> ``{"deck": "full", "target_score": 500}`` (validated
    by :func:`rook_env.config.make_config`: a bad name or value raises ValueError naming it)."""
    flags: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"--flag {item!r}: expected NAME=VALUE, e.g. --flag deck=full")
        k, v = (s.strip() for s in item.split("=", 1))
        if not k or not v:
            raise ValueError(f"--flag {item!r}: expected NAME=VALUE, e.g. --flag deck=full")
        flags[k] = int(v) if re.fullmatch(r"[+-]?\d+", v) else v
    make_config(**flags)
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
