"""Reading a typed command's output rows from its pane: the tmux side of
``schemux.shell.output``, which decides where in those rows the output lies."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass

from schemux.errors import SchemuxError
from schemux.panes.targets import PaneInfo
from schemux.shell.facts import shell_facts
from schemux.shell.output import Located, OutputEnd, Prompt, locate_output
from schemux.shell.wrapper import Wrapper, in_pane
from schemux.tmux.command import THEN
from schemux.tmux.format import parse_row, row_format, tmux_row
from schemux.tmux.server import TmuxServer

PROMPT_POLL_SECONDS = 0.01  # between two readings of a screen whose prompt is awaited


@tmux_row
class TerminalCursorRow:
    """Where a pane's terminal cursor is, in its history (read as ``Prompt`` before
    typing, as ``OutputEnd`` when a command's end is not reported)."""

    history_size: int
    cursor_y: int
    cursor_x: int
    history_limit: int


CURSOR_FORMAT = row_format(TerminalCursorRow)


def prompt_from(typed: list[str]) -> Prompt:
    """The prompt, from the lines of a ``display-message`` of ``CURSOR_FORMAT`` and the
    ``capture-pane -p`` after it."""
    at = parse_row(TerminalCursorRow, typed[0])
    return Prompt.at(at.history_size, at.cursor_y, at.cursor_x, typed[1:])


async def output_end_now(server: TmuxServer, pane_id: str) -> OutputEnd:
    """Where the output ends so far (the terminal's cursor): of a command still running,
    or of one whose shell the hooks hold before its prompt."""
    return end_from((await in_pane(server, pane_id, *end_now(pane_id)))[0])


def end_now(pane_id: str) -> tuple[str, ...]:
    """The tmux command whose line ``end_from`` reads."""
    return ("display-message", "-p", "-t", pane_id, CURSOR_FORMAT)


def end_from(line: str) -> OutputEnd:
    """The output's end, from the line of ``end_now``."""
    at = parse_row(TerminalCursorRow, line)
    return OutputEnd(at.history_size, at.cursor_y, at.cursor_x, at.history_limit)


def cursor_at(end: OutputEnd) -> str:
    """A tmux format, true on the pane while its cursor and history are ``end``'s."""
    fields = (end.history, end.row, end.column, end.history_limit)
    now = " ".join(
        f"#{{{name}}}" for name in ("history_size", "cursor_y", "cursor_x", "history_limit")
    )
    return f"#{{==:{now},{' '.join(str(field) for field in fields)}}}"


async def read_output(
    server: TmuxServer,
    wrapper: Wrapper,
    prompt: Prompt,
    end: OutputEnd,
    then: tuple[str, ...],
    status: int | None,
) -> Located:
    """The output rows up to ``end``, and whether they are all of it.

    ``then`` (further tmux commands) runs in the same tmux call as the capture;
    ``status`` (None while the command runs) is for the message when the output cannot
    be found.
    """
    first = end.first_row_since(prompt)
    # when the echo may be gone with dropped history, the terminal's echo setting may be
    # needed, read while the wrapper still holds the shell: release only afterwards
    now, later = (then, ()) if first is not None else ((), then[1:])
    try:
        lines = await in_pane(
            server, wrapper.pane_id, "capture-pane", "-p", "-J", "-t", wrapper.pane_id,
            "-S", "-" if first is None else str(first), "-E", str(end.last_output_row),
            *now,
        )  # fmt: skip
        located = locate_output(
            lines, wrapper.token, prompt.echo_head(wrapper.first_line), wrapper.last_line
        )
        if located is not None:
            return located
        if first is None and await shell_facts(server).echo_on(await _pane_tty(server, wrapper)):
            # the echo was on and is gone: tmux dropped it, and every row older than it,
            # so every row left came after it
            return Located(lines, exact=False)
    finally:
        if later:
            await asyncio.shield(in_pane(server, wrapper.pane_id, *later))
    ran = "is still running" if status is None else f"ran and exited with status {status}"
    raise SchemuxError(
        f"the command in pane {wrapper.pane_id} {ran}, but its output cannot be told apart "
        "from the prompt: the shell did not echo the typed command, so where the output "
        "starts is unknown (is the terminal's echo off?)",
        suggestion="turn the echo back on (run_command `stty echo`) and run it again",
    )


async def _pane_tty(server: TmuxServer, wrapper: Wrapper) -> str:
    lines = await in_pane(
        server, wrapper.pane_id, "display-message", "-p", "-t", wrapper.pane_id, "#{pane_tty}"
    )
    return lines[0] if lines else ""


