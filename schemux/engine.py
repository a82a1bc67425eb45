"""One persistent tmux control-mode client per tmux server: the path of every command.

What stays visible to the user: a detached session named ``_schemux`` (``OWNED_SESSION``)
in ``tmux ls``, running an inert ``cat`` in an 80x24 window, with one control-mode client
attached to it (``tmux list-clients -t _schemux``). The control client attaches only to
that session, with ``-f no-output,ignore-size``, so no user window is resized, no user
session shows a new client, and a ``client-attached`` hook fires in the owned session only
(a global ``session-created`` hook does fire once, when the owned session is created).
The owned session keeps the tmux server alive while it exists; ``kill-session -t
_schemux`` removes it, and schemux makes it again on its next command. A caller that
needs ``%output`` (``schemux.pane_watch``) gets a client of its own, attached without
``no-output`` (``open_watcher``), and ends it itself. On a server that
schemux started (``schemux.agent_session``), the agent's session is there too; both stay
when schemux exits.

The protocol and one client's process: ``schemux.control_connection``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from schemux.control_connection import Connection, Notification, answer
from schemux.errors import ConnectionLost, SchemuxError
from schemux.tmux_names import OWNED_SESSION

DEFAULT_TIMEOUT = 10.0
MAX_IDLE_WAITERS = 32


class Watcher:
    """A control client that one caller owns and that is sent ``%output`` (made by
    ``ControlEngine.open_watcher``); its notifications go to the caller's callback."""

    def __init__(self, connection: Connection, timeout: float) -> None:
        self._connection = connection
        self._timeout = timeout

    @property
    def alive(self) -> bool:
        return self._connection.alive

    async def run(self, *args: str) -> list[str]:
        """One command line on this client, with ``ControlEngine.run``'s contract; an
        ended client (the server exited, or its session was closed) refuses at once."""
        if not self._connection.alive:
            raise ConnectionLost(
                f"schemux's control client on {self._connection.describe} ended (the tmux "
                f"server exited, or {OWNED_SESSION} was closed)"
            )
        return await answer(self._connection, args, self._timeout)

    async def close(self) -> None:
        """End the client (tmux detaches it; nothing of it stays)."""
        await self._connection.close()


def _retrieved(task: asyncio.Future[Connection]) -> None:
    if not task.cancelled():
        task.exception()


def _end_spawned(spawning: asyncio.Future[Connection]) -> None:
    """End the connection of a start that its caller gave up."""
    if not spawning.cancelled() and spawning.exception() is None:
        connection = spawning.result()
        connection.fail("schemux gave up this control client while it started")
        connection.attached.exception()  # nobody waits for this attach any more


