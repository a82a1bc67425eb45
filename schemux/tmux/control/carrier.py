"""One process on a host that carries every control client schemux has there: the
attacher run as ``carry`` (``schemux.tmux.control.attach``), its clients' streams framed
over its one stdin and stdout, each client to a ``Connection`` what a process of its
own was (``CarriedClient``).

A client of its own on another host was four processes here (the prefix's or ssh's
process, ``sh``, the attacher and a relay's ``cat``), three of them a host, and each
start a Python start there; carried, a host's clients are one process and a new client
is one frame. The carrier reads each client's output for as long as tmux writes it, as
the relay did (tmux lets a control client go only once its output is read), and when
it ends (its stdin's end: schemux gone, its session lost; a signal) every client it
carries ends with it: its sockets close, and tmux lets the clients go at once.

A host where the carrier cannot run (no Python 3.7 there: it ends before it says it
runs) gets a process a client, as before (``schemux.tmux.control.client``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import struct
from dataclasses import dataclass

import anyio

from schemux.tmux.control import attach
from schemux.tmux.control.client import attacher

CLOSE_GRACE = 2.0  # seconds a closed carrier is given to end by itself, then killed


@dataclass(frozen=True)
class Carried:
    """How a control client is carried: the carrier's argv (as the host runs it), and
    the client's words (the message header, the server's socket path, the command)."""

    argv: list[str]
    words: list[str]


def carrier_argv(python: str) -> list[str]:
    """The carrier's argv on a host (its source given whole: the host has no file of
    schemux's). No probe of ``python`` first, as a client of its own has (one start of
    the interpreter less, which a host's first call waits for): where there is no such
    Python, or one older than 3.7 (which cannot compile the source), it ends with
    nothing said, and the engine gives each client a process of its own."""
    return [*attacher(python, source_here=False), "carry"]


class CarriedInput:
    """A carried client's stdin: what is written goes to the carrier as its frames."""

    def __init__(self, client: CarriedClient) -> None:
        self._client = client
        self._closed = False

    def write(self, data: bytes) -> None:
        if self._closed or self._client.returncode is not None:
            raise ConnectionResetError("the carried control client has ended")
        self._client.carrier.order(attach.DATA, self._client.number, bytes(data))

    def close(self) -> None:
        """Its stdin ends (tmux ends a control client whose input ends)."""
        if not self._closed:
            self._closed = True
            if self._client.returncode is None:
                self._client.carrier.order(attach.EOF, self._client.number)

    async def wait_closed(self) -> None:
        """Nothing to wait for: the carrier's own pipe is its owner's."""


class CarriedClient:
    """One control client of a carrier, as a ``Connection`` uses a process: its stdin,
    its stdout, its end."""

    pid = None  # no process of its own to signal: ``kill`` ends it

    def __init__(self, carrier: Carrier, number: int) -> None:
        self.carrier = carrier
        self.number = number
        self.stdin = CarriedInput(self)
        self.stdout = asyncio.StreamReader()
        self.returncode: int | None = None
        self._ended = asyncio.get_running_loop().create_future()

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)

    def kill(self) -> None:
        """End it at once (its sockets closed there: tmux lets it go)."""
        if self.returncode is None:
            self.carrier.order(attach.KILL, self.number)

    def ended(self, status: int) -> None:
        if self.returncode is None:
            self.returncode = status
            self.stdout.feed_eof()
            self._ended.set_result(status)


