"""show_environment: the environment a session's new processes get (libtmux-mcp's
show_environment, with the global and the session's own merged:
``schemux.domain.environment``); with no session named, the agent's pane's."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.environment import session_environment
from schemux.domain.tmux_objects import SessionTarget, named_session
from schemux.generated.models.show_environment import ShowEnvironmentInput, ShowEnvironmentOutput


async def handle(call: Call, request: ShowEnvironmentInput) -> ShowEnvironmentOutput:
    server = call.tmux(request.socket_name)
    target = SessionTarget(request.session_id, request.session_name)
    session, _ = await named_session(server, target, call.notes)
    variables = await session_environment(server, session.session_id)
    return ShowEnvironmentOutput(variables=variables)
