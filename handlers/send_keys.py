"""send_keys: text, or one tmux key name, typed into a pane (libtmux-mcp's send_keys); the
rules of typing are ``schemux.panes.keys``'. Targets resolve as run_command's do; a started
program's paneId works too.
"""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.write_policy import check_typing
from schemux.generated.models.send_keys import SendKeysInput, SendKeysOutput
from schemux.panes.keys import send_keys
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: SendKeysInput) -> SendKeysOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    await check_typing(call, server, pane, "send_keys", force=request.force)
    async with call.recorded(server, pane, request.keys):
        await send_keys(
            server,
            pane,
            request.keys,
            enter=request.enter,
            literal=request.literal,
            suppress_history=request.suppress_history,
        )
    return SendKeysOutput(result=f"Keys sent to pane {pane.pane_id}")
