"""One run_command call typed inside the wrapper into a shell on a host whose helper runs
(``schemux.hosts.programs.remote``): the wrapper reports the command's end to the helper
through a pipe of the helper's (``hosts.protocol.ShellReports``, opened through
``/proc``), with shell builtins only, and then reads the helper's answer, which holds the
shell while the call reads the output: no tmux client, no option, no channel of tmux's.

The wrapper is ``schemux.shell.wrapper``'s, with that report in place of its tmux client
(``Syntax.reported``); the prompt and the output are read as for it
(``schemux.shell.wrapped``). Where the output ends is the terminal's cursor once the
report came and tmux has read all the command wrote (the terminal barrier, by the
helper). A report no call waits for (its call timed out or was cancelled) is answered
at once; the helper's end ends every hold, since the shell then reads the end of the
pipe.
"""

from __future__ import annotations

import asyncio
import dataclasses

from schemux.errors import SchemuxError
from schemux.hosts.protocol import ShellReports
from schemux.panes.claims import PaneClaim
from schemux.panes.targets import PaneInfo
from schemux.shell.capture import output_end_now
from schemux.shell.facts import shell_facts
from schemux.shell.hooked import GONE_POLL_SECONDS
from schemux.shell.output import (
    INTERRUPTED_STATUS,
    Finished,
    through_interrupt_echo,
    without_interrupt_echo,
)
from schemux.shell.settling import TYPING_GRACE_SECONDS, PaneSettling, until_line_taken_in
from schemux.shell.wrapped import WrapperOutcome, WrapperTypist
from schemux.shell.wrapper import (
    input_unfinished,
    pane_closed,
    pane_dead,
    send_interrupt,
    typed,
)
from schemux.tmux.server import TmuxServer


async def run_reported(
    server: TmuxServer,
    pane: PaneInfo,
    typist: WrapperTypist,
    claim: PaneClaim,
    command: str,
    timeout: float,
    reports: ShellReports,
) -> Finished:
    """Type ``command`` in its wrapper (``typist``'s, made with ``reports``) into the idle
    shell of ``pane`` and wait up to ``timeout`` seconds. Cancelled, the call interrupts
    the command (C-c) and leaves nothing behind."""
    token = typist.wrapper.token
    settle = server.shared(PaneSettling).settle
    lines = reports.arm(token)
    try:
        # the claim, when no earlier list took it, between reading the prompt and typing
        typing = asyncio.ensure_future(
            claim.run(*typist.prompt_reading(), then=typist.keys(command))
        )
        try:
            typist.typed(await typed(pane.pane_id, typing))
        except asyncio.CancelledError:
            await asyncio.shield(
                settle(pane.pane_id, _cancelled(server, pane, reports, token, typing))
            )
            raise
        try:
            ended, status = await _until_reported(server, pane, typist, lines, timeout)
        except asyncio.CancelledError:
            await asyncio.shield(settle(pane.pane_id, _cancelled(server, pane, reports, token)))
            raise
        # shielded as one step: it reads the output and lets the shell go on
        finishing = asyncio.ensure_future(
            _finish(server, typist, pane, claim, reports, ended, status, timeout)
        )
        try:
            return await asyncio.shield(finishing)
        except asyncio.CancelledError:
            await asyncio.shield(
                settle(pane.pane_id, _cancelled_finishing(server, pane, finishing))
            )
            raise
    finally:
        reports.disarm(token)  # a report not answered yet, or a later one, goes on


