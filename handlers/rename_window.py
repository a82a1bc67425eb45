"""rename_window: a window's new name (libtmux-mcp's rename_window); with no window
named, the agent's pane's. The name is never read as a format (``domain.arranging``)."""

from __future__ import annotations

from schemux.domain.arranging import rename_window
from schemux.domain.call import Call
from schemux.domain.tmux_objects import (
    SessionTarget,
    WindowTarget,
    named_window,
    read_objects,
    refuse_owned,
)
from schemux.generated.models.rename_window import RenameWindowInput, RenameWindowOutput


async def handle(call: Call, request: RenameWindowInput) -> RenameWindowOutput:
    server = call.tmux(request.socket_name)
    session = SessionTarget(request.session_id, request.session_name)
    target = WindowTarget(request.window_id, request.window_index, session)
    window, _ = await named_window(server, target, call.notes)
    refuse_owned(window.session_name, f"window {window.window_id}")
    await rename_window(server, window.window_id, request.new_name)
    renamed = (await read_objects(server)).window_in(window.window_id, window.session_id)
    return RenameWindowOutput.model_validate(renamed, from_attributes=True)
