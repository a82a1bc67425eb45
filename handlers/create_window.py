"""create_window: a new window in a session (libtmux-mcp's create_window); with no
session named, the agent's pane's. ``schemux.domain.spawning`` says how its process
starts."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.spawning import Spawn, environment_items, new_window, start_directory
from schemux.domain.tmux_objects import SessionTarget, named_session, read_objects, refuse_owned
from schemux.generated.models.create_window import CreateWindowInput, CreateWindowOutput


async def handle(call: Call, request: CreateWindowInput) -> CreateWindowOutput:
    environment = environment_items(request.environment, request.suppress_persistent_history)
    server = call.tmux(request.socket_name)
    target = SessionTarget(request.session_id, request.session_name)
    session, _ = await named_session(server, target, call.notes)
    refuse_owned(session.session_name, f"session {session.session_id}")
    directory = await start_directory(request.start_directory, call.scope.host, call.programs.host)
    spawn = Spawn(directory, environment)
    made = await new_window(
        server, session.session_id, request.window_name, request.direction, request.attach, spawn
    )
    window = (await read_objects(server)).window_in(made.window_id, made.session_id)
    return CreateWindowOutput.model_validate(window, from_attributes=True)
