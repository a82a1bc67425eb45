"""kill_pane: one pane closed, with what it runs (libtmux-mcp's kill_pane); see
``schemux.domain.teardown`` for what it never closes."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.teardown import kill, refuse_caller
from schemux.domain.tmux_objects import read_objects, refuse_held, refuse_owned
from schemux.generated.models.kill_pane import KillPaneInput, KillPaneOutput
from schemux.panes.targets import PaneTarget, resolve_pane


async def handle(call: Call, request: KillPaneInput) -> KillPaneOutput:
    target = PaneTarget(pane_id=request.pane_id)
    target.validate()
    server = call.tmux(request.socket_name)
    pane = await resolve_pane(server, target, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    facts = (await read_objects(server)).pane(pane)
    refuse_caller(f"pane {pane.pane_id}", facts.is_caller is True)
    await refuse_held(server, {pane.pane_id}, "killing it")
    await kill(server, "kill-pane", pane.pane_id)
    return KillPaneOutput(result=f"Pane killed: {pane.pane_id}")
