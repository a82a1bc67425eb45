"""split_window: a new pane beside one (libtmux-mcp's split_window): the pane named, or
the active pane of the window or session named; none: the agent's pane.
``schemux.domain.spawning`` says how its process starts."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.spawning import (
    Spawn,
    environment_items,
    split_pane,
    split_size,
    start_directory,
)
from schemux.domain.tmux_objects import named_pane, read_objects, refuse_owned
from schemux.generated.models.split_window import SplitWindowInput, SplitWindowOutput
from schemux.panes.targets import PaneTarget


async def handle(call: Call, request: SplitWindowInput) -> SplitWindowOutput:
    size = split_size(request.size)
    environment = environment_items(request.environment, request.suppress_persistent_history)
    target = PaneTarget(
        request.pane_id, request.window_id, request.session_id, request.session_name
    )
    target.validate()
    server = call.tmux(request.socket_name)
    pane = await named_pane(server, target, request.window_index, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    directory = await start_directory(request.start_directory, call.scope.host, call.programs.host)
    spawn = Spawn(directory, environment, request.shell)
    made = await split_pane(server, pane.pane_id, request.direction, size, spawn)
    facts = (await read_objects(server)).pane_in(made.pane_id, pane.session_id)
    return SplitWindowOutput.model_validate(facts, from_attributes=True)
