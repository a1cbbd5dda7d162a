"""What a report made from the same objects as the previous report, reused by identity.

At robot scale most of a report repeats the previous one: a standing topic's snapshot is
the very object of the previous report (``Reporter.standing``), and so are the message, the
status and the bytes each output made from it. Each output keeps what it made from each
input object; only what was made from a new object is made again. A thousand standing
topics then cost a dictionary look-up each a report and output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any, Generic, TypeVar

In = TypeVar('In')
Out = TypeVar('Out')


class Reuse(Generic[In, Out]):
    """The outputs of the previous call, by input object (see the module docstring)."""

    def __init__(self) -> None:
        """Start with nothing kept."""
        self._kept: dict[int, tuple[In, Any, Out]] = {}
        """id(input) -> the input (keeping its id unique), its key and its output."""

    def __call__(self, inputs: Sequence[In], make: Callable[[In], Out],
                 keys: Sequence[Any] | None = None) -> list[Out]:
        """Return ``make(part)`` for each input, or its output of the previous call.

        An output is reused when its input is the same object as in the previous call and,
        with ``keys`` (what else the output depends on, one per input), an equal key.
        """
        previous, kept, result = self._kept, {}, []
        for part, key in zip(inputs, repeat(None) if keys is None else keys, strict=False):
            entry = previous.get(id(part))
            if entry is None or entry[0] is not part or entry[1] != key:
                entry = (part, key, make(part))
            kept[id(part)] = entry
            result.append(entry[2])
        self._kept = kept
        return result

    def clear(self) -> None:
        """Forget everything (what the outputs also depend on changed)."""
        self._kept = {}
