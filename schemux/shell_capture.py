"""Reading a typed command's output rows from its pane: the tmux side of
``schemux.shell_output``, which decides where in those rows the output lies."""

from __future__ import annotations

import asyncio

from schemux.errors import SchemuxError
from schemux.shell_facts import shell_facts
from schemux.shell_output import OutputEnd, Prompt, locate_output
from schemux.shell_wrapper import Wrapper, in_pane
from schemux.tmux import TmuxServer
from schemux.tmux_format import parse_row, row_format, tmux_row


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


async def output_end_now(server: TmuxServer, wrapper: Wrapper) -> OutputEnd:
    """Where the output ends so far, for a command still running: the terminal's cursor."""
    now = await in_pane(
        server, wrapper, "display-message", "-p", "-t", wrapper.pane_id, CURSOR_FORMAT
    )
    at = parse_row(TerminalCursorRow, now[0])
    return OutputEnd(at.history_size, at.cursor_y, at.cursor_x, at.history_limit)


async def read_output(
    server: TmuxServer,
    wrapper: Wrapper,
    prompt: Prompt,
    end: OutputEnd,
    then: tuple[str, ...],
    status: int | None,
) -> tuple[list[str], bool]:
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
            server, wrapper, "capture-pane", "-p", "-J", "-t", wrapper.pane_id,
            "-S", "-" if first is None else str(first), "-E", str(end.last_output_row),
            *now,
        )  # fmt: skip
        located = locate_output(lines, wrapper.token, prompt.echo_head(wrapper.first_line))
        if located is not None:
            return located.lines, located.exact
        if first is None and await shell_facts(server).echo_on(await _pane_tty(server, wrapper)):
            # the echo was on and is gone: tmux dropped it, and every row older than it,
            # so every row left came after it
            return lines, False
    finally:
        if later:
            await asyncio.shield(in_pane(server, wrapper, *later))
    ran = "is still running" if status is None else f"ran and exited with status {status}"
    raise SchemuxError(
        f"the command in pane {wrapper.pane_id} {ran}, but its output cannot be told apart "
        "from the prompt: the shell did not echo the typed command, so where the output "
        "starts is unknown (is the terminal's echo off?)",
        suggestion="turn the echo back on (run_command `stty echo`) and run it again",
    )


async def _pane_tty(server: TmuxServer, wrapper: Wrapper) -> str:
    lines = await in_pane(
        server, wrapper, "display-message", "-p", "-t", wrapper.pane_id, "#{pane_tty}"
    )
    return lines[0] if lines else ""
