"""move_window: a window moved to another index or session (libtmux-mcp's
move_window); with no window named, the agent's pane's, and with no destination
session, within its own."""

from __future__ import annotations

from schemux.domain.arranging import destination_index, move_window
from schemux.domain.call import Call
from schemux.domain.tmux_objects import (
    SessionTarget,
    WindowTarget,
    named_window,
    read_objects,
    refuse_owned,
    session_named_or_id,
)
from schemux.generated.models.move_window import MoveWindowInput, MoveWindowOutput


async def handle(call: Call, request: MoveWindowInput) -> MoveWindowOutput:
    index = destination_index(request.destination_index)
    server = call.tmux(request.socket_name)
    session = SessionTarget(request.session_id, request.session_name)
    target = WindowTarget(request.window_id, request.window_index, session)
    window, _ = await named_window(server, target, call.notes)
    refuse_owned(window.session_name, f"window {window.window_id}")
    to_session_id = window.session_id
    if request.destination_session is not None:
        destination, _ = await session_named_or_id(server, request.destination_session, None)
        refuse_owned(destination.session_name, "destination_session")
        to_session_id = destination.session_id
    await move_window(server, window.session_id, window.window_id, to_session_id, index)
    moved = (await read_objects(server)).window_in(window.window_id, to_session_id)
    return MoveWindowOutput.model_validate(moved, from_attributes=True)
