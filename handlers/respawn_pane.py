"""respawn_pane: a pane's process started again in place (libtmux-mcp's respawn_pane),
its pane id and place kept. ``schemux.domain.spawning`` says how the new process starts;
the pane schemux itself runs in, a program's pane and a pane a run_command call holds
are refused."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.spawning import Spawn, environment_items, respawn, start_directory
from schemux.domain.tmux_objects import read_objects, refuse_held, refuse_owned
from schemux.errors import Unfit
from schemux.generated.models.respawn_pane import RespawnPaneInput, RespawnPaneOutput
from schemux.panes.targets import PaneTarget, resolve_pane


async def handle(call: Call, request: RespawnPaneInput) -> RespawnPaneOutput:
    environment = environment_items(request.environment, request.suppress_persistent_history)
    target = PaneTarget(pane_id=request.pane_id)
    target.validate()
    server = call.tmux(request.socket_name)
    pane = await resolve_pane(server, target, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    if (await read_objects(server)).pane(pane).is_caller:
        raise Unfit(
            f"pane {pane.pane_id} is the one this MCP server runs in: respawning it would end it",
            suggestion="respawn another pane",
        )
    await refuse_held(server, {pane.pane_id}, "respawning it")
    directory = await start_directory(request.start_directory, call.scope.host, call.programs.host)
    await respawn(server, pane, request.kill, Spawn(directory, environment, request.shell))
    respawned = (await read_objects(server)).pane(pane)
    return RespawnPaneOutput.model_validate(respawned, from_attributes=True)
