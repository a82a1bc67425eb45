"""paste_text: text pasted into a pane through a buffer that never outlives the call
(libtmux-mcp's paste_text; ``schemux.domain.buffers``). Targets resolve as run_command's
do."""

from __future__ import annotations

from schemux.domain.buffers import check_content, paste_once
from schemux.domain.call import Call
from schemux.domain.write_policy import check_typing
from schemux.generated.models.paste_text import PasteTextInput, PasteTextOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: PasteTextInput) -> PasteTextOutput:
    check_content("text", request.text)
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    await check_typing(call, server, pane, "paste_text", force=request.force)
    await paste_once(server, pane, request.text, bracket=request.bracket)
    return PasteTextOutput(result=f"Text pasted into pane {pane.pane_id}")
