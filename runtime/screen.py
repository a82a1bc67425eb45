"""A pane's screen as rows, and the exact splice between two states of it (pure).

A row is one row of the pane's grid (history rows above, then the visible screen) with
its cells as tmux stores them, trailing spaces included, and ends with LF unless the
terminal line goes on in the next row (tmux wrapped it): joined, the rows are the text
with its real line breaks. tmux prints each row by ``capture-pane -N`` and the line
breaks by ``capture-pane -J``; ``rows_from_captures`` puts the two together.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal


class CaptureMismatch(Exception):
    """The two captures of one moment disagree (a schemux bug, never expected)."""


def rows_from_captures(screen_lines: Sequence[str], joined_lines: Sequence[str]) -> list[str]:
    """The rows, each with its LF where the line ends there.

    ``screen_lines`` holds one entry per row (``capture-pane -N``), ``joined_lines`` the
    same rows with wrapped ones joined (``capture-pane -J``), both untrimmed. A row that
    ends where the joined text has a line break keeps an LF. The last row always ends
    with one: tmux ends every capture with a line break.
    """
    joined = "\n".join(joined_lines) + "\n" if joined_lines else ""
    rows: list[str] = []
    position = 0
    for line in screen_lines:
        if not joined.startswith(line, position):
            raise CaptureMismatch(f"row {len(rows)} {line!r} is not in the joined capture")
        position += len(line)
        if joined.startswith("\n", position):
            position += 1
            line += "\n"
        rows.append(line)
    if position != len(joined):
        raise CaptureMismatch("the joined capture holds more than the rows")
    return rows


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
    raw = [row_bytes(row) for row in rows]
    total = sum(len(data) for data in raw)
    if not any(_has_surrogate(row) for row in rows):
        return EncodedRows("utf-8", list(rows), total)
    return EncodedRows("base64", [base64.b64encode(data).decode("ascii") for data in raw], total)


def _has_surrogate(row: str) -> bool:
    # surrogateescape turns each byte that is not UTF-8 into a lone surrogate
    return any("\ud800" <= char <= "\udfff" for char in row)


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
