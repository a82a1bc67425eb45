"""run_program: start a program, wait for it, and return its last screen and status."""

from __future__ import annotations

import asyncio
from pathlib import Path

import anyio

from schemux import progress
from schemux.context import ToolContext
from schemux.errors import TmuxCommandError
from schemux.generated.models.run_program import RunProgramInput, RunProgramOutput
from schemux.launch import program_spec
from schemux.shell_commands import keep_tail
from schemux.tmux import TmuxServer
from schemux.tmux_command import THEN
from schemux.tmux_format import parse_row, row_format, tmux_row

RESULT_CEILING = 64 * 1024  # bytes of output (and of stderr) a result carries at most


async def handle(ctx: ToolContext, request: RunProgramInput) -> RunProgramOutput:
    timeout = ctx.settings.clamp_wait(request.timeout_ms / 1000)
    progress.expect(timeout, "waiting for the program to end")
    server = ctx.tmux()
    spec = await program_spec(
        server,
        request,
        lifetime=ctx.settings.program_limits.max_lifetime,
        separate_stderr=bool(request.separate_stderr),
        keep=bool(request.keep),
        hold=True,
    )
    store = ctx.programs
    program = await store.start(server, spec)
    try:
        timed_out = not await store.wait_end(program, timeout)
        if timed_out:
            await store.terminate(program, "timed_out")
        try:
            rows, may_have_dropped = await last_screen(server, program.pane_id)
        except TmuxCommandError:  # the pane went with its end unreported: the copy's text
            rows, may_have_dropped = await asyncio.to_thread(text_lines, program.text_path), False
        lost_start = may_have_dropped and (
            await asyncio.to_thread(first_line, program.text_path) != (rows or [""])[0]
        )
        stderr, stderr_skipped = (
            await asyncio.to_thread(read_tail, program.stderr_path, RESULT_CEILING)
            if request.separate_stderr
            else (None, 0)
        )
    finally:
        # also when the client cancels the call: the program ends as at a timeout
        with anyio.CancelScope(shield=True):
            await store.terminate(program, "stopped")
            await store.release(program)
            await store.discard(program, keep_pane=program.keep)
    ending = program.ending
    assert ending is not None
    lines, dropped = keep_tail(rows, request.max_lines)
    output, omitted = tail_within("\n".join(lines), RESULT_CEILING)
    stderr_tail, stderr_omitted = tail_within(stderr, RESULT_CEILING) if stderr else (stderr, 0)
    stderr_omitted += stderr_skipped
    return RunProgramOutput(
        outcome="timed_out" if timed_out else "completed",
        exit_status=None if timed_out else ending.exit_status,
        signal=ending.signal,
        output=output,
        stderr=stderr_tail,
        dropped_lines=dropped,
        omitted_bytes=omitted + stderr_omitted,
        returned_bytes=len(output.encode()),
        lost_start=lost_start,
        lost_end=program.lost_end,
        output_complete=not (
            timed_out or lost_start or program.lost_end or dropped or omitted or stderr_omitted
        ),
        effective_timeout_ms=round(timeout * 1000),
    )


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


def text_lines(text_path: Path) -> list[str]:
    """The lines of the end of the program's text (what a result can carry at most)."""
    text, _ = read_tail(text_path, RESULT_CEILING)
    return [line.rstrip() for line in text.rstrip("\n").split("\n")] if text else []


def first_line(text_path: Path) -> str:
    """The first line of the program's text, the start its screen should still show."""
    with text_path.open("rb") as text:
        return text.readline(64 * 1024).decode("utf-8", "replace").rstrip("\n").rstrip()


def read_tail(path: Path, ceiling: int) -> tuple[str, int]:
    """The end of a file, as much as can reach a result (``ceiling`` bytes and a line's
    worth more), and how many bytes before it were not read."""
    with path.open("rb") as file:
        size = file.seek(0, 2)
        start = max(0, size - ceiling - 4096)
        file.seek(start)
        return file.read().decode("utf-8", "replace"), start


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
