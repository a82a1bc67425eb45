"""select_window: make a window its session's current one (libtmux-mcp's
select_window): the window named, or the next, previous or last one of the session
named; with none named, of the agent's pane's session."""

from __future__ import annotations

from schemux.domain.arranging import select_window
from schemux.domain.call import Call
from schemux.domain.tmux_objects import (
    SessionTarget,
    WindowTarget,
    named_session,
    named_window,
    read_objects,
    refuse_owned,
)
from schemux.errors import InvalidArgument
from schemux.generated.models.select_window import SelectWindowInput, SelectWindowOutput


async def handle(call: Call, request: SelectWindowInput) -> SelectWindowOutput:
    if request.direction is not None and (
        request.window_id is not None or request.window_index is not None
    ):
        raise InvalidArgument(
            "direction is given with window_id or window_index",
            suggestion="name the window, or pass a direction, not both",
        )
    session = SessionTarget(request.session_id, request.session_name)
    server = call.tmux(request.socket_name)
    window_id = None
    if request.direction is None:
        target = WindowTarget(request.window_id, request.window_index, session)
        window, _ = await named_window(server, target, call.notes)
        session_id, session_name, window_id = (
            window.session_id, window.session_name, window.window_id,
        )  # fmt: skip
    else:
        found, _ = await named_session(server, session, call.notes)
        session_id, session_name = found.session_id, found.session_name
    refuse_owned(session_name, f"session {session_id}")
    await select_window(server, session_id, window_id, request.direction)
    current = (await read_objects(server)).current_window(session_id)
    return SelectWindowOutput.model_validate(current, from_attributes=True)