@dataclass(frozen=True)
class CommandStart:
    """Where the hooks saw a command's output start (the cursor, in the grid's absolute
    rows), and the nearest row above it that was not blank, ``echo_distance`` rows up:
    the echo's last row, to find the start again should tmux drop history rows (fish
    leaves a blank row under a command line taller than the pane)."""

    at: Prompt
    echo_row: str
    echo_distance: int = 1
    history_limit: int = 0  # the pane's (0: not read)


# how many history rows a call's start looks up for a row that is not blank, when the
# screen above it is all blank (fish, under a command line much taller than the pane)
ECHO_SEARCH_ROWS = 200
# the rows at the bottom of the screen a command's start reads first where the pane's
# last one began on the last row (a full screen, which scrolls: an agent's pane after a
# few calls), rather than the whole screen: the echo's last row is one of those above
# the cursor unless a command line left blank rows under it (then the screen is read)
BOTTOM_ROWS = 4


@tmux_row
class StartCursorRow(TerminalCursorRow):
    """Where a pane's cursor is when a command starts, and its screen's height."""

    pane_height: int


START_FORMAT = row_format(StartCursorRow)


class BottomStarts:
    """Of one tmux server's panes, the screen's height of those whose last command began
    on its last row (kept by its ``TmuxServer``: ``server.shared(BottomStarts)``)."""

    KEPT = 1024  # panes remembered; past that, all are forgotten (each is read whole once)

    def __init__(self) -> None:
        self._heights: dict[str, int] = {}

    def height(self, pane_id: str) -> int | None:
        return self._heights.get(pane_id)

    def note(self, pane_id: str, at: StartCursorRow) -> None:
        if at.cursor_y == at.pane_height - 1 and at.pane_height > BOTTOM_ROWS:
            if len(self._heights) >= self.KEPT:
                self._heights.clear()
            self._heights[pane_id] = at.pane_height
        else:
            self._heights.pop(pane_id, None)


async def command_start(server: TmuxServer, pane_id: str) -> CommandStart:
    """Where a command's output starts, read while the hooks hold the shell before it:
    from the screen's last ``BOTTOM_ROWS`` where the last command began on its last row
    and this one does too; else from the screen and one history row, or, when all of
    that above the cursor is blank, from ``ECHO_SEARCH_ROWS`` of history too."""
    bottom = server.shared(BottomStarts)
    height = bottom.height(pane_id)
    if height is not None:
        lines = await in_pane(server, pane_id, *bottom_now(pane_id, height))
        start = start_at_bottom(lines, height)
        if start is not None:
            return start
    lines = await in_pane(server, pane_id, *start_now(pane_id))
    bottom.note(pane_id, parse_row(StartCursorRow, lines[0]))
    start = command_start_from(lines)
    if start.echo_row or start.at.history == 0:
        return start
    further = await in_pane(server, pane_id, *start_now(pane_id, ECHO_SEARCH_ROWS))
    return command_start_from(further, ECHO_SEARCH_ROWS)


def bottom_now(pane_id: str, height: int) -> tuple[str, ...]:
    """The tmux commands whose lines ``start_at_bottom`` reads: where the cursor is, and
    the last ``BOTTOM_ROWS`` rows of a screen ``height`` rows tall."""
    return (
        "display-message", "-p", "-t", pane_id, START_FORMAT,
        THEN, "capture-pane", "-p", "-t", pane_id,
        "-S", str(height - BOTTOM_ROWS), "-E", str(height - 1),
    )  # fmt: skip


def start_at_bottom(lines: list[str], height: int) -> CommandStart | None:
    """From the lines of ``bottom_now(pane, height)``, when the cursor is on the last row
    of a screen of that height and a row above it among those read is not blank: the
    nearest such row; else None (the screen is to be read)."""
    at = parse_row(StartCursorRow, lines[0])
    rows = lines[1:]
    if at.pane_height != height or at.cursor_y != height - 1 or len(rows) != BOTTOM_ROWS:
        return None
    start = _start_above(at, rows, BOTTOM_ROWS - 2)  # the cursor's row is the last read
    return start if start.echo_row else None


def command_start_from(lines: list[str], reach: int = 1) -> CommandStart:
    """From the lines of ``start_now(pane, reach)``: ``display-message -p START_FORMAT``,
    then the screen and up to ``reach`` history rows above it."""
    at = parse_row(StartCursorRow, lines[0])
    # the cursor's row above, in the rows read
    return _start_above(at, lines[1:], at.cursor_y - 1 + min(reach, at.history_size))


