"""resize_pane: a pane's new size, or its zoom (libtmux-mcp's resize_pane): the pane
found as every pane tool finds it (none named: the agent's)."""

from __future__ import annotations

from schemux.domain.arranging import resize_pane
from schemux.domain.call import Call
from schemux.domain.tmux_objects import read_objects, refuse_owned
from schemux.errors import InvalidArgument
from schemux.generated.models.resize_pane import ResizePaneInput, ResizePaneOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: ResizePaneInput) -> ResizePaneOutput:
    if request.height is None and request.width is None and request.zoom is None:
        raise InvalidArgument(
            "resize_pane needs height, width or zoom", suggestion="pass at least one of them"
        )
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    await resize_pane(server, pane.pane_id, (request.width, request.height), request.zoom)
    resized = (await read_objects(server)).pane(pane)
    return ResizePaneOutput.model_validate(resized, from_attributes=True)
