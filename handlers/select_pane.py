"""select_pane: make a pane its window's active one (libtmux-mcp's select_pane): the
pane named, or the one a direction gives from the pane named or from the active pane of
the window named; with none named, from the agent's pane. Its window is not made its
session's current one (select_window does that)."""

from __future__ import annotations

from schemux.domain.arranging import select_pane
from schemux.domain.call import Call
from schemux.domain.tmux_objects import named_pane, read_objects, refuse_owned
from schemux.generated.models.select_pane import SelectPaneInput, SelectPaneOutput
from schemux.panes.targets import PaneTarget


async def handle(call: Call, request: SelectPaneInput) -> SelectPaneOutput:
    target = PaneTarget(
        request.pane_id, request.window_id, request.session_id, request.session_name
    )
    server = call.tmux(request.socket_name)
    pane = await named_pane(server, target, request.window_index, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    await select_pane(server, pane.pane_id, pane.window_id, request.direction)
    objects = await read_objects(server)
    window = objects.window_in(pane.window_id, pane.session_id)
    active = objects.pane_in(window.active_pane_id or pane.pane_id, pane.session_id)
    return SelectPaneOutput.model_validate(active, from_attributes=True)