def _start_above(at: StartCursorRow, rows: list[str], above: int) -> CommandStart:
    """The start at ``at``, with the nearest row that is not blank among ``rows`` from
    index ``above`` (the row above the cursor) up; none where all of them are blank."""
    start = Prompt(at.history_size, at.cursor_y, at.cursor_x)
    for index in range(min(above, len(rows) - 1), -1, -1):
        if rows[index].strip():
            return CommandStart(start, rows[index], above + 1 - index, at.history_limit)
    return CommandStart(start, "", history_limit=at.history_limit)


def start_now(pane_id: str, reach: int = 1) -> tuple[str, ...]:
    """The tmux commands whose lines ``command_start_from`` reads: where the cursor is,
    and the screen with ``reach`` history rows above it (fewer where there are fewer)."""
    return (
        "display-message", "-p", "-t", pane_id, START_FORMAT,
        THEN, "capture-pane", "-p", "-t", pane_id, "-S", f"-{reach}",
    )  # fmt: skip


def _output_rows(
    start: CommandStart, end: OutputEnd, eol_mark: str
) -> tuple[int | None, int, bool]:
    """The first and last rows of the output (relative to the visible screen; the first
    None when tmux may have dropped it), and whether zsh's end-of-line mark may end it."""
    first = end.first_row_since(start.at)
    zsh_marked = bool(eol_mark) and end.column == 0
    last = end.row if zsh_marked else end.last_output_row
    return first, last, zsh_marked


def quiet_reading(
    pane_id: str, start: CommandStart, eol_mark: str
) -> tuple[OutputEnd, tuple[str, ...]] | None:
    """Where a command that wrote nothing leaves the cursor (where its output would have
    begun), and the capture ``read_marked_output`` takes for such an end (after a
    ``THEN``; none where it reads no row: only zsh's end-of-line mark's row is read);
    None where tmux may drop history rows meanwhile, or the pane's history-limit is not
    known. Read in the end's command line, those rows are the output when the end is
    that one (``quiet_output``)."""
    if not start.history_limit:
        return None
    end = OutputEnd(start.at.history, start.at.row, 0, start.history_limit)
    first, last, _ = _output_rows(start, end, eol_mark)
    if first is None:
        return None
    if first > last:
        return end, ()
    return end, (THEN, "capture-pane", "-p", "-J", "-t", pane_id, "-S", str(first), "-E", str(last))


def quiet_output(rows: list[str], start: CommandStart, end: OutputEnd, eol_mark: str) -> Located:
    """The output of a command that ended at ``quiet_reading``'s end, from the rows its
    capture read (none without one)."""
    first, last, zsh_marked = _output_rows(start, end, eol_mark)
    if first is None or first > last:
        return Located([], exact=True, line_ends=0)
    return _located(rows, end, eol_mark, zsh_marked, exact=True, rows_lost=0)


def _located(
    lines: list[str],
    end: OutputEnd,
    eol_mark: str,
    zsh_marked: bool,
    *,
    exact: bool,
    rows_lost: int,
) -> Located:
    """The output from the rows captured up to ``end``."""
    if zsh_marked:  # the mark's row blank when the output ended with a line break
        mid_line = bool(lines) and bool(lines[-1].rstrip(" "))
        lines = mark_ended_output(lines, eol_mark)
    else:  # the cursor after the output's last character on its row
        mid_line = end.column > 0
    line_ends = max(len(lines) - mid_line, 0)
    return Located(lines, exact, lines_lost=rows_lost, line_ends=line_ends)


async def read_marked_output(
    server: TmuxServer,
    pane_id: str,
    start: CommandStart,
    end: OutputEnd,
    eol_mark: str,
    then: tuple[str, ...] = (),
) -> tuple[Located, bool]:
    """The output rows between where the shell's hooks saw the command start and end
    (``schemux.hooks``), and whether they are all of it; when tmux dropped
    the start, how many rows of the output it certainly dropped; how many of the lines
    ended with a line break.

    ``eol_mark`` is zsh's mark for output without a final newline: zsh writes it (and moves
    to a new row) before its precmd hook reports, so an end at the start of a row may
    follow that mark on the row above (``mark_ended_output``).

    ``then`` (tmux commands that print nothing, after a ``THEN``) runs in the command line
    of the capture, the last one read; the second value says whether it ran (no output:
    no capture, so not).
    """
    first, last, zsh_marked = _output_rows(start, end, eol_mark)
    rows_lost = 0
    if first is None:  # tmux may have dropped history rows since
        first = await _start_after_drops(server, pane_id, start, end)
        if first is None and start.echo_row:  # looked for, and gone
            rows_lost = end.rows_dropped_from(start.at)
    if first is None:  # the start is gone: every row kept came after it
        first_arg = "-"
    elif first > last:  # no output
        return Located([], exact=True, line_ends=0), False
    else:
        first_arg = str(first)
    lines = await in_pane(
        server, pane_id,
        "capture-pane", "-p", "-J", "-t", pane_id, "-S", first_arg, "-E", str(last), *then,
    )  # fmt: skip
    exact = first_arg != "-"
    return _located(lines, end, eol_mark, zsh_marked, exact=exact, rows_lost=rows_lost), True


