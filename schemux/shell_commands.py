"""Running a command in a pane's interactive shell and reading back exactly its output.

The command is typed into the shell inside a wrapper that reports back to tmux from the
pane, once, after the command:

    printf '\r\33[K';(
    COMMAND
    );{tmux} if -F '#{@opt}' "set -pF @opt 'E $? #{E:@opt}';wait -S DONE;
                                run -bd HOLD -C '#{@hold}';wait RESUME;set -pu @opt"

It records the exit status and where the output ends (the armed option's value is that
format) in the private pane option ``@opt``,
signals DONE, and holds the shell until RESUME: the screen stays still while the output
is captured, so the shell's next prompt can neither join the last output row nor scroll
the rows we address. Where the output starts is found from the prompt's position and
text, read just before typing in the same tmux call (``schemux.shell_output``); the
``printf`` (a builtin) clears the row it starts on, where a shell without a line editor
(dash) printed its PS2 prompts after the terminal echoed the typed lines.

``@opt`` is set ("armed") by us before typing and removed by us (disarmed) as soon as the
wait ends, whatever ended it; the wrapper does nothing once it is gone, so a call that
timed out or was cancelled leaves no option, no channel signal and no waiting client
behind. A cancelled call also interrupts its command as a person's C-c would; a timed-out
one leaves it running.

The hold is bounded without schemux: with the option we set a server option ``@hold``
whose value is the timer's command (and the owner's mark: ``schemux.abandoned_wrappers``),
and remove it when we release the shell. tmux itself runs the timer ``HOLD_SECONDS``
after the report: it releases the shell if ``@hold`` is still there (its owner was killed
before its capture), and the wrapper then removes ``@opt``. The timer tests a server
option, not the pane's: it must not fail when the pane has gone, since tmux keeps such
an error for the next client that attaches. Names and formats live in options rather
than in the typed text because every character typed costs time.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shlex
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from schemux.abandoned_wrappers import REPORT_FORMAT, TOKEN_BYTES, WrapperNames
from schemux.errors import SchemuxError, TmuxCommandError
from schemux.processes import process_exit, this_process
from schemux.shell_facts import ShellFacts, shell_facts
from schemux.shell_output import (
    Cursor,
    Prompt,
    Report,
    after_last_mention,
    keep_tail,
    locate_output,
)
from schemux.shell_panes import check_shell_pane, shell_reads_input, until_shell_has_terminal
from schemux.targets import PaneInfo
from schemux.tmux import TmuxServer
from schemux.tmux_command import THEN
from schemux.tmux_format import parse_row, row_format, tmux_row

__all__ = [
    "Cursor",
    "Prompt",
    "Report",
    "ShellCommandResult",
    "after_last_mention",
    "check_command",
    "check_shell_pane",
    "keep_tail",
    "process_exit",
    "run_in_shell",
    "shell_reads_input",
    "until_shell_has_terminal",
]

# how long a wrapper holds its shell for the capture at most (the capture takes ms)
HOLD_SECONDS = 5
# how long a call waits for a pane that an interrupt or an earlier wrapper is leaving
SETTLE_SECONDS = 2.0
# how long a call waits for another call of ours on its pane to end (the client may have
# cancelled it, its notification still on the way) before it finds the pane busy
IN_FLIGHT_GRACE_SECONDS = 2.0  # a loaded machine was seen to need more than 0.5


@dataclass(frozen=True)
class ShellCommandResult:
    exit_status: int | None
    timed_out: bool
    lines: list[str]
    head_lost: bool  # the lines are a tail of the output: its start is not certain
    elapsed: float


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


class ShellCall:
    """The private names of one call, and the wrapper typed with them."""

    def __init__(self, server: TmuxServer, pane: PaneInfo, suppress_history: bool) -> None:
        self.token = secrets.token_hex(TOKEN_BYTES)
        self.names = names = WrapperNames(self.token)
        self.option, self.hold, self.done, self.resume = (
            names.option,
            names.hold,
            names.done,
            names.resume,
        )
        self.pane_id = pane.pane_id
        self.socket_path = pane.socket_path
        self.tmux = " ".join(shlex.quote(part) for part in (server.binary, "-S", pane.socket_path))
        # a leading space keeps it out of history
        prefix = " " if suppress_history else ""
        self.first_line = prefix + "printf '\\r\\33[K';("

    @property
    def release(self) -> tuple[str, ...]:
        """The tmux commands that free the shell the wrapper holds after its report."""
        return ("set-option", "-s", "-u", self.hold, THEN, "wait-for", "-S", self.resume)

    def keystrokes(self, command: str) -> str:
        # short: every character typed costs time. The report's format is the armed
        # option's value, and the timer's command is the hold flag's (both set with the
        # arming); run-shell expands #{hold} to it, and it tests the flag itself when it runs
        opt, pane = self.option, self.pane_id
        report = (
            f"{self.tmux} if -Ft{pane} '#{{{opt}}}' \"set -pFt{pane} {opt} 'E $? #{{E:{opt}}}';"
            f"wait -S {self.done};run -bd{HOLD_SECONDS} -C '#{{{self.hold}}}';"
            f'wait {self.resume};set -put{pane} {opt}"'
        )
        return f"{self.first_line}\n{command.rstrip()}\n);{report}"


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
    await _until_settled(pane, facts)
    await facts.check_shell_pane(pane)
    key = (pane.socket_path, pane.pane_id)
    if key in _in_flight:  # another call took the pane while this one waited for it
        raise SchemuxError(
            f"pane {pane.pane_id} is busy: another run_command call is running in it",
            suggestion="wait for that call to return, or target another pane",
        )
    _in_flight[key] = finished = asyncio.Event()
    try:
        return await _run_typed(server, pane, command, timeout, suppress_history)
    finally:
        finished.set()
        if _in_flight.get(key) is finished:
            del _in_flight[key]


@tmux_row
class _CursorRow:
    """Where a pane's cursor is, in its history (``Prompt``, ``Cursor``)."""

    history_size: int
    cursor_y: int
    cursor_x: int
    history_limit: int


