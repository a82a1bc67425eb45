"""MCP's stdio served from the event loop: each request line read and each answer written
by the loop itself, never by a thread.

The SDK's stdio transport reads stdin in a worker thread and hands every answer to
threads twice (the write, then the flush): on a busy machine each hand-over waits for the
thread to be scheduled, 1-5 ms an answer. Here the wire is read when the loop says it is
readable and written while it takes bytes without waiting, both on descriptors of its
own: a pipe, FIFO or terminal is opened anew (``/proc/self/fd``) with ``O_NONBLOCK``, so
the descriptor the client or a shell shares is never changed; a socket (Node's children
get socket pairs) is read and written with ``MSG_DONTWAIT``. What cannot be had so (a
regular file: opened anew it would start again at its beginning) is served by the SDK's
transport as before (``stdio_streams`` gives None).

As the SDK does, fd 0 then reads the null device and fd 1 writes to stderr while serving,
so the tools' children read nothing of the wire and their stray output never reaches it;
both are put back at the end. Lines are read as the SDK's text wrapper reads them: UTF-8
with errors replaced, ``\\r\\n`` and ``\\r`` taken as ``\\n``.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import io
import os
import socket
import stat
from collections.abc import AsyncIterator, Iterator
from typing import cast

from anyio import AsyncFile

READ_BYTES = 64 * 1024
PIPE_BYTES = 1 << 20  # what the answers' pipe is made to hold, where the system allows


class _Wire:
    """One descriptor of the wire, read or written without ever blocking."""

    def __init__(self, fd: int, sock: socket.socket | None) -> None:
        self.fd = fd
        self._socket = sock
        self._loop = asyncio.get_running_loop()

    def read_now(self) -> bytes | None:
        """What is there to read (b"" at the end); None when nothing is yet."""
        try:
            if self._socket is not None:
                return self._socket.recv(READ_BYTES, socket.MSG_DONTWAIT)
            return os.read(self.fd, READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return None

    def write_now(self, data: memoryview) -> int:
        """How many bytes of ``data`` were written (0: none could be yet)."""
        try:
            if self._socket is not None:
                return self._socket.send(data, socket.MSG_DONTWAIT)
            return os.write(self.fd, data)
        except (BlockingIOError, InterruptedError):
            return 0

    async def ready(self, *, writing: bool) -> None:
        """Wait until the loop says the descriptor can be read (or written)."""
        ready = self._loop.create_future()
        add, remove = (
            (self._loop.add_writer, self._loop.remove_writer)
            if writing
            else (self._loop.add_reader, self._loop.remove_reader)
        )

        def readied() -> None:
            if not ready.done():
                ready.set_result(None)

        add(self.fd, readied)
        try:
            await ready
        finally:
            remove(self.fd)

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()  # it owns the descriptor
        else:
            os.close(self.fd)


class LineReader:
    """The request lines of the wire, as ``async for`` takes them."""

    def __init__(self, wire: _Wire) -> None:
        self._wire = wire
        self._decoder = io.IncrementalNewlineDecoder(
            codecs.getincrementaldecoder("utf-8")("replace"), translate=True
        )

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        pending = ""
        while True:
            data = self._wire.read_now()
            if data is None:
                await self._wire.ready(writing=False)
                continue
            try:
                pending += self._decoder.decode(data, final=not data)
            except OSError:
                return
            *lines, pending = pending.split("\n")
            for line in lines:
                yield line + "\n"
            if not data:  # the client closed the wire
                if pending:
                    yield pending
                return


class LineWriter:
    """The answers to the wire: ``write`` writes what it can at once, ``flush`` waits
    until all of it is written."""

    def __init__(self, wire: _Wire) -> None:
        self._wire = wire
        self._pending = bytearray()

    async def write(self, text: str) -> None:
        self._pending += text.encode("utf-8")
        self._write_what_it_takes()

    async def flush(self) -> None:
        while self._pending:
            await self._wire.ready(writing=True)
            self._write_what_it_takes()

    def _write_what_it_takes(self) -> None:
        while self._pending:
            written = self._wire.write_now(memoryview(self._pending))
            if written == 0:
                return
            del self._pending[:written]


def _wire_of(fd: int, flags: int) -> _Wire | None:
    """A descriptor of the wire at ``fd`` that is this process's alone and never blocks
    (a socket's: a duplicate, read and written with ``MSG_DONTWAIT``); None for a
    regular file, or where none can be had."""
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISSOCK(mode):
            duplicate = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
            return _Wire(duplicate, socket.socket(fileno=duplicate))
        if stat.S_ISREG(mode):
            return None
        own = os.open(f"/proc/self/fd/{fd}", flags | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if stat.S_ISFIFO(mode) and flags == os.O_WRONLY:
        _enlarge(own)
    return _Wire(own, None)


def _enlarge(fd: int) -> None:
    """Make the answers' pipe hold ``PIPE_BYTES``: at the default 64 KiB, an answer of a
    page of program output (about 50 KB) often waits for the client to read, and the
    answers after it queue behind that wait. Where the system refuses (a smaller
    ``pipe-max-size``, the user's pipes over their share), the pipe stays as it was."""
    with contextlib.suppress(OSError):
        if fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) < PIPE_BYTES:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)


@contextlib.contextmanager
def _diverted(fd: int, target: int) -> Iterator[None]:
    """``fd`` pointed at ``target`` for the block, then put back."""
    saved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        os.dup2(target, fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


@contextlib.asynccontextmanager
async def stdio_streams(
    read_fd: int = 0, write_fd: int = 1, *, divert: bool = True
) -> AsyncIterator[tuple[AsyncFile[str] | None, AsyncFile[str] | None]]:
    """The wire's reader and writer, as the SDK's ``stdio_server`` takes its stdin and
    stdout (it reads lines with ``async for``, and calls ``write`` and ``flush``), with
    fd 0 and fd 1 diverted while they are used (``divert``); both None where the wire
    cannot be served from the loop (the SDK's transport then serves it)."""
    reading = _wire_of(read_fd, os.O_RDONLY)
    writing = _wire_of(write_fd, os.O_WRONLY) if reading is not None else None
    if reading is None or writing is None:
        if reading is not None:
            reading.close()
        yield None, None
        return
    try:
        with contextlib.ExitStack() as diversions:
            if divert:
                null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    diversions.enter_context(_diverted(0, null))
                finally:
                    os.close(null)
                diversions.enter_context(_diverted(1, 2))
            yield (
                cast("AsyncFile[str]", LineReader(reading)),
                cast("AsyncFile[str]", LineWriter(writing)),
            )
    finally:
        reading.close()
        writing.close()
