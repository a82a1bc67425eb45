"""show_hook: one tmux hook at a scope, one entry per index it is set at, none when it is
unset (libtmux-mcp's show_hook; ``schemux.domain.tmux_options`` says where it is read)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_options import check_name, hook_entries, hook_places, place
from schemux.generated.models.show_hook import Entry, ShowHookInput, ShowHookOutput


async def handle(call: Call, request: ShowHookInput) -> ShowHookOutput:
    check_name("hook_name", request.hook_name)
    server = call.tmux(request.socket_name)
    where = await place(server, request.scope, request.target, request.global_, call.notes)
    entries = await hook_entries(server, hook_places(where, request.scope), request.hook_name)
    return ShowHookOutput(
        entries=[Entry.model_validate(entry, from_attributes=True) for entry in entries]
    )
