"""run_command: a shell command in a pane's interactive shell, with exactly its output."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.write_policy import check_typing
from schemux.errors import PaneGone
from schemux.generated.models.run_command import RunCommandInput, RunCommandOutput
from schemux.panes.targets import names_a_pane, resolve_requested_pane
from schemux.shell.commands import keep_tail, run_in_shell


async def handle(call: Call, request: RunCommandInput) -> RunCommandOutput:
    effective_timeout = call.settings.clamp_wait(request.timeout)
    call.progress.expect(effective_timeout, "waiting for the command to finish")
    try:
        return await _run(call, request, effective_timeout)
    except PaneGone:
        if names_a_pane(request):
            raise
        # the agent's shell had just ended (an `exit`): its pane went before anything was
        # typed, and the default pane is now a new agent shell
        return await _run(call, request, effective_timeout)


async def _run(call: Call, request: RunCommandInput, effective_timeout: float) -> RunCommandOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    await check_typing(call, server, pane, "run_command", force=request.force)
    # the recording's first line goes in parallel with the call's first ones
    async with call.recorded(server, pane, request.command, begin_later=True) as recorder:
        result = await run_in_shell(
            server,
            pane,
            request.command,
            timeout=effective_timeout,
            suppress_history=request.suppress_history,
            seen=recorder,
            before_typing=None if recorder is None else recorder.begun,
        )
    lines, dropped = keep_tail(result.lines, request.max_lines)
    return RunCommandOutput(
        pane_id=pane.pane_id,
        exit_status=result.exit_status,
        timed_out=result.timed_out,
        elapsed_seconds=result.elapsed,
        effective_timeout=effective_timeout,
        output=lines,
        output_truncated=dropped > 0 or result.head_lost,
        output_truncated_lines=dropped + result.lines_lost,
    )
