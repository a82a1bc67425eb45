"""list_servers: the live tmux servers of the call's host, found in its tmux socket
directory and at the paths given (libtmux-mcp's list_servers; the scan is
``schemux.domain.server_scan``'s)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.server_scan import check_extra_paths, list_servers
from schemux.generated.models.list_servers import ListServersInput, ListServersOutput, ResultItem


async def handle(call: Call, request: ListServersInput) -> ListServersOutput:
    extra = request.extra_socket_paths or []
    check_extra_paths(extra)
    servers = await list_servers(call.tmux(), extra)
    return ListServersOutput(
        result=[ResultItem.model_validate(facts, from_attributes=True) for facts in servers]
    )
