"""show_hooks: the tmux hooks set at a scope, one entry per index (libtmux-mcp's
show_hooks; ``schemux.domain.tmux_options`` says where they are read)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_options import hook_entries, hook_places, place
from schemux.generated.models.show_hooks import Entry, ShowHooksInput, ShowHooksOutput


async def handle(call: Call, request: ShowHooksInput) -> ShowHooksOutput:
    server = call.tmux(request.socket_name)
    where = await place(server, request.scope, request.target, request.global_, call.notes)
    entries = await hook_entries(server, hook_places(where, request.scope))
    return ShowHooksOutput(
        entries=[Entry.model_validate(entry, from_attributes=True) for entry in entries]
    )