async def _run_typed(
    server: TmuxServer, pane: PaneInfo, command: str, timeout: float, suppress_history: bool
) -> ShellCommandResult:
    call = ShellCall(server, pane, suppress_history)
    started = time.monotonic()
    typing = asyncio.ensure_future(server.run(
        "display-message", "-p", "-t", pane.pane_id, row_format(_CursorRow),
        THEN, "capture-pane", "-p", "-t", pane.pane_id,
        THEN, "set-option", "-p", "-t", pane.pane_id, call.option, REPORT_FORMAT,
        THEN, "set-option", "-s", call.hold, call.names.hold_value(this_process()),
        THEN, "send-keys", "-t", pane.pane_id, "-l", call.keystrokes(command),
        THEN, "send-keys", "-t", pane.pane_id, "Enter",
    ))  # fmt: skip
    try:
        typed = await asyncio.shield(typing)
    except asyncio.CancelledError:
        await asyncio.shield(_settle(call, _cancelled_typing(server, call, typing)))
        raise
    at = parse_row(_CursorRow, typed[0])
    prompt = Prompt.at(at.history_size, at.cursor_y, at.cursor_x, typed[1:])
    waiting = asyncio.ensure_future(server.wait(call.done))
    try:
        finished, _ = await asyncio.wait({waiting}, timeout=timeout)
    except asyncio.CancelledError:
        await asyncio.shield(_settle(call, _abandon(server, call, waiting, interrupt=True)))
        raise
    except BaseException:
        await asyncio.shield(_abandon(server, call, waiting, interrupt=False))
        raise
    # shielded as one step: once disarmed, this reads the output and releases the shell
    finishing = asyncio.ensure_future(
        _finish(server, call, pane, prompt, waiting, bool(finished), timeout)
    )
    try:
        lines, exact, status, timed_out = await asyncio.shield(finishing)
    except asyncio.CancelledError:
        await asyncio.shield(_settle(call, _cancelled_finishing(server, call, finishing)))
        raise
    return ShellCommandResult(status, timed_out, lines, not exact, time.monotonic() - started)


