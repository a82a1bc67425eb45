"""get_pane_info: one pane's facts (libtmux-mcp's get_pane_info): the pane found as
every tool of the family finds it (``schemux.panes.targets``; none named: the agent's)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_objects import read_objects
from schemux.generated.models.get_pane_info import GetPaneInfoInput, GetPaneInfoOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: GetPaneInfoInput) -> GetPaneInfoOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    facts = (await read_objects(server)).pane(pane)
    return GetPaneInfoOutput.model_validate(facts, from_attributes=True)
