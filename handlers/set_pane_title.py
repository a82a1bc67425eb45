"""set_pane_title: a pane's title (libtmux-mcp's set_pane_title): the pane found as
every pane tool finds it (none named: the agent's). The title is never read as a format
(``domain.arranging``)."""

from __future__ import annotations

from schemux.domain.arranging import set_title
from schemux.domain.call import Call
from schemux.domain.tmux_objects import read_objects, refuse_owned
from schemux.generated.models.set_pane_title import SetPaneTitleInput, SetPaneTitleOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: SetPaneTitleInput) -> SetPaneTitleOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    await set_title(server, pane.pane_id, request.title)
    titled = (await read_objects(server)).pane(pane)
    return SetPaneTitleOutput.model_validate(titled, from_attributes=True)