async def _finish(
    server: TmuxServer,
    call: ShellCall,
    pane: PaneInfo,
    prompt: Prompt,
    waiting: asyncio.Future[None],
    ended: bool,
    timeout: float,
) -> tuple[list[str], bool, int | None, bool]:
    """Disarm, then read the output: (lines, exact, exit status, timed out)."""
    try:
        state = await _disarm(server, call)
    except BaseException:
        await _abandon(server, call, waiting, interrupt=False)
        raise
    await waiting  # the disarm signalled it, if the wrapper had not
    report = Report.parse(state)
    if report is not None:  # ended, possibly between the timeout and the disarm
        try:
            lines, exact = await _capture_output(
                server, call, prompt, report.cursor, (THEN, *call.release), report.exit_status
            )
            _mark_settling(call)
        except SchemuxError:  # the pane went with its shell: only the hold flag is left
            with contextlib.suppress(SchemuxError):
                await server.run("set-option", "-s", "-u", call.hold)
            raise
        return lines, exact, report.exit_status, False
    if ended:
        raise SchemuxError(
            f"the wrapper in pane {pane.pane_id} reported {state!r}, not an end",
            suggestion="its shell was freed without its report (was schemux stalled for "
            f"{HOLD_SECONDS} s?); run the command again",
        )
    if await shell_facts(server).shell_reads_input(pane.pid):
        await _interrupt(server, call)
        raise SchemuxError(
            f"the shell in pane {pane.pane_id} did not start the command within "
            f"{timeout:g} s; it was still reading input (an unclosed quote, bracket or "
            "heredoc?), so the typed input was cancelled with C-c",
            suggestion="check the command's quoting; the pane is at its prompt again",
        )
    now = await _in_pane(
        server, call, "display-message", "-p", "-t", call.pane_id,
        row_format(_CursorRow),
    )  # fmt: skip
    at = parse_row(_CursorRow, now[0])
    cursor = Cursor(at.history_size, at.cursor_y, at.cursor_x, at.history_limit)
    lines, exact = await _capture_output(server, call, prompt, cursor, (), None)
    return lines, exact, None, True


# panes with a call of ours in flight: set when it has ended, its cleanup included
_in_flight: dict[tuple[str, str], asyncio.Event] = {}

# panes whose shell a cancelled call of ours is bringing back to its prompt: the
# cleanup (which interrupts the command), and until when the command may still be leaving
_settling: dict[tuple[str, str], tuple[asyncio.Future[None], float]] = {}


def _settle(call: ShellCall, cleanup: Coroutine[Any, Any, None]) -> asyncio.Future[None]:
    """Run ``cleanup`` as a task that the next call on the pane waits for. Registered
    before the first await: a next call that overtakes the cancellation sees it."""
    task = asyncio.ensure_future(cleanup)
    _mark_settling(call, task)
    return task


def _mark_settling(call: ShellCall, task: asyncio.Future[None] | None = None) -> None:
    """The pane's shell is on its way back to its prompt (after a released wrapper, or
    ``task``): the next call within SETTLE_SECONDS waits for it, e.g. for a slow prompt
    command, rather than finding the pane busy."""
    now = time.monotonic()
    for key in [key for key, (task, until) in _settling.items() if task.done() and until < now]:
        del _settling[key]
    if task is None:
        task = asyncio.get_running_loop().create_future()
        task.set_result(None)
    _settling[(call.socket_path, call.pane_id)] = (task, now + SETTLE_SECONDS)


async def _until_settled(pane: PaneInfo, facts: ShellFacts) -> None:
    """Wait (boundedly) for what an earlier call left leaving the pane's terminal: the
    cleanup of a cancelled call and the command it interrupted, or the tmux client of a
    released wrapper."""
    running = _in_flight.get((pane.socket_path, pane.pane_id))
    if running is not None:  # perhaps cancelled, the cancellation not arrived yet
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(running.wait(), IN_FLIGHT_GRACE_SECONDS)
    entry = _settling.pop((pane.socket_path, pane.pane_id), None)
    if entry is not None and not (entry[0].done() and entry[1] < time.monotonic()):
        if not entry[0].done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(entry[0]), SETTLE_SECONDS)
        # from now, not from when the cleanup began: the interrupted command (a trap, say)
        # may still be on its way out when the cleanup's own work is done
        await facts.until_shell_has_terminal(pane.pid, SETTLE_SECONDS)
    elif await facts.earlier_wrapper_leaving(pane.pid):
        await facts.until_shell_has_terminal(pane.pid, SETTLE_SECONDS)
    if await facts.shell_reads_input(pane.pid):
        await facts.until_line_editor_reads(pane.pid, SETTLE_SECONDS)


async def _cancelled_typing(
    server: TmuxServer, call: ShellCall, typing: asyncio.Future[list[str]]
) -> None:
    """Cancelled while typing: the keys may be on their way; let them arrive, then undo."""
    with contextlib.suppress(Exception):
        await typing
    await _abandon(server, call, None, interrupt=True)


async def _cancelled_finishing(
    server: TmuxServer,
    call: ShellCall,
    finishing: asyncio.Future[tuple[list[str], bool, int | None, bool]],
) -> None:
    """Cancelled while the output was read: let the reading end (it releases the shell),
    then interrupt the command if it still runs (the call had timed out)."""
    with contextlib.suppress(Exception):
        if (await finishing)[3]:
            await _interrupt(server, call)


