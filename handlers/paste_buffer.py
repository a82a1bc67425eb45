"""paste_buffer: a buffer load_buffer made, pasted into a pane (libtmux-mcp's
paste_buffer; ``schemux.domain.buffers``). Targets resolve as run_command's do."""

from __future__ import annotations

from schemux.domain.buffers import check_name, paste
from schemux.domain.call import Call
from schemux.domain.write_policy import check_typing
from schemux.generated.models.paste_buffer import PasteBufferInput, PasteBufferOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: PasteBufferInput) -> PasteBufferOutput:
    check_name(request.buffer_name)
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    await check_typing(call, server, pane, "paste_buffer", force=request.force)
    await paste(server, pane, request.buffer_name, bracket=request.bracket, delete_after=False)
    return PasteBufferOutput(result=f"Buffer {request.buffer_name} pasted into pane {pane.pane_id}")
