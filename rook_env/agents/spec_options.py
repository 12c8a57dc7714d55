"""Options written into an agent spec: ``"search[samples=96,worlds=learned]:ppo"``, ``"pimc:worlds=24"``,
``"call_partner_search[worlds=32]:ppo"``. One parser for every family that takes them: a family gives its table of
:class:`Option` and the text of its options (``key=value`` items separated by commas), and gets the agent's
arguments or a ``ValueError`` naming the spec and the item at fault (an unknown key, a key given twice, a value that
is not what the option takes)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["Option", "parse_options"]


@dataclass(frozen=True)
class Option:
    """One option: its type (``int``: a whole number written in ASCII digits; ``float``: a finite number; ``str``: a
    word), what its values must be in words (for errors: ``"a whole number in 1..1000 (default 16)"``), and the
    values allowed (``choices`` for a word, ``low``..``high`` for a number; none: the agent checks the value)."""

    kind: type
    describe: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None

    def read(self, text: str) -> Any:
        """The value of ``text``, or None where it is not one this option takes."""
        if self.kind is int:
            if not (text.isascii() and text.isdigit()):
                return None
            value: Any = int(text)
        elif self.kind is float:
            try:
                value = float(text)
            except ValueError:
                return None
            if not math.isfinite(value):
                return None
        else:
            value = text
            if self.choices and value not in self.choices:
                return None
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            return None
        return value


def parse_options(spec: str, family: str, text: str, table: Mapping[str, Option]) -> dict[str, Any]:
    """The arguments ``text`` (``"worlds=32,contract=base"``) sets, by the options of ``table``; ``family`` names the
    options in errors (``"pimc option worlds must be ..."``)."""
    options: dict[str, Any] = {}
    for item in text.split(","):
        key, eq, raw = (x.strip() for x in item.partition("="))
        if key not in table or not eq or not raw:
            raise ValueError(f"agent spec {spec!r}: bad {family} option {item.strip()!r}; write key=value with "
                             + "; ".join(f"{k}: {o.describe}" for k, o in table.items()))
        if key in options:
            raise ValueError(f"agent spec {spec!r}: {family} option {key!r} is given twice")
        value = table[key].read(raw)
        if value is None:
            raise ValueError(f"agent spec {spec!r}: {family} option {key} must be {table[key].describe}, got {raw!r}")
        options[key] = value
    return options
