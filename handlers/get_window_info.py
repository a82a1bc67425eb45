"""get_window_info: one window's facts (libtmux-mcp's get_window_info); with no window
named, the agent's pane's, and with only a session, its active window."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_objects import SessionTarget, WindowTarget, named_window
from schemux.generated.models.get_window_info import GetWindowInfoInput, GetWindowInfoOutput


async def handle(call: Call, request: GetWindowInfoInput) -> GetWindowInfoOutput:
    session = SessionTarget(request.session_id, request.session_name)
    target = WindowTarget(request.window_id, request.window_index, session)
    window, _ = await named_window(call.tmux(request.socket_name), target, call.notes)
    return GetWindowInfoOutput.model_validate(window, from_attributes=True)
