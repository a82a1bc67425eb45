"""One shell command run in the agent pane of many hosts at once, each host's answer its own.

Each host of the call's fleet runs the command as ``run_command`` runs one without a
target there (``shell.commands.run_in_shell`` in the pane ``panes.targets.resolve_pane`` picks),
in a task of its own, the host held in use meanwhile (never closed as idle under it); the
fleet lets only a few hosts connect at once, so a thousand hosts never open a thousand
connections in one burst. A host that cannot be reached, whose tmux server goes away,
or that is slow answers its own error or timeout, and the others are not held up by it.
The call's timeout is each host's, counted from the call's start and connecting
included. A host's fault is its answer, never the call's; only bad input, refused before
anything runs, is.

Cancelled, the call cancels every host's run, each of which interrupts its command and
cleans up as a cancelled ``run_command`` does; the call ends once all of them have.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from schemux.domain.call import Call
from schemux.errors import SchemuxError
from schemux.panes.targets import PaneTarget, resolve_pane
from schemux.shell.commands import ShellCommandResult, check_command, run_in_shell

logger = logging.getLogger("schemux")


@dataclass(frozen=True)
class HostAnswer:
    """What one host answered: its command's result, or why it gave none."""

    host: str
    elapsed: float
    pane_id: str | None = None
    result: ShellCommandResult | None = None
    error: str | None = None

    def describe(self) -> str:
        """The answer in a progress message: "exit 0", "timed out", "error"."""
        if self.result is None:
            return "error"
        if self.result.timed_out:
            return "timed out"
        return f"exit {self.result.exit_status}"


async def run_on_hosts(
    call: Call,
    hosts: Sequence[str],
    command: str,
    *,
    timeout: float,
    suppress_history: bool,
) -> list[HostAnswer]:
    """Run ``command`` on every host named in ``hosts`` (configured ones) at once; their
    answers in the same order. A command the shells could not take is refused before
    any host is reached."""
    check_command(command)
    if call.notes is not None:
        call.notes.note_hosts(hosts)
    started = time.monotonic()
    answered = 0
    first_contacts = asyncio.Semaphore(call.settings.fleet.max_connecting)

    async def one(name: str) -> HostAnswer:
        nonlocal answered
        there = call.on(name)
        async with there.scope.in_use():
            # a host not connected yet is reached (connected, its server and the agent's
            # shell started) a few at a time: 200 reached at once on 2 cores shared the
            # cores among them all, and none was reached within the call's 30 s
            first = first_contacts if not there.scope.connected else contextlib.nullcontext()
            answer = await _run_on_host(there, command, started, timeout, suppress_history, first)
        answered += 1
        await call.progress.announce(
            f"host {name}: {answer.describe()}; {answered} of {len(hosts)} hosts answered"
        )
        return answer

    async with asyncio.TaskGroup() as group:
        runs = [group.create_task(one(name)) for name in hosts]
    return [run.result() for run in runs]


async def _run_on_host(
    call: Call,
    command: str,
    started: float,
    timeout: float,
    suppress_history: bool,
    first_contact: contextlib.AbstractAsyncContextManager[object],
) -> HostAnswer:
    """One host's run (``call`` on it), reaching it under ``first_contact``; whatever
    goes wrong on it is its answer."""
    name = call.host_name
    pane_id = None
    try:
        try:
            with anyio.fail_after(timeout):
                async with first_contact:
                    server = call.tmux()
                    pane = await resolve_pane(server, PaneTarget(), call.notes)
        except TimeoutError:
            raise SchemuxError(
                f"host {name} was not reached within {timeout:g} s (the call's timeout); "
                "nothing was typed",
                suggestion="check the host (schemux doctor), or call again with a longer timeout",
            ) from None
        pane_id = pane.pane_id
        left = max(timeout - (time.monotonic() - started), 0.0)
        result = await run_in_shell(
            server, pane, command, timeout=left, suppress_history=suppress_history
        )
    except SchemuxError as error:
        return HostAnswer(name, time.monotonic() - started, pane_id, error=error.render())
    except Exception as error:  # one host's fault is never the others' nor the call's
        logger.exception("run_command_on_hosts: host %s failed", name)
        return HostAnswer(
            name,
            time.monotonic() - started,
            pane_id,
            error=f"schemux failed on this host: {type(error).__name__}: {error}",
        )
    return HostAnswer(name, time.monotonic() - started, pane_id, result)
