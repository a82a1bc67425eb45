"""One run_command call in a pane's interactive shell: type the command inside its
wrapper, wait for its report, read its output, and undo what each step left when the call
is cancelled or fails.

The wrapper and its life in tmux: ``schemux.shell_wrapper``; waiting for a pane that
earlier calls are leaving: ``schemux.shell_settling``; reading the output rows:
``schemux.shell_capture``, over the pure ``schemux.shell_output``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

from schemux.errors import SchemuxError
from schemux.shell_capture import CURSOR_FORMAT, output_end_now, prompt_from, read_output
from schemux.shell_facts import shell_facts
from schemux.shell_output import Prompt, Report, keep_tail
from schemux.shell_settling import mark_settling, occupying, settle, until_settled
from schemux.shell_wrapper import (
    HOLD_SECONDS,
    Wrapper,
    abandon,
    disarm,
    drop_hold_flag,
    interrupt,
)
from schemux.targets import PaneInfo
from schemux.tmux import TmuxServer
from schemux.tmux_command import THEN

# keep_tail is the tail rule of every tool that returns a command's output lines
__all__ = ["ShellCommandResult", "check_command", "keep_tail", "run_in_shell"]


@dataclass(frozen=True)
class ShellCommandResult:
    exit_status: int | None
    timed_out: bool
    lines: list[str]
    head_lost: bool  # the lines are a tail of the output: its start is not certain
    elapsed: float


@dataclass(frozen=True)
class _Finished:
    lines: list[str]
    exact: bool
    exit_status: int | None
    timed_out: bool


def check_command(command: str, suppress_history: bool) -> None:
    if not command.strip():
        raise SchemuxError("command must not be empty", suggestion="pass the shell command to run")
    if suppress_history and ("\n" in command or "\r" in command):
        raise SchemuxError(
            "command must be a single line when suppress_history=True",
            suggestion="join the lines with ';' or pass suppress_history=false",
        )
    if "\r" in command:
        raise SchemuxError(
            "command contains a carriage return, which the shell would take as Enter",
            suggestion="use '\\n' line breaks",
        )


async def run_in_shell(
    server: TmuxServer,
    pane: PaneInfo,
    command: str,
    *,
    timeout: float,
    suppress_history: bool,
) -> ShellCommandResult:
    """Type ``command`` into the idle shell of ``pane`` and wait up to ``timeout`` seconds.

    Cancelled, the call interrupts the command (C-c) and leaves nothing behind."""
    check_command(command, suppress_history)
    facts = shell_facts(server)  # read where the server runs (schemux.shell_facts)
    await until_settled(pane, facts)
    await facts.check_shell_pane(pane)
    with occupying(pane):  # another call may have taken the pane while this one waited
        return await _run_typed(server, pane, command, timeout, suppress_history)


async def _run_typed(
    server: TmuxServer, pane: PaneInfo, command: str, timeout: float, suppress_history: bool
) -> ShellCommandResult:
    wrapper = Wrapper(server, pane, suppress_history)
    key = (pane.socket_path, pane.pane_id)
    started = time.monotonic()
    # the prompt (cursor and screen) is read in the same tmux call that types
    typing = asyncio.ensure_future(server.run(
        "display-message", "-p", "-t", pane.pane_id, CURSOR_FORMAT,
        THEN, "capture-pane", "-p", "-t", pane.pane_id,
        THEN, *wrapper.arm_and_type(command),
    ))  # fmt: skip
    try:
        typed = await asyncio.shield(typing)
    except asyncio.CancelledError:
        await asyncio.shield(settle(key, _cancelled_typing(server, wrapper, typing)))
        raise
    prompt = prompt_from(typed)
    waiting = asyncio.ensure_future(server.wait(wrapper.done))
    try:
        finished, _ = await asyncio.wait({waiting}, timeout=timeout)
    except asyncio.CancelledError:
        await asyncio.shield(settle(key, abandon(server, wrapper, waiting, interrupting=True)))
        raise
    except BaseException:
        await asyncio.shield(abandon(server, wrapper, waiting, interrupting=False))
        raise
    # shielded as one step: once disarmed, this reads the output and releases the shell
    finishing = asyncio.ensure_future(
        _finish(server, wrapper, pane, prompt, waiting, bool(finished), timeout)
    )
    try:
        done = await asyncio.shield(finishing)
    except asyncio.CancelledError:
        await asyncio.shield(settle(key, _cancelled_finishing(server, wrapper, finishing)))
        raise
    return ShellCommandResult(
        done.exit_status, done.timed_out, done.lines, not done.exact, time.monotonic() - started
    )


async def _finish(
    server: TmuxServer,
    wrapper: Wrapper,
    pane: PaneInfo,
    prompt: Prompt,
    waiting: asyncio.Future[None],
    ended: bool,
    timeout: float,
) -> _Finished:
    """Disarm, then read the output."""
    try:
        state = await disarm(server, wrapper)
    except BaseException:
        await abandon(server, wrapper, waiting, interrupting=False)
        raise
    await waiting  # the disarm signalled it, if the wrapper had not
    report = Report.parse(state)
    if report is not None:  # ended, possibly between the timeout and the disarm
        try:
            lines, exact = await read_output(
                server, wrapper, prompt, report.end, (THEN, *wrapper.release), report.exit_status
            )
            mark_settling((pane.socket_path, pane.pane_id))
        except SchemuxError:  # the pane went with its shell: only the hold flag is left
            await drop_hold_flag(server, wrapper)
            raise
        return _Finished(lines, exact, report.exit_status, timed_out=False)
    if ended:
        raise SchemuxError(
            f"the wrapper in pane {pane.pane_id} reported {state!r}, not an end",
            suggestion="its shell was freed without its report (was schemux stalled for "
            f"{HOLD_SECONDS} s?); run the command again",
        )
    if await shell_facts(server).shell_reads_input(pane.pid):
        await interrupt(server, wrapper)
        raise SchemuxError(
            f"the shell in pane {pane.pane_id} did not start the command within "
            f"{timeout:g} s; it was still reading input (an unclosed quote, bracket or "
            "heredoc?), so the typed input was cancelled with C-c",
            suggestion="check the command's quoting; the pane is at its prompt again",
        )
    end = await output_end_now(server, wrapper)
    lines, exact = await read_output(server, wrapper, prompt, end, (), None)
    return _Finished(lines, exact, None, timed_out=True)


async def _cancelled_typing(
    server: TmuxServer, wrapper: Wrapper, typing: asyncio.Future[list[str]]
) -> None:
    """Cancelled while typing: the keys may be on their way; let them arrive, then undo."""
    with contextlib.suppress(Exception):
        await typing
    await abandon(server, wrapper, None, interrupting=True)


async def _cancelled_finishing(
    server: TmuxServer, wrapper: Wrapper, finishing: asyncio.Future[_Finished]
) -> None:
    """Cancelled while the output was read: let the reading end (it releases the shell),
    then interrupt the command if it still runs (the call had timed out)."""
    with contextlib.suppress(Exception):
        if (await finishing).timed_out:
            await interrupt(server, wrapper)
