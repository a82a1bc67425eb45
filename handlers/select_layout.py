"""select_layout: a window's panes arranged by a layout (libtmux-mcp's select_layout);
with no window named, the agent's pane's. A layout tmux could not take is refused
before it is sent (``domain.arranging``)."""

from __future__ import annotations

from schemux.domain.arranging import check_layout, check_layout_version, select_layout
from schemux.domain.call import Call
from schemux.domain.tmux_objects import (
    SessionTarget,
    WindowTarget,
    named_window,
    read_objects,
    refuse_owned,
)
from schemux.generated.models.select_layout import SelectLayoutInput, SelectLayoutOutput


async def handle(call: Call, request: SelectLayoutInput) -> SelectLayoutOutput:
    check_layout(request.layout)
    server = call.tmux(request.socket_name)
    session = SessionTarget(request.session_id, request.session_name)
    target = WindowTarget(request.window_id, request.window_index, session)
    window, objects = await named_window(server, target, call.notes)
    refuse_owned(window.session_name, f"window {window.window_id}")
    check_layout_version(request.layout, objects.version)
    await select_layout(server, window.window_id, request.layout)
    arranged = (await read_objects(server)).window_in(window.window_id, window.session_id)
    return SelectLayoutOutput.model_validate(arranged, from_attributes=True)