async def _start_after_drops(
    server: TmuxServer, pane_id: str, start: CommandStart, end: OutputEnd
) -> int | None:
    """Where the output starts (a row relative to the screen) when tmux may have dropped
    history rows during the command; None when that row is gone, or cannot be told.

    tmux drops a tenth of history-limit at a time, so the start is where the hooks saw
    it, less some number of such tenths; the one whose row ``echo_distance`` above shows
    what that row showed when the command started (the echo's last row, kept with the
    start) is it.
    """
    tenth = max(1, end.history_limit // 10)
    seen = start.at.history + start.at.row - end.history
    candidates = [seen - tenth * times for times in range(end.history_limit // tenth + 2)]
    reach = start.echo_distance
    candidates = [row for row in candidates if row - reach >= -end.history and row <= end.row + 1]
    if not candidates or not start.echo_row:
        return None
    separator = secrets.token_hex(8)
    line: list[str] = []
    for row in candidates:
        if line:  # each row's lines end at a token of this line's own
            line += [THEN, "display-message", "-p", separator, THEN]
        echo = str(row - reach)
        line += ["capture-pane", "-p", "-t", pane_id, "-S", echo, "-E", echo]
    rows: list[list[str]] = [[]]
    for text in await in_pane(server, pane_id, *line):
        if text == separator:
            rows.append([])
        else:
            rows[-1].append(text)
    for row, shown in zip(candidates, rows, strict=False):
        if "\n".join(shown) == start.echo_row:
            return row
    return None


def mark_ended_output(lines: list[str], eol_mark: str) -> list[str]:
    """zsh's PROMPT_SP, undone: the rows up to the cursor's row after it, whose last is
    blank when the output ended with a newline (zsh wrote its mark there and wiped it
    with spaces), and otherwise the output's last line with the mark and spaces after it,
    joined with the blank row zsh moved to (the spaces filled the line to its end)."""
    if not lines:
        return lines
    last = lines[-1].rstrip(" ")  # the spaces zsh wrote after its mark
    if last == "":
        return lines[:-1]
    return [*lines[:-1], last.removesuffix(eol_mark)]


async def shows_nothing_yet(server: TmuxServer, pane: PaneInfo) -> bool:
    """Whether the pane's terminal is as its program found it: nothing written, nothing
    scrolled, the cursor at its top left (a shell whose startup files run a job before
    its first prompt; a program started at a prompt has the prompt above it)."""
    lines = await server.run(
        "display-message", "-p", "-t", pane.pane_id, CURSOR_FORMAT,
        THEN, "capture-pane", "-p", "-t", pane.pane_id,
    )  # fmt: skip
    if not lines:
        return False
    at = parse_row(TerminalCursorRow, lines[0])
    origin = (at.history_size, at.cursor_y, at.cursor_x) == (0, 0, 0)
    return origin and not any(line.strip() for line in lines[1:])


async def until_prompt_shown(server: TmuxServer, pane: PaneInfo, within: float) -> None:
    """Return once the pane's screen shows a prompt: text before the cursor on its row
    (a shell holding its terminal may still be on its way to the prompt: its startup
    files, a slow prompt command). Raises, having typed nothing, when none comes within
    ``within`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        lines = await server.run(
            "display-message", "-p", "-t", pane.pane_id, CURSOR_FORMAT,
            THEN, "capture-pane", "-p", "-t", pane.pane_id,
        )  # fmt: skip
        if prompt_from(lines).text.strip():
            return
        if loop.time() >= deadline:
            raise SchemuxError(
                f"the shell in pane {pane.pane_id} has not shown its prompt after "
                f"{within:g} s: the cursor's row is empty; nothing was typed",
                suggestion="look at the pane (capture_pane); call again with a longer "
                "timeout if its startup is slow",
            )
        await asyncio.sleep(PROMPT_POLL_SECONDS)
