"""run_shell_command: run_command's machinery, in the program family's conventions."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.write_policy import check_typing
from schemux.generated.models.run_shell_command import (
    RunShellCommandInput,
    RunShellCommandOutput,
)
from schemux.panes.targets import PaneTarget, resolve_pane
from schemux.shell.commands import keep_tail, run_in_shell


async def handle(call: Call, request: RunShellCommandInput) -> RunShellCommandOutput:
    timeout = call.settings.clamp_wait(request.timeout_ms / 1000)
    call.progress.expect(timeout, "waiting for the command to finish")
    server = call.tmux()
    pane = await resolve_pane(server, PaneTarget(pane_id=request.pane_id), call.notes)
    await check_typing(call, server, pane, "run_shell_command", force=request.force)
    result = await run_in_shell(
        server,
        pane,
        request.command,
        timeout=timeout,
        suppress_history=bool(request.suppress_history),
    )
    lines, dropped = keep_tail(result.lines, request.max_lines)
    return RunShellCommandOutput(
        pane_id=pane.pane_id,
        outcome="timed_out" if result.timed_out else "completed",
        exit_status=result.exit_status,
        output="\n".join(lines),
        dropped_lines=dropped,
        output_complete=not (result.timed_out or dropped or result.head_lost),
        effective_timeout_ms=round(timeout * 1000),
        elapsed_ms=round(result.elapsed * 1000),
    )
