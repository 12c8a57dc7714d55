"""Pieces shared by the command lines: ``--game`` / ``--players`` / ``--flag NAME=VALUE``, output paths.

The games a command line offers are the game registry's (:mod:`rook_env.games`)."""

from __future__ import annotations

import argparse
import os
import re
from typing import Any, Iterable

from rook_env.agents.registry import game_config
from rook_env.games import DEFAULT_GAME, GameSpec, game_names, get_game

__all__ = ["add_game_options", "game_flags", "game_part", "parse_flags", "prepare_out_path"]

_WORDS = {4: "four", 5: "five", 6: "six"}  # "the partnership game has four players"


def add_game_options(p: argparse.ArgumentParser, game_help: str | None = None) -> None:
    """``--game`` (the registry's games) and ``--players`` (for games played at several table sizes)."""
    games = [get_game(g) for g in game_names()]
    p.add_argument("--game", choices=[g.name for g in games], default=DEFAULT_GAME,
                   help=game_help or "; ".join(f"{g.name}: {g.title}" for g in games) + f" (default {DEFAULT_GAME})")
    sized = [g for g in games if g.takes_players]
    p.add_argument("--players", type=int, default=None,
                   help="; ".join(f"--game {g.name}: {_either(sorted(g.players))} players (default {g.default_players})"
                                  for g in sized))


def _either(values: list[int]) -> str:
    """``4, 5 or 6``."""
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def game_flags(p: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[GameSpec, dict[str, Any]]:
    """(the game's spec, its rule flags from ``--flag`` and ``--players``), without ``game``; a bad
    flag or a ``--players`` the game does not take ends the command line with ``p.error``."""
    spec = get_game(args.game)
    if args.players is not None and not spec.takes_players:
        sized = " or ".join(f"--game {get_game(g).name}" for g in game_names() if get_game(g).takes_players)
        n = spec.default_players
        p.error(f"--players is for {sized} (the {spec.name} game has {_WORDS.get(n, n)} players)")
    try:
        flags = parse_flags(getattr(args, "flag", None), game=spec.name)
        if args.players is not None:
            if flags.get("players", args.players) != args.players:
                raise ValueError(f"--players {args.players} contradicts --flag players={flags['players']}")
            flags["players"] = args.players
            game_config({**flags, "game": spec.name})
    except ValueError as exc:
        p.error(str(exc))
    if spec.takes_players:
        flags.setdefault("players", spec.default_players)
    return spec, flags


def game_part(p: argparse.ArgumentParser, game: GameSpec, part: str, needed_for: str) -> Any:
    """The game's registered ``part`` (``"play"``, ``"match"``, ``"render_scene"``); a game without it
    ends the command line naming what it lacks."""
    try:
        return game.load(part)
    except ValueError as exc:
        p.error(f"--game {game.name} cannot be {needed_for}: {exc}")


def parse_flags(items: Iterable[str] | None, game: str = DEFAULT_GAME) -> dict[str, Any]:
    """``["deck=full", "target_score=500"]`` -> ``{"deck": "full", "target_score": 500}`` (validated
    against the rules of ``game``, a game of the registry: a bad name or value
    raises ValueError naming it). The result holds the rule flags only, not ``game``."""
    if game not in game_names():  # a caller's slip: the command lines offer the registry's games only
        raise ValueError(f"game={game!r} is not allowed; allowed values: {', '.join(game_names())}")
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
