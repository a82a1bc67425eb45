"""clear_pane: a pane's screen and history cleared (libtmux-mcp's clear_pane), an idle
shell's prompt shown again: the pane found as every pane tool finds it (none named: the
agent's)."""

from __future__ import annotations

from schemux.domain.arranging import clear
from schemux.domain.call import Call
from schemux.domain.tmux_objects import refuse_held, refuse_owned
from schemux.generated.models.clear_pane import ClearPaneInput, ClearPaneOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: ClearPaneInput) -> ClearPaneOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    await refuse_held(server, {pane.pane_id}, "clearing it")
    await clear(server, pane)
    return ClearPaneOutput(result=f"Pane cleared: {pane.pane_id}")