class Carrier:
    """The carrier process of one engine and event loop: started at the first ``open``,
    ended by ``close`` (or by schemux's end, being tethered to it)."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.loop = asyncio.get_running_loop()
        self.refused = False  # it ended before it said it runs: the host cannot run it
        self._process: asyncio.subprocess.Process | None = None
        self._starting: asyncio.Future[bool] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._clients: dict[int, CarriedClient] = {}
        self._numbers = 0

    @property
    def usable(self) -> bool:
        """Whether a client may be opened on it: not started yet, starting, or running."""
        starting = self._starting
        return starting is None or not starting.done() or self._reader is not None

    async def open(self, words: list[str], timeout: float) -> CarriedClient | None:
        """A new control client of the server at ``words[1]`` (header, socket path, then
        the command); None when the carrier cannot run on the host. Its start is bounded
        by ``timeout``: a carrier that does not say it runs in time is killed (and this
        client is a process of its own)."""
        if not await self._started(timeout):
            return None
        self._numbers += 1
        client = CarriedClient(self, self._numbers)
        self._clients[client.number] = client
        payload = b"".join(os.fsencode(word) + b"\0" for word in words)
        self.order(attach.OPEN, client.number, payload)
        return client

    def order(self, kind: int, number: int, payload: bytes = b"") -> None:
        """A frame to the carrier; a carrier gone ends the client at once."""
        process = self._process
        if process is None or process.stdin is None or process.returncode is not None:
            self._end_clients()
            return
        try:
            process.stdin.write(attach.frame(kind, number, payload))
        except Exception:  # the pipe is gone: its reader ends every client
            self._end_clients()

    async def _started(self, timeout: float) -> bool:
        if self._starting is None:
            self._starting = self.loop.create_task(self._start(timeout))
        try:
            return await asyncio.shield(self._starting)
        except TimeoutError:
            return False  # a client of its own is tried instead

    async def _start(self, timeout: float) -> bool:
        """Start the process and wait for its first frame: True once it runs; False when
        it ended first (then ``refused``: the host cannot run it) or said nothing within
        ``timeout`` (killed)."""
        process = self._process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert process.stdout is not None
        try:
            with anyio.fail_after(timeout):
                head = await process.stdout.readexactly(attach.FRAME.size)
        except asyncio.IncompleteReadError:
            self.refused = True
            head = b""
        except BaseException:  # its time is up, or the start was given up
            await asyncio.shield(self._end_process())
            raise
        if head[:1] != bytes([attach.HELLO]):
            await self._end_process()
            return False
        self._reader = self.loop.create_task(self._read(process.stdout))
        return True

    async def _read(self, stdout: asyncio.StreamReader) -> None:
        try:
            while True:
                head = await stdout.readexactly(attach.FRAME.size)
                kind, number, length = attach.FRAME.unpack(head)
                payload = await stdout.readexactly(length) if length else b""
                client = self._clients.get(number)
                if client is None:
                    continue
                if kind == attach.DATA:
                    client.stdout.feed_data(payload)
                elif kind == attach.EXIT:
                    del self._clients[number]
                    client.ended(struct.unpack_from("=i", payload)[0] if payload else 1)
        except (asyncio.IncompleteReadError, OSError):
            pass  # the carrier ended
        finally:
            self._reader = None
            self._end_clients()
            await asyncio.shield(self._end_process())

    def _end_clients(self) -> None:
        clients, self._clients = self._clients, {}
        for client in clients.values():
            client.ended(1)

    async def _end_process(self) -> None:
        """Its stdin closed (it ends, and its clients with it), killed after
        ``CLOSE_GRACE`` if it is still there, and reaped."""
        process = self._process
        if process is None:
            return
        with contextlib.suppress(Exception):
            assert process.stdin is not None
            process.stdin.close()
        if not await _ended(process, CLOSE_GRACE):
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        with contextlib.suppress(Exception):
            assert process.stdin is not None
            await process.stdin.wait_closed()

    async def close(self) -> None:
        """End the carrier and every client it carries."""
        starting, reader = self._starting, self._reader
        if starting is not None and not starting.done():
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
        self._end_clients()
        await self._end_process()
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader

    def abandon(self) -> None:
        """End the process of a carrier of another (possibly closed) event loop."""
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)


async def _ended(process: asyncio.subprocess.Process, within: float = CLOSE_GRACE) -> bool:
    """Whether ``process`` ended within ``within`` seconds."""
    with anyio.move_on_after(within):
        await process.wait()
    return process.returncode is not None
