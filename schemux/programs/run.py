"""run_program's operation: start a program, wait for it, and take its last screen, its
status and the end of its stderr, leaving nothing of it behind."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import anyio

from schemux.errors import SchemuxError, TmuxCommandError
from schemux.hosts.programs.gate import Ending
from schemux.programs.output import first_text_line, text_tail
from schemux.programs.program import Program, ProgramSpec
from schemux.programs.store import ProgramCaller, ProgramStore
from schemux.shell.commands import keep_tail
from schemux.tmux.command import THEN
from schemux.tmux.format import parse_row, row_format, tmux_row
from schemux.tmux.server import TmuxServer

RESULT_CEILING = 64 * 1024  # bytes of output (and of stderr) a result carries at most


@dataclass(frozen=True)
class RunResult:
    ending: Ending
    timed_out: bool
    output: str
    dropped_lines: int  # lines that max_lines left out
    omitted_bytes: int  # bytes of output and stderr the result limit left out
    stderr: str | None
    lost_start: bool
    lost_end: bool
    # the program whose output stays readable (read_program, its output resource) when
    # this result's output is not all of it
    kept_output: str | None = None

    @property
    def output_complete(self) -> bool:
        return not (
            self.timed_out or self.lost_start or self.lost_end
            or self.dropped_lines or self.omitted_bytes
        )  # fmt: skip


async def run(
    store: ProgramStore, server: TmuxServer, spec: ProgramSpec, caller: ProgramCaller,
    timeout: float, max_lines: int | None,
) -> RunResult:  # fmt: skip
    """Run ``spec`` for ``caller`` for up to ``timeout`` seconds (then it is stopped),
    the wait for a slot at the running limit included; also when the call is cancelled,
    the program ends as at a timeout and its pane goes (unless kept). When the result's
    output is not all of what the program printed, its output stays readable under its
    id."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    program = await store.start(server, spec, caller, slot_deadline=deadline)
    cut = False
    try:
        timed_out = not await store.wait_end(program, max(0.0, deadline - loop.time()))
        # over ssh: the connection dropped, and the program's end with it
        lost = store.host.lost(program.directory)
        if lost is not None:
            raise SchemuxError(
                f"{program.id} was lost before its end: {lost}",
                suggestion="call again: the next call reconnects",
            )
        if timed_out:
            await store.terminate(program, "stopped")
        rows, lost_start = await _screen(store, program)
        stderr, stderr_skipped = (
            await store.host.read_stderr(program.stderr_path, RESULT_CEILING)
            if spec.separate_stderr
            else (None, 0)
        )
        lines, dropped = keep_tail(rows, max_lines)
        output, omitted = tail_within("\n".join(lines), RESULT_CEILING)
        cut = bool(dropped or omitted or lost_start) and program.text is not None
    finally:
        with anyio.CancelScope(shield=True):
            await store.terminate(program, "stopped")
            await store.release(program)
            if cut:
                await store.keep_output(program)
            else:
                await store.discard(program, keep_pane=program.keep)
    assert program.ending is not None
    stderr_tail, stderr_omitted = tail_within(stderr, RESULT_CEILING) if stderr else (stderr, 0)
    return RunResult(
        ending=program.ending,
        timed_out=timed_out,
        output=output,
        dropped_lines=dropped,
        omitted_bytes=omitted + stderr_omitted + stderr_skipped,
        stderr=stderr_tail,
        lost_start=lost_start,
        lost_end=program.lost_end,
        kept_output=program.id if cut else None,
    )


async def _screen(store: ProgramStore, program: Program) -> tuple[list[str], bool]:
    """The program's last screen (its history too), and whether its start may be missing
    from it: rows fell out of the history, and its first line is not the copy's."""
    try:
        rows, may_have_dropped = await last_screen(program.server, program.pane_id)
    except TmuxCommandError:  # the pane went with its end unreported: the copy's text
        if program.text is None:
            return [], False
        text, _ = await text_tail(program, store.host, RESULT_CEILING)
        return [line.rstrip() for line in text.rstrip("\n").split("\n")] if text else [], False
    if not may_have_dropped:
        return rows, False
    if program.text is None:
        return rows, True
    first = await first_text_line(program, store.host, 64 * 1024)
    return rows, first.rstrip("\n").rstrip() != (rows or [""])[0]


@tmux_row
class _History:
    history_size: int
    history_limit: int


async def last_screen(server: TmuxServer, pane_id: str) -> tuple[list[str], bool]:
    """The pane's history and screen as the terminal shows them (wrapped rows joined,
    empty rows at the bottom left out), and whether rows may have fallen out of its
    history (tmux frees a tenth of history-limit each time it is full)."""
    lines = await server.run(
        "display-message", "-p", "-t", pane_id, row_format(_History), THEN,
        "capture-pane", "-p", "-J", "-t", pane_id, "-S", "-", "-E", "-",
    )  # fmt: skip
    history = parse_row(_History, lines[0])
    full = history.history_size >= history.history_limit - max(1, history.history_limit // 10)
    rows = lines[1:]
    while rows and not rows[-1].strip():
        rows.pop()
    return [row.rstrip() for row in rows], full


def tail_within(text: str, ceiling: int) -> tuple[str, int]:
    """The end of ``text`` in at most ``ceiling`` UTF-8 bytes, from a line's start when
    one is there; and how many bytes were left out."""
    data = text.encode()
    if len(data) <= ceiling:
        return text, 0
    kept = data[len(data) - ceiling :]
    line_start = kept.find(b"\n") + 1
    if 0 < line_start < len(kept):
        kept = kept[line_start:]
    return kept.decode("utf-8", "ignore"), len(data) - len(kept)
