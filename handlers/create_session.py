"""create_session: a new detached session with one window and pane (libtmux-mcp's
create_session); ``schemux.domain.spawning`` says how its process starts."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.spawning import (
    HISTORY_SUPPRESSED,
    Spawn,
    environment_items,
    new_session,
    start_directory,
)
from schemux.domain.tmux_objects import SessionTarget, check_session_name, read_objects
from schemux.generated.models.create_session import CreateSessionInput, CreateSessionOutput


async def handle(call: Call, request: CreateSessionInput) -> CreateSessionOutput:
    if request.session_name is not None:
        check_session_name("session_name", request.session_name)
    given = environment_items(request.environment, suppress_history=False)
    environment = environment_items(given, request.suppress_persistent_history)
    server = call.tmux(request.socket_name)
    if request.start_directory is not None and not call.scope.host.files_here:
        await server.run("display-message", "-p", "")  # the host reached: its home known
    directory = await start_directory(request.start_directory, call.scope.host, call.programs.host)
    made = await new_session(
        server,
        request.session_name,
        request.window_name,
        (request.x, request.y),
        Spawn(directory, environment),
        # only the first shell keeps its history out, not the session's later panes
        tuple(name for name in HISTORY_SUPPRESSED if name in environment and name not in given),
    )
    session = (await read_objects(server)).session(SessionTarget(session_id=made.session_id))
    return CreateSessionOutput.model_validate(session, from_attributes=True)
