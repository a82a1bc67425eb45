"""swap_pane: two panes swap places (libtmux-mcp's swap_pane); the active pane stays
the one it was. The result is the source pane, in its new place."""

from __future__ import annotations

from schemux.domain.arranging import swap_panes
from schemux.domain.call import Call
from schemux.domain.tmux_objects import read_objects, refuse_owned
from schemux.generated.models.swap_pane import SwapPaneInput, SwapPaneOutput
from schemux.panes.targets import PaneTarget, resolve_pane


async def handle(call: Call, request: SwapPaneInput) -> SwapPaneOutput:
    server = call.tmux(request.socket_name)
    source_target = PaneTarget(pane_id=request.source_pane_id)
    other_target = PaneTarget(pane_id=request.target_pane_id)
    source_target.validate()
    other_target.validate()
    source = await resolve_pane(server, source_target, call.notes)
    other = await resolve_pane(server, other_target, None)
    for pane in (source, other):
        refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    await swap_panes(server, source.pane_id, other.pane_id)
    swapped = (await read_objects(server)).pane_in(source.pane_id, other.session_id)
    return SwapPaneOutput.model_validate(swapped, from_attributes=True)
