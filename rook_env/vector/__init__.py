"""The batched engine: ``num_envs`` tables of one game stepped together (``RookVectorEnv``).

placeholder docstring, rewritten below
"""

from __future__ import annotations

from .base import (BACKENDS, ILLEGAL_MODES, OPTION_KEYS, RookVectorEnv, check_actions, engine_class,
                   pick_legal, sample_legal, unpack_bits)

__all__ = ["BACKENDS", "ILLEGAL_MODES", "OPTION_KEYS", "RookVectorEnv", "check_actions", "engine_class",
           "pick_legal", "sample_legal", "unpack_bits"]
