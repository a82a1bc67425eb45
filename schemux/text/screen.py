"""A pane's screen as rows, and the exact splice between two states of it (pure).

A row is one row of the pane's grid (history rows above, then the visible screen) as
``capture-pane -N`` prints it: the cells tmux stores, trailing spaces written by the
program included, and the row's LF. A line longer than the pane is as many rows as the
screen shows it on.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal


def row_bytes(row: str) -> bytes:
    """The row as tmux sent it (the engine decodes with surrogateescape)."""
    return row.encode("utf-8", "surrogateescape")


def limit_rows(rows: Sequence[str], max_lines: int, max_bytes: int) -> tuple[list[str], bool]:
    """The last rows that fit both limits (whole rows only), and whether any were cut.

    The bottom is kept: the visible screen matters more than the history above it.
    """
    kept = list(rows[-max_lines:]) if len(rows) > max_lines else list(rows)
    total = sum(len(row_bytes(row)) for row in kept)
    first = 0
    while total > max_bytes:
        total -= len(row_bytes(kept[first]))
        first += 1
    return kept[first:], first > 0 or len(kept) < len(rows)


@dataclass(frozen=True)
class EncodedRows:
    encoding: Literal["utf-8", "base64"]
    rows: list[str]
    bytes: int


def encode_rows(rows: Sequence[str]) -> EncodedRows:
    """The rows as text when every one is valid UTF-8, else every row base64 (so a splice
    always joins rows of one encoding)."""
    try:
        # strict UTF-8 refuses the lone surrogates that surrogateescape made of the bytes
        # that were not UTF-8
        total = len("".join(rows).encode("utf-8"))
    except UnicodeEncodeError:
        raw = [row_bytes(row) for row in rows]
        encoded = [base64.b64encode(data).decode("ascii") for data in raw]
        return EncodedRows("base64", encoded, sum(len(data) for data in raw))
    return EncodedRows("utf-8", list(rows), total)


@dataclass(frozen=True)
class Splice:
    """Replace ``delete`` rows from ``start`` with ``rows``."""

    start: int
    delete: int
    rows: list[str]


def splice_between(old: Sequence[str], new: Sequence[str]) -> Splice:
    """The one splice that turns ``old`` into ``new``: everything between their longest
    common head and (not overlapping it) their longest common tail."""
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return Splice(head, len(old) - head - tail, list(new[head : len(new) - tail]))
