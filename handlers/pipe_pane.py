"""pipe_pane: a pane's output copied into a file by a shell command tmux runs, or that
copy stopped (libtmux-mcp's pipe_pane; ``schemux.domain.pane_pipe`` says what runs and
which panes are refused). Targets resolve as run_command's do."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.pane_pipe import check_path, start_pipe, stop_pipe
from schemux.generated.models.pipe_pane import PipePaneInput, PipePaneOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: PipePaneInput) -> PipePaneOutput:
    if request.output_path is not None:
        check_path(request.output_path)
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    if request.output_path is None:
        stopped = await stop_pipe(server, pane)
        said = "stopped" if stopped else "had none open"
        return PipePaneOutput(result=f"Pane {pane.pane_id}'s pipe: {said}")
    await start_pipe(server, pane, request.output_path, request.append)
    how = "appended to" if request.append else "written over"
    return PipePaneOutput(
        result=f"Pane {pane.pane_id}'s output is piped into {request.output_path} ({how})"
    )
