"""The command line of ``python train.py`` (:func:`main`): a YAML config, any field overridden with
``--set field=value`` or ``--field value``, ``--resume`` a checkpoint, ``--overwrite`` a run folder.

Exit codes: 0 a finished run, 2 a bad config, file or checkpoint (one ``error:`` line), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rook_env.agents.learned.model import CheckpointError, load_checkpoint

from .config import make_train_config
from .loop import train


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="PPO self-play training for Rook. Any config field (see rook_env.training.Config) can be set with "
        "--set field=value or --field value; a map entry with --opponent_mix.heuristic 0.5.",
    )
    p.add_argument("--config", help="YAML config file (fields of rook_env.training.Config)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="override a config field")
    p.add_argument("--resume", metavar="PATH", help="resume from a checkpoint written by this script (last.pt)")
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        base = load_checkpoint(args.resume)["config"] if args.resume else None
        cfg = make_train_config(args.config, args.set, base=base)
    except (ValueError, OSError) as exc:  # bad config, unreadable file or checkpoint (CheckpointError)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if cfg.algorithm == "label_rounds":  # rounds of counterfactual labels; a rerun of the command resumes them
        from .label_rounds import train_rounds

        if args.resume:
            print("error: --resume is PPO's; a label_rounds run resumes when its command is run again", file=sys.stderr)
            return 2
        try:
            train_rounds(cfg, overwrite=args.overwrite)
        except ValueError as exc:  # a CheckpointError too
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # the shards written so far are kept: the same command goes on from them
            print("interrupted: run the same command again to go on", file=sys.stderr)
            return 130
        return 0
    try:
        summary = train(cfg, resume=args.resume, overwrite=args.overwrite)
    except (CheckpointError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 130 if summary["stop_reason"] == "interrupted" else 0


if __name__ == "__main__":
    sys.exit(main())
