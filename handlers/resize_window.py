"""resize_window: a window's new size (libtmux-mcp's resize_window); with no window
named, the agent's pane's."""

from __future__ import annotations

from schemux.domain.arranging import resize_window
from schemux.domain.call import Call
from schemux.domain.tmux_objects import (
    SessionTarget,
    WindowTarget,
    named_window,
    read_objects,
    refuse_owned,
)
from schemux.errors import InvalidArgument
from schemux.generated.models.resize_window import ResizeWindowInput, ResizeWindowOutput


async def handle(call: Call, request: ResizeWindowInput) -> ResizeWindowOutput:
    if request.height is None and request.width is None:
        raise InvalidArgument(
            "resize_window needs height or width", suggestion="pass at least one of them"
        )
    server = call.tmux(request.socket_name)
    session = SessionTarget(request.session_id, request.session_name)
    target = WindowTarget(request.window_id, request.window_index, session)
    window, _ = await named_window(server, target, call.notes)
    refuse_owned(window.session_name, f"window {window.window_id}")
    await resize_window(server, window.window_id, request.width, request.height)
    resized = (await read_objects(server)).window_in(window.window_id, window.session_id)
    return ResizeWindowOutput.model_validate(resized, from_attributes=True)
