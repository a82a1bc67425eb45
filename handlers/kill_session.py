"""kill_session: one session closed, with its windows and panes (libtmux-mcp's
kill_session); with no session named, the agent's pane's. See
``schemux.domain.teardown`` for what it never closes."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.teardown import kill, refuse_caller
from schemux.domain.tmux_objects import SessionTarget, named_session, refuse_held, refuse_owned
from schemux.errors import preview
from schemux.generated.models.kill_session import KillSessionInput, KillSessionOutput


async def handle(call: Call, request: KillSessionInput) -> KillSessionOutput:
    server = call.tmux(request.socket_name)
    target = SessionTarget(request.session_id, request.session_name)
    session, objects = await named_session(server, target, call.notes)
    what = f"session {session.session_id}"
    refuse_owned(session.session_name, what)
    panes = [pane for pane in objects.panes if pane.session_id == session.session_id]
    refuse_caller(what, any(pane.is_caller for pane in panes))
    await refuse_held(server, {pane.pane_id for pane in panes}, "killing its session")
    await kill(server, "kill-session", session.session_id)
    return KillSessionOutput(
        result=f"Session killed: {session.session_id} ({preview(session.session_name)})"
    )