class ControlEngine:
    """Commands to one tmux server over a control-mode client, started on first use.

    ``run`` has the contract of ``TmuxServer.run``. ``prepare`` (given by the server) runs
    before each connection: it makes sure the server runs and the owned session exists,
    raising the usual SchemuxError otherwise; ``argv`` is the tmux client's binary and socket
    flags. A command that takes longer than ``timeout`` fails, and the connection (then
    out of step) is closed; the next command starts a new one. Connections belong to the
    event loop that made them: a command from another loop starts a new one, and a loop's
    shutdown (which cancels every task) ends its connection's process.

    ``command`` turns a whole tmux argv into the argv of the process to start: itself on
    this machine, the ssh session that runs it on a remote host, each made to end when
    schemux does (``Host.client_command``).
    """

    def __init__(
        self,
        describe: str,
        prepare: Callable[[], object],
        argv: list[str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        command: Callable[[list[str]], list[str]] = list,
    ) -> None:
        self.describe = describe
        self.prepare = prepare
        self.argv = argv
        self.command = command
        self.timeout = timeout
        self._connection: Connection | None = None
        self._starting: asyncio.Task[Connection] | None = None
        self._idle_waiters: list[Connection] = []

    async def run(self, *args: str) -> list[str]:
        connection = await self._connect()
        return await answer(connection, args, self.timeout)

    async def _connect(self) -> Connection:
        loop = asyncio.get_running_loop()
        connection = self._connection
        if connection is not None and connection.loop is not loop:
            connection.abandon()
            connection = self._connection = None
        if connection is not None and connection.alive:
            return connection
        starting = self._starting
        if starting is None or starting.get_loop() is not loop or starting.done():
            starting = self._starting = loop.create_task(self._start())
            # its callers wait through shield: when all of them were cancelled, nobody
            # would retrieve a failure
            starting.add_done_callback(_retrieved)
        return await asyncio.shield(starting)

    async def _start(self) -> Connection:
        try:
            self._connection = await self._open()
            return self._connection
        finally:
            self._starting = None

    async def open_watcher(self, notify: Callable[[Notification], None]) -> Watcher:
        """A control client of the caller's own that is sent ``%output``: attached to the
        owned session without ``no-output``, so tmux reports the output of every pane of
        the windows in that session to ``notify`` (with every other notification). The
        caller closes it; until then it runs commands like ``run``."""
        return Watcher(await self._open(flags="ignore-size", notify=notify), self.timeout)

    async def _open(
        self,
        *,
        flags: str = "no-output,ignore-size",
        notify: Callable[[Notification], None] | None = None,
    ) -> Connection:
        """A new control client, attached to the owned session and answering."""
        result = self.prepare()
        if asyncio.iscoroutine(result):
            await result
        spawning = asyncio.ensure_future(self._spawn(flags, notify))
        try:
            connection = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            # cancelled while the process starts: it may be announcing itself to tmux,
            # so it is ended the gentle way (see Connection.terminate) once it exists
            spawning.add_done_callback(_end_spawned)
            raise
        try:
            async with asyncio.timeout(self.timeout):
                await connection.attached
        except BaseException as error:
            await connection.close()
            if isinstance(error, TimeoutError):
                raise SchemuxError(
                    f"tmux on {self.describe} did not accept a control client within "
                    f"{self.timeout:g} s"
                ) from None
            raise
        return connection

    async def _spawn(self, flags: str, notify: Callable[[Notification], None] | None) -> Connection:
        attach = ["-u", "-C", "attach-session", "-f", flags, "-t", f"={OWNED_SESSION}"]
        proc = await asyncio.create_subprocess_exec(
            *self.command([*self.argv, *attach]),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return Connection(proc, self.describe, notify)

    async def wait(self, channel: str, sent: asyncio.Event | None = None) -> None:
        """Return once ``channel`` is signalled (tmux ``wait-for``), however long it takes;
        ``sent`` is set once the ``wait-for`` is on its way to tmux.

        A waiting ``wait-for`` holds its client's whole command queue, so a wait never
        runs on the shared connection: it takes a control client of its own from a pool
        of idle ones (only a first use of the pool starts a process). A wait cancelled
        before the signal leaves its client blocked inside tmux, so that client is ended,
        which also takes the waiter off the channel.
        """
        loop = asyncio.get_running_loop()
        connection = None
        while self._idle_waiters and connection is None:
            candidate = self._idle_waiters.pop()
            if candidate.alive and candidate.loop is loop:
                connection = candidate
            else:
                candidate.abandon()
        if connection is None:
            connection = await self._open()
        try:
            answered = connection.send(("wait-for", "--", channel))
            if sent is not None:
                sent.set()
            await answered
        except BaseException:
            connection.fail(f"the wait on {channel} was given up")
            raise
        if len(self._idle_waiters) < MAX_IDLE_WAITERS:
            self._idle_waiters.append(connection)
        else:
            await connection.close()

    async def close(self) -> None:
        """End the control client (a later ``run`` starts a new one)."""
        starting = self._starting
        if starting is not None:
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
        connections = [self._connection, *self._idle_waiters]
        self._connection = None
        self._idle_waiters = []
        for connection in connections:
            if connection is None:
                continue
            if connection.loop is asyncio.get_running_loop():
                await connection.close()
            else:
                connection.abandon()
