"""get_server_info: whether a tmux server runs, and its socket, sessions and version
(libtmux-mcp's get_server_info). It never starts the server: one that is not running is
reported so (the configured one is started by the next call that needs it)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_objects import server_facts
from schemux.generated.models.get_server_info import GetServerInfoInput, GetServerInfoOutput


async def handle(call: Call, request: GetServerInfoInput) -> GetServerInfoOutput:
    server = call.tmux(request.socket_name)
    facts = await server_facts(server, request.socket_name or call.settings.socket_name)
    return GetServerInfoOutput.model_validate(facts, from_attributes=True)
