"""run_command_on_hosts: one shell command in the agent pane of many hosts at once."""

from __future__ import annotations

import time

from schemux.domain.call import Call
from schemux.domain.fanout import HostAnswer, run_on_hosts
from schemux.generated.models.run_command_on_hosts import (
    HostCommandResult,
    RunCommandOnHostsInput,
    RunCommandOnHostsOutput,
)
from schemux.shell.commands import keep_tail


async def handle(call: Call, request: RunCommandOnHostsInput) -> RunCommandOnHostsOutput:
    names = request.hosts
    hosts = call.fleet.select(
        names=names, group=request.group, every=names is None and request.group is None
    )
    started = time.monotonic()
    effective_timeout = call.settings.clamp_wait(request.timeout)
    call.progress.expect(effective_timeout, f"waiting for the command on {len(hosts)} hosts")
    answers = await run_on_hosts(
        call,
        hosts,
        request.command,
        timeout=effective_timeout,
        suppress_history=request.suppress_history,
    )
    results = [_result(answer, request.max_lines) for answer in answers]
    return RunCommandOnHostsOutput(
        results=results,
        exited_zero=sum(result.exit_status == 0 for result in results),
        exited_nonzero=sum(result.exit_status not in (None, 0) for result in results),
        timed_out=sum(result.timed_out for result in results),
        errors=sum(result.error is not None for result in results),
        effective_timeout=effective_timeout,
        elapsed_seconds=time.monotonic() - started,
    )


def _result(answer: HostAnswer, max_lines: int | None) -> HostCommandResult:
    """Every field set, so that each entry has them all (an error's as nulls)."""
    ran = answer.result
    lines, dropped = keep_tail(ran.lines if ran is not None else [], max_lines)
    return HostCommandResult(
        host=answer.host,
        pane_id=answer.pane_id,
        exit_status=ran.exit_status if ran is not None else None,
        timed_out=ran.timed_out if ran is not None else False,
        output=lines,
        output_truncated=dropped > 0 or (ran is not None and ran.head_lost),
        output_truncated_lines=dropped + (ran.lines_lost if ran is not None else 0),
        elapsed_seconds=answer.elapsed,
        error=answer.error,
    )
