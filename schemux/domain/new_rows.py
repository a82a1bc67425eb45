"""capture_since's reads: a pane's visible rows, then the rows written or rewritten since.

Rows are numbered from the oldest one tmux keeps: the visible top row is number
``history_size``, and a row keeps its number as output scrolls it into history. A cursor
(a random token naming a ``Mark`` kept in this process, as ``tmux_capture``'s delta
cursors are) holds the number of the visible top row when it was issued, those rows'
text, the last ``CONTEXT_ROWS`` rows of history above them, and the pane's process. A
read with it captures from that number on, over the control client like every read (one
command line gives the rows and the pane's state of the same moment), and returns the
rows from the first one that differs from what the cursor saw: a command's output, a
prompt row that was typed on, a screen a program repainted; nothing when nothing changed.

tmux renumbers rows when it trims history past ``history-limit`` (a tenth at a time) or
when history is cleared. So a read checks that the context rows are still where the
cursor saw them; if not, it looks for them in the whole history (a trimmed history still
holds them); when they are gone, the rows the cursor needs are gone too, and the read
returns the visible screen with ``lines_missed``. A cursor issued with no history above
the screen has no context: its rows are gone only when history has been trimmed, which
a history at its trimming point is taken to mean.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass

from schemux.errors import SchemuxError, TmuxCommandError, preview
from schemux.panes.targets import PaneInfo
from schemux.tmux.command import THEN
from schemux.tmux.format import parse_row, printed_nothing, row_format, tmux_row
from schemux.tmux.server import TmuxServer

CONTEXT_ROWS = 5
MAX_CURSORS = 128
# a read whose rows moved under it (output between its two round trips) reads again
_READ_TRIES = 3


@tmux_row
class _State:
    history_size: int
    history_limit: int
    pane_height: int
    pane_pid: int | None
    pane_dead: bool


@dataclass(frozen=True)
class Mark:
    """What a cursor stands for (see the module)."""

    server: TmuxServer
    pane_id: str
    pid: int | None
    top: int  # the number of the visible top row at the read
    screen: tuple[str, ...]  # the visible rows then, blank ones included
    context: tuple[str, ...]  # the history rows just above them, at most CONTEXT_ROWS


@dataclass(frozen=True)
class NewRows:
    pane_id: str
    lines: list[str]
    lines_missed: bool
    cursor: str


class RowCursors:
    """capture_since's cursors of one schemux process: at most ``MAX_CURSORS``, the
    oldest forgotten first; a cursor stays usable until then, so a read can be retried."""

    def __init__(self) -> None:
        self._marks: OrderedDict[str, Mark] = OrderedDict()

    def remember(self, mark: Mark) -> str:
        cursor = secrets.token_hex(16)
        self._marks[cursor] = mark
        while len(self._marks) > MAX_CURSORS:
            self._marks.popitem(last=False)
        return cursor

    def recall(self, cursor: str) -> Mark:
        mark = self._marks.get(cursor)
        if mark is None:
            raise SchemuxError(
                f"cursor {preview(cursor)} is malformed, or not one this schemux server "
                f"issued, or forgotten (only the newest {MAX_CURSORS} are kept, none across a "
                "restart of schemux)",
                suggestion="call capture_since without a cursor to start a new one",
            )
        self._marks.move_to_end(cursor)
        return mark

    def close(self) -> None:
        self._marks.clear()


@dataclass(frozen=True)
class _Read:
    state: _State
    first: int  # the number of the first row read
    rows: list[str]  # from ``first`` to the bottom of the screen, blank ones included

    def visible(self) -> list[str]:
        return self.rows[self.state.history_size - self.first :]

    def mark(self, server: TmuxServer, pane_id: str) -> Mark:
        top = self.state.history_size
        above = self.rows[max(0, top - self.first - CONTEXT_ROWS) : top - self.first]
        return Mark(server, pane_id, self.state.pane_pid, top, tuple(self.visible()), tuple(above))


async def start(server: TmuxServer, cursors: RowCursors, pane: PaneInfo) -> NewRows:
    """The visible rows, and a cursor from them."""
    state, rows = await _state_and_rows(server, pane.pane_id, str(-CONTEXT_ROWS))
    read = _Read(state, max(0, state.history_size - CONTEXT_ROWS), rows)
    _check_process(read.state, pane.pane_id, None)
    cursor = cursors.remember(read.mark(server, pane.pane_id))
    return NewRows(pane.pane_id, _without_trailing_blanks(read.visible()), False, cursor)


async def since(cursors: RowCursors, mark: Mark) -> NewRows:
    """The rows written or rewritten since ``mark``, and a cursor from now."""
    server = mark.server
    read = await _read_from(server, mark.pane_id, mark.top - len(mark.context))
    top = None if read is None else _find_top(read, mark)
    if read is None or top is None:
        state, rows = await _state_and_rows(server, mark.pane_id, "-")  # the whole history
        read = _Read(state, 0, rows)
        top = _search_top(read, mark)
    _check_process(read.state, mark.pane_id, mark.pid)
    cursor = cursors.remember(read.mark(server, mark.pane_id))
    if top is None:
        return NewRows(mark.pane_id, _without_trailing_blanks(read.visible()), True, cursor)
    rows = read.rows[top - read.first :]
    changed = next(
        (i for i, row in enumerate(rows) if i >= len(mark.screen) or row != mark.screen[i]),
        len(rows),
    )
    return NewRows(mark.pane_id, _without_trailing_blanks(rows[changed:]), False, cursor)


def _find_top(read: _Read, mark: Mark) -> int | None:
    """The number of the cursor's top row now, if the rows have not moved."""
    if not mark.context:  # the cursor saw no history: its top row is number 0
        limit = read.state.history_limit
        if limit == 0:  # nothing is kept: moved rows are gone at once
            return None if read.rows[:1] != list(mark.screen[:1]) else mark.top
        trimmed = read.state.history_size >= limit - max(1, limit // 10)
        return None if trimmed else mark.top
    at = mark.top - len(mark.context) - read.first
    if at < 0 or tuple(read.rows[at : at + len(mark.context)]) != mark.context:
        return None
    return mark.top


def _search_top(read: _Read, mark: Mark) -> int | None:
    """The number of the cursor's top row in a read of the whole history (from row 0):
    just below the last place in history its context rows are found; None when gone."""
    size = len(mark.context)
    if not size:
        return None
    for at in range(read.state.history_size - size, -1, -1):
        if tuple(read.rows[at : at + size]) == mark.context:
            return at + size
    return None


async def _read_from(server: TmuxServer, pane_id: str, first: int) -> _Read | None:
    """The pane's state and rows of one moment, from row ``first`` (or earlier: at least
    ``CONTEXT_ROWS`` above the visible top) to the bottom of the screen; None when the
    history is now shorter than ``first`` (it was cleared or trimmed)."""
    history_size = (await _state_and_rows(server, pane_id, None))[0].history_size
    for _ in range(_READ_TRIES):
        if first > history_size:
            return None
        begin = max(0, min(first, history_size - CONTEXT_ROWS))
        state, rows = await _state_and_rows(server, pane_id, str(begin - history_size))
        # output between the two round trips moves the rows: the read is checked
        read_first = max(0, state.history_size + begin - history_size)
        if read_first <= min(first, max(0, state.history_size - CONTEXT_ROWS)):
            return _Read(state, read_first, rows)
        history_size = state.history_size
    raise SchemuxError(
        f"pane {pane_id} kept scrolling while its rows were read; nothing was returned",
        suggestion="call capture_since again with the same cursor",
    )


async def _state_and_rows(
    server: TmuxServer, pane_id: str, start: str | None
) -> tuple[_State, list[str]]:
    """The pane's state and, with ``start`` (capture-pane's ``-S``), its rows from there
    to the bottom of the screen, in one command line."""
    line: list[str] = ["display-message", "-p", "-t", pane_id, row_format(_State)]
    if start is not None:
        line += [THEN, "capture-pane", "-p", "-t", pane_id, "-S", start]
    try:
        lines = await server.run(*line)
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        lines = []
    # display-message answers a pane that is gone with empty fields, not an error
    if not lines or printed_nothing(_State, lines[0]):
        raise SchemuxError(
            f"pane {pane_id} was closed",
            suggestion="call capture_since without a cursor on another pane",
        )
    return parse_row(_State, lines[0]), lines[1:]


def _check_process(state: _State, pane_id: str, pid: int | None) -> None:
    if state.pane_dead:
        raise SchemuxError(
            f"pane {pane_id} is dead (its program ended): nothing new can appear in it",
            suggestion="read what it shows with snapshot_pane",
        )
    if pid is not None and state.pane_pid != pid:
        raise SchemuxError(
            f"pane {pane_id} was respawned (pid {pid} -> {state.pane_pid}): its rows no longer "
            "follow the cursor's",
            suggestion="call capture_since without a cursor to start a new one",
        )


def _without_trailing_blanks(rows: list[str]) -> list[str]:
    rows = list(rows)
    while rows and rows[-1] == "":
        rows.pop()
    return rows


def tail_within(
    lines: list[str], max_lines: int | None, max_bytes: int | None
) -> tuple[list[str], int, int]:
    """The last ``lines`` within ``max_lines`` lines and ``max_bytes`` UTF-8 bytes (None:
    no bound), with the number of lines and bytes dropped from the head; a last line
    longer than ``max_bytes`` keeps its end."""
    kept = list(lines)
    dropped_lines = 0
    dropped_bytes = 0

    def drop_first() -> None:
        nonlocal dropped_lines, dropped_bytes
        dropped_bytes += _size(kept.pop(0))
        dropped_lines += 1

    if max_lines is not None:
        while len(kept) > max_lines:
            drop_first()
    if max_bytes is not None:
        total = sum(_size(line) for line in kept)
        while len(kept) > 1 and total > max_bytes:
            total -= _size(kept[0])
            drop_first()
        if kept and total > max_bytes:
            encoded = kept[0].encode("utf-8", "surrogateescape")
            kept[0] = encoded[len(encoded) - max_bytes :].decode("utf-8", "ignore")
            dropped_bytes += len(encoded) - _size(kept[0])
    return kept, dropped_lines, dropped_bytes


def _size(line: str) -> int:
    return len(line.encode("utf-8", "surrogateescape"))
