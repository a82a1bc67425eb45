"""set_environment: a variable of the environment a session's new processes get
(libtmux-mcp's set_environment, ``schemux.domain.environment``); with no session named,
the agent's pane's."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.environment import check_variable_name, set_variable
from schemux.domain.tmux_objects import SessionTarget, named_session
from schemux.generated.models.set_environment import SetEnvironmentInput, SetEnvironmentOutput


async def handle(call: Call, request: SetEnvironmentInput) -> SetEnvironmentOutput:
    check_variable_name(request.name)
    server = call.tmux(request.socket_name)
    target = SessionTarget(request.session_id, request.session_name)
    session, _ = await named_session(server, target, call.notes)
    await set_variable(server, session.session_id, request.name, request.value)
    return SetEnvironmentOutput(name=request.name, value=request.value, status="set")
