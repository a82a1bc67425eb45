"""show_buffer: a buffer load_buffer made, read back, its last max_lines lines
(libtmux-mcp's show_buffer, its ``BufferContent``; ``schemux.domain.buffers``)."""

from __future__ import annotations

from schemux.domain.buffers import check_name, read
from schemux.domain.call import Call
from schemux.generated.models.show_buffer import ShowBufferInput, ShowBufferOutput


async def handle(call: Call, request: ShowBufferInput) -> ShowBufferOutput:
    check_name(request.buffer_name)
    shown = await read(call.tmux(request.socket_name), request.buffer_name, request.max_lines)
    return ShowBufferOutput(
        buffer_name=request.buffer_name,
        content=shown.content,
        content_truncated=shown.dropped_lines > 0,
        content_truncated_lines=shown.dropped_lines,
    )