async def _until_reported(
    server: TmuxServer,
    pane: PaneInfo,
    typist: WrapperTypist,
    lines: asyncio.Queue[str | None],
    timeout: float,
) -> tuple[WrapperOutcome, int | None]:
    """How the wait for the wrapper's report ended, and the command's status. A few
    times a second the pane is looked at too, as ``shell.commands`` does: closed, it is
    the call's error at once; a typed wrapper whose shell reads input again below it
    without a report was dropped with its command by an interrupt."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    back = graced = False
    while True:
        left = deadline - loop.time()
        try:
            line = await asyncio.wait_for(lines.get(), min(max(left, 0), GONE_POLL_SECONDS))
        except TimeoutError:
            pass
        else:
            if line is None:
                raise SchemuxError(
                    f"the program helper on {server.address.describe()} ended while the "
                    f"command in pane {pane.pane_id} ran; its exit status and output are lost",
                    suggestion="run it again (the next call starts a new helper)",
                )
            return WrapperOutcome.REPORTED, int(line.split(" ")[1])
        if left <= GONE_POLL_SECONDS:
            if graced or not await shell_facts(server).shell_reads_input(pane.pid):
                return WrapperOutcome.TIMED_OUT, None
            graced = True  # still taking the typed line in: as shell.commands says
            deadline = loop.time() + TYPING_GRACE_SECONDS
            continue
        if await pane_dead(server, pane.pane_id):
            raise pane_closed(pane.pane_id)
        if graced and not await shell_facts(server).shell_reads_input(pane.pid):
            return WrapperOutcome.TIMED_OUT, None  # the command started, past the timeout
        dropped = await typist.dropped(server, pane)
        if back and dropped:  # twice in a row, a poll apart: not a moment between jobs
            return WrapperOutcome.ABORTED, None
        back = dropped


async def _finish(
    server: TmuxServer,
    typist: WrapperTypist,
    pane: PaneInfo,
    claim: PaneClaim,
    reports: ShellReports,
    ended: WrapperOutcome,
    status: int | None,
    timeout: float,
) -> Finished:
    """Read the output; once the command reported, while the wrapper holds the shell,
    releasing the claim with the capture and then letting the shell go on."""
    wrapper = typist.wrapper
    facts = shell_facts(server)
    if ended is WrapperOutcome.REPORTED and status is not None:
        # tmux's answers to queries the command wrote, taken off its terminal (and all
        # it wrote read by tmux) before the end is read
        await facts.take_terminal_answers(pane.pid)
        end = await output_end_now(server, pane.pane_id)
        output = await typist.read(server, end, claim.releasing(), status)
        claim.released = True
        reports.go_on()
        server.shared(PaneSettling).mark_settling(pane.pane_id)
        lines = without_interrupt_echo(output.lines, status)
        return Finished(dataclasses.replace(output, lines=lines), status, timed_out=False)
    reports.disarm(wrapper.token)
    if ended is WrapperOutcome.ABORTED:
        # the shell drew its prompt after the interrupt: the output ends on the row above
        now = await output_end_now(server, pane.pane_id)
        output = await typist.read(
            server, dataclasses.replace(now, column=0), (), INTERRUPTED_STATUS
        )
        lines = without_interrupt_echo(through_interrupt_echo(output.lines), INTERRUPTED_STATUS)
        return Finished(
            dataclasses.replace(output, lines=lines), INTERRUPTED_STATUS, timed_out=False
        )
    if await facts.shell_reads_input(pane.pid):
        await send_interrupt(server, pane.pane_id)
        raise input_unfinished(pane.pane_id, timeout)
    end = await output_end_now(server, pane.pane_id)
    return Finished(await typist.read(server, end, (), None), None, timed_out=True)


async def _cancelled(
    server: TmuxServer,
    pane: PaneInfo,
    reports: ShellReports,
    token: str,
    typing: asyncio.Future[list[str]] | None = None,
) -> None:
    """Undo a call cancelled while typing (its keys let arrive first) or waiting: once
    the shell has taken the typed line in, its report is answered at once from now, and
    its command interrupted unless it had reported."""
    if typing is not None:
        try:
            await typing
        except Exception:  # nothing was typed: the pane is another's, or the keys failed
            reports.disarm(token)
            return
    await until_line_taken_in(server, pane)
    reported = reports.unanswered > 0
    reports.disarm(token)
    if not reported:
        await send_interrupt(server, pane.pane_id)


async def _cancelled_finishing(
    server: TmuxServer, pane: PaneInfo, finishing: asyncio.Future[Finished]
) -> None:
    """Cancelled while the output was read: let the reading end (it lets the shell go
    on), then interrupt the command if it still runs (the call had timed out)."""
    try:
        result = await finishing
    except Exception:
        return
    if result.timed_out:
        await send_interrupt(server, pane.pane_id)
