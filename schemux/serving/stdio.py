"""MCP over stdio, its lines read and written by the event loop itself.

The SDK's ``stdio_server`` reads each line in a worker thread and writes each message
with two more trips to one (a write, a flush): three thread wake-ups a call, each a
scheduler's delay on a loaded machine, and most of the tail of a read_program's wake-up
latency. Here stdin and stdout are pipes the loop reads and writes when they are ready.

As the SDK's transport does, ``stdio_transport`` takes fd 0 and fd 1 for the wire and
leaves them pointing elsewhere while it serves (fd 0 at the null device, fd 1 at stderr),
so that no child process and no stray print reaches the wire, and gives them back at
the end. Only pipes and sockets are served this way (what an MCP client gives); a
terminal or a file on either side is served by the SDK's transport, which takes any.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
from collections.abc import AsyncIterator, Iterator

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

LINE_LIMIT = 1 << 30  # the longest line read: the SDK's transport has no limit either

# what the server reads (a message, or the error of a line that is none) and writes
Streams = tuple[ObjectReceiveStream[SessionMessage | Exception], ObjectSendStream[SessionMessage]]


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def stdio_transport() -> AsyncIterator[Streams]:
    """The server's streams over this process's stdin and stdout: the loop's own when
    both are pipes or sockets, the SDK's transport otherwise."""
    if not (_is_pipe(0) and _is_pipe(1)):
        async with stdio_server() as streams:
            yield streams
        return
    with _claimed(0, os.O_RDONLY) as wire_in, _claimed(1, os.O_WRONLY) as wire_out:
        async with pipe_streams(wire_in, wire_out) as streams:
            yield streams


@contextlib.contextmanager
def _claimed(fd: int, mode: int) -> Iterator[int]:
    """A private descriptor of the wire on ``fd`` while ``fd`` points away from it (fd 0
    at the null device, fd 1 at stderr); ``fd`` is the wire again at the end, blocking."""
    wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        away = os.dup(2) if fd == 1 else os.open(os.devnull, mode)
    except OSError:
        away = os.open(os.devnull, mode)
    try:
        os.dup2(away, fd)
    finally:
        os.close(away)
    try:
        yield wire
    finally:
        with contextlib.suppress(OSError):
            os.set_blocking(wire, True)  # the description is shared: as it was
        os.dup2(wire, fd)
        os.close(wire)


class _Written(asyncio.streams.FlowControlMixin):
    """A pipe written through a ``StreamWriter``: ``drain`` waits while the pipe is
    full, and ``wait_closed`` until the descriptor is closed."""

    def __init__(self) -> None:
        super().__init__()
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._closed.done():
            self._closed.set_result(None)

    def _get_close_waiter(self, stream: asyncio.StreamWriter) -> asyncio.Future[None]:
        return self._closed


@contextlib.asynccontextmanager
async def pipe_streams(wire_in: int, wire_out: int) -> AsyncIterator[Streams]:
    """The SDK's pair of streams over the pipes ``wire_in`` (each line a JSON-RPC
    message; one that is not, an exception in its place, as the SDK's transport gives)
    and ``wire_out`` (each message a line). The descriptors stay the caller's."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    in_file = os.fdopen(os.dup(wire_in), "rb", buffering=0)
    out_file = os.fdopen(os.dup(wire_out), "wb", buffering=0)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), in_file
    )
    write_transport, write_protocol = await loop.connect_write_pipe(_Written, out_file)
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    incoming_in, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_out = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_lines() -> None:
        async with incoming_in:
            while line := await reader.readline():
                text = line.decode("utf-8", "replace")
                try:
                    message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
                except Exception as error:  # the server answers it (serving.unreadable)
                    await incoming_in.send(error)
                    continue
                await incoming_in.send(SessionMessage(message))

    async def write_lines() -> None:
        async with outgoing_out:
            async for item in outgoing_out:
                line = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                writer.write(line.encode() + b"\n")
                await writer.drain()

    try:
        # as the SDK's: done once stdin has ended and the server has closed its side
        async with anyio.create_task_group() as group:
            group.start_soon(read_lines)
            group.start_soon(write_lines)
            yield incoming, outgoing
    finally:
        read_transport.close()
        writer.close()
        with anyio.CancelScope(shield=True):  # both descriptors closed when this returns
            await writer.wait_closed()
