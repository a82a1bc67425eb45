"""get_session_info: one session's facts (libtmux-mcp's get_session_info); with no
session named, the agent's pane's."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_objects import SessionTarget, named_session
from schemux.generated.models.get_session_info import GetSessionInfoInput, GetSessionInfoOutput


async def handle(call: Call, request: GetSessionInfoInput) -> GetSessionInfoOutput:
    target = SessionTarget(request.session_id, request.session_name)
    session, _ = await named_session(call.tmux(request.socket_name), target, call.notes)
    return GetSessionInfoOutput.model_validate(session, from_attributes=True)
