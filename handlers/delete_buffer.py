"""delete_buffer: a buffer load_buffer made, deleted (libtmux-mcp's delete_buffer;
``schemux.domain.buffers``)."""

from __future__ import annotations

from schemux.domain.buffers import check_name, delete
from schemux.domain.call import Call
from schemux.generated.models.delete_buffer import DeleteBufferInput, DeleteBufferOutput


async def handle(call: Call, request: DeleteBufferInput) -> DeleteBufferOutput:
    check_name(request.buffer_name)
    await delete(call.tmux(request.socket_name), request.buffer_name)
    return DeleteBufferOutput(result=f"Buffer {request.buffer_name} deleted")
