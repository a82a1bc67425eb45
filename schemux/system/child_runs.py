"""A child process run to its end with its output collected, that a cancel ends at once.

asyncio's ``Process.wait`` returns only once the child has exited *and* its pipes have
reached their end. A pipe's far end can outlive the child: a tmux client hands its
stdin and stdout to the server it connects to (``MSG_IDENTIFY_STDIN``/``_STDOUT``), so
while that server is stopped, or a socket that never answers holds the message, no end
of file comes and a cancelled call would wait for it for good. Here a cancel kills the
child, closes this side of its pipes and waits only for the child's exit.
"""

from __future__ import annotations

import asyncio
import subprocess


class _Collecting(asyncio.SubprocessProtocol):
    """The child's output and errors as they come, and when it is done."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.output = bytearray()
        self.errors = bytearray()
        self.exited: asyncio.Future[None] = loop.create_future()
        self.finished: asyncio.Future[None] = loop.create_future()  # exited, pipes at end

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        (self.output if fd == 1 else self.errors).extend(data)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.finished.done():
            self.finished.set_result(None)


async def run_collecting(
    argv: list[str], env: dict[str, str] | None = None, given: bytes | None = None
) -> tuple[int, bytes, bytes]:
    """Run ``argv`` to its end, ``given`` as its stdin (None: nothing to read, an end of
    file at once): its exit status, output and errors. Cancelled, it kills the child and
    returns once the child has exited (see the module's docstring)."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _Collecting(loop),
        *argv,
        env=env,
        stdin=subprocess.DEVNULL if given is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        if given is not None:
            stdin = transport.get_pipe_transport(0)
            assert isinstance(stdin, asyncio.WriteTransport)
            stdin.write(given)
            stdin.close()  # after what was written is flushed
        await protocol.finished
    except BaseException:
        transport.close()  # kills a child still running, closes the pipes
        await asyncio.shield(protocol.exited)
        raise
    transport.close()
    return transport.get_returncode() or 0, bytes(protocol.output), bytes(protocol.errors)
