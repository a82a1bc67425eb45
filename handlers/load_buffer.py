"""load_buffer: text staged in a new tmux paste buffer of its own name (libtmux-mcp's
load_buffer; names and content, ``schemux.domain.buffers``)."""

from __future__ import annotations

from schemux.domain.buffers import check_content, load, new_name
from schemux.domain.call import Call
from schemux.generated.models.load_buffer import LoadBufferInput, LoadBufferOutput


async def handle(call: Call, request: LoadBufferInput) -> LoadBufferOutput:
    check_content("content", request.content)
    name = new_name(request.logical_name)
    await load(call.tmux(request.socket_name), name, request.content)
    return LoadBufferOutput(buffer_name=name, logical_name=request.logical_name)