async def _interrupt(server: TmuxServer, call: ShellCall) -> None:
    """C-c into the pane, as a person would: the terminal sends SIGINT to its foreground
    process group (the command, or the shell discarding unfinished input)."""
    await server.run("send-keys", "-t", call.pane_id, "C-c")


async def _disarm(server: TmuxServer, call: ShellCall) -> str:
    """Read and remove the option in one tmux call, after which the wrapper does nothing;
    unless the wrapper already reported (and so signalled DONE, and holds its shell until
    we release it), signal DONE ourselves and remove the hold flag: our waiter always
    wakes, and nothing stays signalled or set behind it."""
    lines = await _in_pane(
        server, call,
        "display-message", "-p", "-t", call.pane_id, f"#{{{call.option}}}", THEN,
        "if-shell", "-F", "-t", call.pane_id, f"#{{!=:#{{=1:#{{{call.option}}}}},E}}",
        f"wait-for -S {call.done};set-option -s -u {call.hold}", THEN,
        "set-option", "-p", "-u", "-t", call.pane_id, call.option,
    )  # fmt: skip
    return lines[0] if lines else ""


async def _in_pane(server: TmuxServer, call: ShellCall, *args: str) -> list[str]:
    """A tmux command on the call's pane, which may have been closed meanwhile."""
    try:
        return await server.run(*args)
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        raise SchemuxError(
            f"pane {call.pane_id} was closed while the command ran; its exit status and "
            "output are lost",
            suggestion="run it again in a pane that stays open",
        ) from None


async def _abandon(
    server: TmuxServer, call: ShellCall, waiting: asyncio.Future[None] | None, *, interrupt: bool
) -> None:
    """Leave nothing behind after a cancelled or failed call: no option, no waiter, no
    shell held by the wrapper; with ``interrupt``, no command still running either."""
    try:
        state = await _disarm(server, call)
        if Report.parse(state) is not None:
            await server.run(*call.release)
        elif interrupt:
            await _interrupt(server, call)
    except SchemuxError:  # the pane or the server is gone
        with contextlib.suppress(SchemuxError):
            await server.run("set-option", "-s", "-u", call.hold)
        if waiting is not None:
            waiting.cancel()  # end the waiter's client
    if waiting is not None:
        with contextlib.suppress(BaseException):
            await waiting


async def _capture_output(
    server: TmuxServer,
    call: ShellCall,
    prompt: Prompt,
    cursor: Cursor,
    then: tuple[str, ...],
    status: int | None,
) -> tuple[list[str], bool]:
    """The output rows up to ``cursor``, and whether they are all of it.

    ``then`` (further tmux commands) runs in the same tmux call as the capture;
    ``status`` (None while the command runs) is for the message when the output cannot
    be found.
    """
    first = cursor.first_row_since(prompt)
    # when the echo may be gone with dropped history, the terminal's echo setting may be
    # needed, read while the wrapper still holds the shell: release only afterwards
    now, later = (then, ()) if first is not None else ((), then[1:])
    try:
        lines = await _in_pane(
            server, call, "capture-pane", "-p", "-J", "-t", call.pane_id,
            "-S", "-" if first is None else str(first), "-E", str(cursor.last_output_row),
            *now,
        )  # fmt: skip
        located = locate_output(lines, call.token, prompt.echo_head(call.first_line))
        if located is not None:
            return located.lines, located.exact
        if first is None and await shell_facts(server).echo_on(await _pane_tty(server, call)):
            # the echo was on and is gone: tmux dropped it, and every row older than it,
            # so every row left came after it
            return lines, False
    finally:
        if later:
            await asyncio.shield(_in_pane(server, call, *later))
    ran = "is still running" if status is None else f"ran and exited with status {status}"
    raise SchemuxError(
        f"the command in pane {call.pane_id} {ran}, but its output cannot be told apart "
        "from the prompt: the shell did not echo the typed command, so where the output "
        "starts is unknown (is the terminal's echo off?)",
        suggestion="turn the echo back on (run_command `stty echo`) and run it again",
    )


async def _pane_tty(server: TmuxServer, call: ShellCall) -> str:
    lines = await _in_pane(server, call, "display-message", "-p", "-t", call.pane_id, "#{pane_tty}")
    return lines[0] if lines else ""
