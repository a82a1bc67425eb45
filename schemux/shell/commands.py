"""One run_command call in a pane's interactive shell: type the command inside its
wrapper, wait for its report, read its output, and undo what each step left when the call
is cancelled or fails.

The wrapper and its life in tmux are in ``schemux.shell.wrapper``. Waiting for a pane
that earlier calls are leaving is in ``schemux.shell.settling``, and reading the output
rows in ``schemux.shell.capture``, over the pure ``schemux.shell.output``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from schemux.errors import (
    PaneBusy,
    SchemuxError,
    ShellBusy,
    ShellNotStarted,
    TmuxCommandError,
)
from schemux.hosts.protocol import ShellReports
from schemux.panes.claims import PaneClaim
from schemux.panes.targets import PaneInfo
from schemux.shell.capture import output_end_now, shows_nothing_yet, until_prompt_shown
from schemux.shell.facts import ShellFacts, shell_facts
from schemux.shell.hooked import GONE_POLL_SECONDS, HookedCall, OutputLineEnds, run_hooked
from schemux.shell.output import (
    INTERRUPTED_STATUS,
    Finished,
    Report,
    keep_tail,
    through_interrupt_echo,
    without_interrupt_echo,
)
from schemux.shell.readiness import pane_hooks
from schemux.shell.reported import run_reported
from schemux.shell.settling import TYPING_GRACE_SECONDS, PaneSettling, until_line_taken_in
from schemux.shell.typed_command import typed_command
from schemux.shell.wrapped import WrapperOutcome, WrapperTypist
from schemux.shell.wrapper import (
    FISH,
    GONE_BEFORE_TYPING,
    POSIX,
    Wrapper,
    abandon,
    disarm,
    drop_hold_flag,
    input_unfinished,
    interrupt,
    pane_closed,
    pane_gone,
    typed,
    woken,
)
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer

SHELL_START_POLL_SECONDS = 0.02  # a new pane's fork execs its shell in a few ms

# keep_tail is the tail rule of every tool that returns a command's output lines
__all__ = ("ShellCommandResult", "check_command", "keep_tail", "run_in_shell")


@dataclass(frozen=True)
class ShellCommandResult:
    exit_status: int | None
    timed_out: bool
    lines: list[str]
    head_lost: bool  # the lines are a tail of the output: its start is not certain
    elapsed: float
    # of a tail, the lines of the output's head tmux dropped: exact where the call's
    # recording saw the output (``Located.counted``), else the rows tmux is known to
    # have dropped (tmux keeps no count of the rows its history-limit drops)
    lines_lost: int = 0


def check_command(command: str) -> None:
    """Refuse a command that cannot be typed as given (before any tmux work)."""
    if not command.strip():
        raise SchemuxError("command must not be empty", suggestion="pass the shell command to run")
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
    seen: OutputLineEnds | None = None,
    before_typing: Callable[[], Awaitable[object]] | None = None,
) -> ShellCommandResult:
    """Type ``command`` into the idle shell of ``pane`` and wait up to ``timeout`` seconds.
    ``seen``: what sees the pane's output meanwhile (the call's recording), which counts
    the lines tmux's history-limit drops in a shell with the hooks; ``before_typing`` is
    awaited just before the keys (a recording's beginning).

    Cancelled, the call interrupts the command (C-c) and leaves nothing behind."""
    check_command(command)
    started = time.monotonic()
    facts = shell_facts(server)  # read where the server runs (schemux.shell.facts)
    settling = server.shared(PaneSettling)
    await settling.until_ours_ended(pane, timeout)
    async with settling.occupying(server, pane) as claim:
        try:
            # the claim is taken by the first command list sent with it: the hooks'
            # reading where the pane may have them (before a hooked call arms them), else
            # the typing
            hooks = await pane_hooks(server, pane, timeout, claim)  # a first prompt may come
            await settling.until_settled(pane, facts, edits=hooks is not None)
            shell = await shell_once_started(server, facts, pane, started, timeout)
        except TmuxCommandError as error:
            if error.target_gone:
                raise pane_gone(pane.pane_id, GONE_BEFORE_TYPING) from None
            raise
        hooked = None
        if hooks is not None:
            with contextlib.suppress(OSError):  # its armed file's directory is not ours
                hooked = HookedCall(server, pane, hooks, seen, claim)
        command = typed_command(
            command, shell, hooked=hooked is not None, suppress_history=suppress_history
        )
        if hooked is None:
            await until_prompt_shown(server, pane, timeout - (time.monotonic() - started))
        if before_typing is not None:
            await before_typing()
        left = max(timeout - (time.monotonic() - started), 0.0)
        if hooked is not None:
            done = await run_hooked(
                server, hooked, command, timeout=left, suppress_history=suppress_history
            )
        else:
            syntax = FISH if shell == "fish" else POSIX
            reports = await _shell_reports(server, pane)
            wrapper = Wrapper(server, pane, suppress_history, syntax=syntax, reports=reports)
            typist = WrapperTypist(wrapper)
            if reports is not None:
                done = await run_reported(server, pane, typist, claim, command, left, reports)
            else:
                done = await _run_typed(server, pane, typist, claim, command, left)
    return _result(done, time.monotonic() - started)


async def _shell_reports(server: TmuxServer, pane: PaneInfo) -> ShellReports | None:
    """The pipes the wrapper reports through to the host's helper
    (``schemux.shell.reported``), where one runs and sees the server's pids; else None:
    the wrapper reports to tmux, by a tmux client."""
    host = server.address.host
    helper = None if host.pids_here else host.facts_helper()
    if helper is None or not server.helper_sees_pids:
        return None
    return await helper.shell_reports(pane.pid)


def _result(done: Finished, elapsed: float) -> ShellCommandResult:
    return ShellCommandResult(
        done.exit_status,
        done.timed_out,
        done.output.lines,
        not done.output.exact,
        elapsed,
        done.output.lines_lost,
    )


async def shell_once_started(
    server: TmuxServer, facts: ShellFacts, pane: PaneInfo, started: float, timeout: float
) -> str:
    """The shell that reads the typed keys (``check_shell_pane``), once a pane made a
    moment ago has become its shell (its first call may come before tmux's fork execs
    it) and reached its first prompt (its startup files may run a job in the foreground
    first, while the pane shows nothing): waited for until ``timeout`` seconds after
    ``started`` (``time.monotonic``), then refused. A job started at a prompt is refused at
    once."""
    deadline = started + timeout
    while True:
        try:
            return await facts.check_shell_pane(pane)
        except ShellBusy:
            if not await shows_nothing_yet(server, pane):
                # read again: the job (a prompt command's, say) may have ended
                # and the prompt been drawn between the two readings
                return await facts.check_shell_pane(pane)
            starting = ShellNotStarted(
                f"the shell in pane {pane.pane_id} has not shown its prompt (a job of its "
                "startup files holds its terminal, and the pane shows nothing yet)"
            )
        except ShellNotStarted as not_started:
            starting = not_started
        if time.monotonic() >= deadline:
            raise SchemuxError(
                f"{starting.message} after {timeout:g} s (the call's timeout); nothing was typed",
                suggestion="call again with a longer timeout",
            ) from None
        await asyncio.sleep(SHELL_START_POLL_SECONDS)


async def _run_typed(
    server: TmuxServer,
    pane: PaneInfo,
    typist: WrapperTypist,
    claim: PaneClaim,
    command: str,
    timeout: float,
) -> Finished:
    wrapper = typist.wrapper
    settle = server.shared(PaneSettling).settle
    # the claim, when no earlier list took it, between reading the prompt and the arming
    typing = asyncio.ensure_future(claim.run(*typist.prompt_reading(), then=typist.keys(command)))
    try:
        typist.typed(await typed(pane.pane_id, typing))
    except asyncio.CancelledError:
        await asyncio.shield(settle(pane.pane_id, _cancelled_typing(server, pane, wrapper, typing)))
        raise
    waiting = asyncio.ensure_future(server.wait(wrapper.done))
    try:
        ended = await _until_done_or_gone(server, pane, typist, waiting, timeout)
    except asyncio.CancelledError:
        await asyncio.shield(
            settle(pane.pane_id, _cancelled_waiting(server, pane, wrapper, waiting))
        )
        raise
    except BaseException:
        await asyncio.shield(abandon(server, wrapper, waiting, interrupting=False))
        raise
    # shielded as one step: once disarmed, this reads the output and releases the shell
    finishing = asyncio.ensure_future(_finish(server, typist, pane, claim, waiting, ended, timeout))
    try:
        return await asyncio.shield(finishing)
    except asyncio.CancelledError:
        await asyncio.shield(settle(pane.pane_id, _cancelled_finishing(server, wrapper, finishing)))
        raise


async def _until_done_or_gone(
    server: TmuxServer,
    pane: PaneInfo,
    typist: WrapperTypist,
    waiting: asyncio.Future[None],
    timeout: float,
) -> WrapperOutcome:
    """How the wait for the wrapper's report ended. A few times a second the pane is
    looked at too: closed (or dead) meanwhile, it is the call's error as soon as tmux
    tells it, not at the timeout; reported without the signal reaching the waiter (a
    waiter's client lost, or a stale one on the channel), the report is taken; a typed
    wrapper whose command ran and whose shell reads input again without a report was
    dropped with its command by an interrupt (a C-c kills the job and the rest of its
    line)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    back = graced = False
    while True:
        left = deadline - loop.time()
        finished, _ = await asyncio.wait({waiting}, timeout=min(max(left, 0), GONE_POLL_SECONDS))
        if finished:
            failure = waiting.exception()
            # a waiter whose client failed (a dropped ssh connection takes it with the
            # others) woke for no report: the report alone says whether the command ended
            if failure is None or await _pane_state(server, typist.wrapper) == "E":
                return WrapperOutcome.REPORTED
            raise failure
        if left <= GONE_POLL_SECONDS:
            reading = await shell_facts(server).shell_reads_input(pane.pid)
            if graced or not reading:
                return WrapperOutcome.TIMED_OUT
            # still taking the typed line in (a line editor whose plugins redraw at every
            # key can take longer than a short timeout): a grace for it to start the
            # command, so the call says what it ran rather than blame the quoting
            graced = True
            deadline = loop.time() + TYPING_GRACE_SECONDS
            continue
        state = await _pane_state(server, typist.wrapper)
        if state is None:
            raise pane_closed(pane.pane_id)
        if state == "E":
            return WrapperOutcome.REPORTED
        if graced and not await shell_facts(server).shell_reads_input(pane.pid):
            return WrapperOutcome.TIMED_OUT  # the command started, past the timeout
        dropped = await typist.dropped(server, pane)
        if back and dropped:  # twice in a row, a poll apart: not a moment between jobs
            return WrapperOutcome.ABORTED
        back = dropped


async def _pane_state(server: TmuxServer, wrapper: Wrapper) -> str | None:
    """None when the pane is gone or dead; else the first letter of the wrapper's option
    ("E" once it reported)."""
    try:
        lines = await server.run(
            "display-message", "-p", "-t", wrapper.pane_id,
            f"#{{pane_dead}}#{{=1:#{{{wrapper.option}}}}}",
        )  # fmt: skip
    except TmuxCommandError as error:
        if error.target_gone:
            return None
        raise
    if not lines or not lines[0].startswith("0"):
        return None
    return lines[0][1:]


async def _finish(
    server: TmuxServer,
    typist: WrapperTypist,
    pane: PaneInfo,
    claim: PaneClaim,
    waiting: asyncio.Future[None],
    ended: WrapperOutcome,
    timeout: float,
) -> Finished:
    """Disarm, then read the output (releasing the shell and the claim with it, when the
    command reported)."""
    wrapper = typist.wrapper
    try:
        state = await disarm(server, wrapper, waited=True)
    except BaseException:
        await abandon(server, wrapper, waiting, interrupting=False)
        raise
    await woken(waiting)
    report = Report.parse(state)
    if report is not None:  # ended, possibly between the timeout and the disarm
        # while the wrapper holds the shell: tmux's answers to queries the command
        # wrote, taken off its terminal before the shell's line editor reads them
        await shell_facts(server).take_terminal_answers(pane.pid)
        try:
            output = await typist.read(
                server, report.end, (THEN, *wrapper.release, *claim.releasing()), report.exit_status
            )
            claim.released = True
            server.shared(PaneSettling).mark_settling(pane.pane_id)
        except SchemuxError:  # the pane went with its shell: only the hold flag is left
            await drop_hold_flag(server, wrapper)
            raise
        lines = without_interrupt_echo(output.lines, report.exit_status)
        output = dataclasses.replace(output, lines=lines)
        return Finished(output, report.exit_status, timed_out=False)
    if ended is WrapperOutcome.ABORTED:
        # the shell drew its prompt after the interrupt: the output ends on the row above
        now = await output_end_now(server, wrapper.pane_id)
        end = dataclasses.replace(now, column=0)
        output = await typist.read(server, end, (), INTERRUPTED_STATUS)
        lines = without_interrupt_echo(through_interrupt_echo(output.lines), INTERRUPTED_STATUS)
        output = dataclasses.replace(output, lines=lines)
        return Finished(output, INTERRUPTED_STATUS, timed_out=False)
    if ended is WrapperOutcome.REPORTED:
        raise SchemuxError(
            f"the wrapper in pane {pane.pane_id} reported {state!r}, not an end",
            suggestion="its shell was freed without its report (schemux's control client "
            "of that tmux server ended meanwhile?); run the command again",
        )
    if await shell_facts(server).shell_reads_input(pane.pid):
        await interrupt(server, wrapper)
        raise input_unfinished(pane.pane_id, timeout)
    end = await output_end_now(server, wrapper.pane_id)
    return Finished(await typist.read(server, end, (), None), None, timed_out=True)


async def _cancelled_typing(
    server: TmuxServer, pane: PaneInfo, wrapper: Wrapper, typing: asyncio.Future[list[str]]
) -> None:
    """Undo a call cancelled while typing. The keys may be on their way, so they are let
    arrive first; then the call is undone as one cancelled while waiting is, with a
    waiter of its own, since the command may end and its wrapper report (signalling the
    call's channel) before the undoing begins."""
    try:
        await typing
    except PaneBusy:  # refused before anything was armed or typed: the pane is another's
        return
    except Exception:  # the keys' tmux command failed: nothing typed, nothing to report
        await abandon(server, wrapper, None, interrupting=True)
        return
    waiting = asyncio.ensure_future(server.wait(wrapper.done))
    await _cancelled_waiting(server, pane, wrapper, waiting)


async def _cancelled_waiting(
    server: TmuxServer, pane: PaneInfo, wrapper: Wrapper, waiting: asyncio.Future[None]
) -> None:
    """Cancelled while its command ran, or while its shell still took the typed line in
    (the call may be cancelled a moment after the keys were answered): undo once the shell
    has taken it in."""
    await until_line_taken_in(server, pane)
    await abandon(server, wrapper, waiting, interrupting=True)


async def _cancelled_finishing(
    server: TmuxServer, wrapper: Wrapper, finishing: asyncio.Future[Finished]
) -> None:
    """Cancelled while the output was read: let the reading end (it releases the shell),
    then interrupt the command if it still runs (the call had timed out)."""
    with contextlib.suppress(Exception):
        if (await finishing).timed_out:
            await interrupt(server, wrapper)
