"""The command line of training, ``python train.py`` and ``rook-train`` (:func:`main`).

Without a subcommand (or with ``run``) it is a training run: a YAML config, any field overridden with ``--set
field=value`` or ``--field value``, ``--resume`` a PPO checkpoint, ``--overwrite`` a run folder; the config's
``algorithm`` says what runs (``ppo``: :func:`rook_env.training.loop.train`; ``label_rounds``:
:func:`rook_env.training.labels.commands.run_config_rounds`). The tools are subcommands, each with ``--help``:
``labels``, ``fit``, ``rounds``, ``search-labels`` (:mod:`rook_env.training.labels.commands`) and ``distill``
(:func:`rook_env.training.expert.main`).

Exit codes: 0 a finished run, 2 a bad config, file or checkpoint (one ``error:`` line), 130 interrupted (Ctrl-C or
SIGTERM, which stop a run the same way).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from collections.abc import Sequence
from typing import Any

from rook_env.agents.learned.model import CheckpointError, load_checkpoint

from .config import make_train_config
from .expert import main as distill
from .labels.commands import COMMANDS, run_config_rounds
from .loop import train

RUN_HELP = ("Train Rook: the config's algorithm (ppo: PPO self-play; label_rounds: rounds of counterfactual labels "
            "and fits). Any config field can be set with --set field=value or --field value; a map entry with "
            "--opponent_mix.heuristic 0.5, a section's field with --rounds.rounds 3.")


def subcommands() -> dict[str, str]:
    """The subcommands and what each does."""
    return {"run": "a training run (the default): the algorithm from the config",
            **{name: what for name, (what, _) in COMMANDS.items()},
            "distill": "distil search's card play into a network from search labels (expert iteration, offline)"}


def _epilog() -> str:
    lines = [f"  {name:14s}{what}" for name, what in subcommands().items()]
    return "subcommands (rook-train <subcommand> --help):\n" + "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """A run's arguments; the words after the known ones are ``--field value`` overrides (added to ``set``)."""
    p = argparse.ArgumentParser(prog=f"{program()} [run]", description=RUN_HELP, epilog=_epilog(),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="YAML config file (fields of rook_env.training.Config)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="override a config field")
    p.add_argument("--resume", metavar="PATH", help="resume a PPO run from its last.pt (a label_rounds run resumes "
                   "when its command is run again)")
    p.add_argument("--overwrite", action="store_true",
                   help="delete an existing runs/<name>/ and start afresh (a new run refuses it otherwise)")
    args, rest = p.parse_known_args(argv)
    i = 0
    while i < len(rest):  # --field value / --field=value become field=value overrides
        tok = rest[i]
        if not tok.startswith("--"):
            p.error(f"unexpected argument {tok!r}")
        key, eq, val = tok[2:].partition("=")
        if eq:
            i += 1
        elif i + 1 < len(rest):
            val = rest[i + 1]
            i += 2
        else:
            p.error(f"{tok} needs a value")
        args.set.append(f"{key.replace('-', '_')}={val}")
    return args


def program() -> str:
    """How the user called this command line: ``rook-train``, or ``python train.py`` from a checkout."""
    return "rook-train" if os.path.basename(sys.argv[0]) == "rook-train" else "python train.py"


def resume_command(argv: Sequence[str]) -> str:
    """The command that goes on with an interrupted label_rounds run: the same one, without ``--overwrite``."""
    return " ".join([program(), *(shlex.quote(a) for a in argv if a != "--overwrite")])


def _sigterm_as_ctrl_c(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def run(argv: Sequence[str]) -> int:
    """A training run (module docstring); SIGTERM stops it as Ctrl-C does."""
    args = parse_args(argv)
    try:
        base = load_checkpoint(args.resume)["config"] if args.resume else None
        cfg = make_train_config(args.config, args.set, base=base)
    except (ValueError, OSError) as exc:  # bad config, unreadable file or checkpoint (CheckpointError)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    previous = signal.signal(signal.SIGTERM, _sigterm_as_ctrl_c)
    try:
        if cfg.algorithm == "label_rounds":  # rounds of counterfactual labels; a rerun of the command resumes them
            if args.resume:
                print("error: --resume is PPO's; a label_rounds run resumes when its command is run again",
                      file=sys.stderr)
                return 2
            return run_config_rounds(cfg, args.overwrite, resume_command(argv), getattr(cfg, "progress", True))

        try:
            summary = train(cfg, resume=args.resume, overwrite=args.overwrite)
        except (CheckpointError, FileExistsError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 130 if summary["stop_reason"] == "interrupted" else 0
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_subcommand(name: str, argv: Sequence[str]) -> int:
    """One of the tools (:func:`subcommands`), with its own options."""
    if name == "distill":
        return distill(list(argv))

    what, add = COMMANDS[name]
    p = argparse.ArgumentParser(prog=f"{program()} {name}", description=what)
    runner = add(p)
    return runner(p.parse_args(argv))


def main(argv: Sequence[str] | None = None) -> int:
    """``python train.py`` / ``rook-train``: a run, or a subcommand named first."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in subcommands() and argv[0] != "run":
        return run_subcommand(argv[0], argv[1:])
    return run(argv[1:] if argv and argv[0] == "run" else argv)


if __name__ == "__main__":
    sys.exit(main())
