"""rename_session: a session's new name (libtmux-mcp's rename_session); with no session
named, the agent's pane's. The name is never read as a format (``domain.arranging``)."""

from __future__ import annotations

from schemux.domain.arranging import rename_session
from schemux.domain.call import Call
from schemux.domain.tmux_objects import (
    SessionTarget,
    check_session_name,
    named_session,
    read_objects,
    refuse_owned,
)
from schemux.generated.models.rename_session import RenameSessionInput, RenameSessionOutput


async def handle(call: Call, request: RenameSessionInput) -> RenameSessionOutput:
    check_session_name("new_name", request.new_name)
    server = call.tmux(request.socket_name)
    target = SessionTarget(request.session_id, request.session_name)
    session, _ = await named_session(server, target, call.notes)
    refuse_owned(session.session_name, f"session {session.session_id}")
    await rename_session(server, session.session_id, request.new_name)
    renamed = (await read_objects(server)).session(SessionTarget(session.session_id))
    return RenameSessionOutput.model_validate(renamed, from_attributes=True)
