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

Protocol (tmux's ``-C`` mode): each command line is answered by one block per executed
command, ``%begin`` ... ``%end``/``%error``; lines outside blocks are notifications
(``%output``, ``%exit``, ``%window-close``, ...), given to subscribers. A command's output
is written raw, so block framing is forgeable by any program whose text a command
prints: each caller's answer is found by sentinels instead (``schemux.framing``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from schemux.errors import TmuxCommandError, ToolError
from schemux.framing import Answer, FrameReader

logger = logging.getLogger("schemux.engine")

OWNED_SESSION = "_schemux"
CONTROL_MARK = "@schemux_control"  # window option of the owned session's control window
DEFAULT_TIMEOUT = 10.0
KILL_GRACE = 2.0  # seconds a control client not yet attached is given to end by itself
MAX_IDLE_WAITERS = 32
_CHUNK = 1 << 16

_SPECIAL = re.compile("['\x00-\x1f\x7f\udc80-\udcff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char == "'":
        return "'\\''"
    if char == "\x00":
        raise ValueError("a tmux argument cannot contain a NUL character")
    code = ord(char)
    byte = code - 0xDC00 if code >= 0xDC80 else code  # surrogateescape'd byte
    return f"'\\{byte:03o}'"


def quote_argument(argument: str) -> str:
    """``argument`` as one token of tmux's command parser, taken verbatim.

    Inside single quotes tmux expands nothing (no ``$``, ``~``, ``\\``, ``#``, ``;``);
    a quote, control characters and undecodable bytes go outside the quotes as backslash
    escapes (``\\'``, octal ``\\012``), which tmux's parser reads as the byte itself.
    """
    return "'" + _SPECIAL.sub(_escape, argument) + "'"


class _Separator(str):
    """The one value ``command_line`` writes as tmux's command separator."""

    __slots__ = ()


THEN: Final[str] = _Separator(";")
"""Between two commands of one line: ``run("a", THEN, "b")``. Command lists are
structural: only this object separates; an argument that merely equals ``";"`` (a
program's argv, say) is quoted like any other."""


def is_separator(arg: str) -> bool:
    """Whether ``arg`` is ``THEN`` (and not merely a ``";"``)."""
    return type(arg) is _Separator


def command_line(args: tuple[str, ...] | list[str]) -> bytes:
    """One control-mode line: every argument quoted, ``THEN`` written as a separator.

    Raises ValueError (before anything is queued or written) for an argument tmux cannot
    be given: one with a NUL character.
    """
    text = " ".join(";" if is_separator(arg) else quote_argument(arg) for arg in args)
    return text.encode("utf-8", "surrogateescape") + b"\n"


def encode_command(args: tuple[str, ...] | list[str]) -> bytes:
    """``command_line``, with an argument tmux cannot take refused as a ToolError."""
    try:
        return command_line(args)
    except ValueError as error:
        raise UnsendableArgument(
            f"tmux {args[0] if args else ''} cannot be sent: {error}",
            suggestion="remove the NUL character from the value",
        ) from None


def split_commands(args: tuple[str, ...] | list[str]) -> list[list[str]]:
    """The commands of a structural command list (separated by ``THEN``)."""
    commands: list[list[str]] = [[]]
    for arg in args:
        if is_separator(arg):
            commands.append([])
        else:
            commands[-1].append(arg)
    return commands


@dataclass(frozen=True)
class Notification:
    """A line outside any block: ``%name arg ...``; ``args`` splits the rest on spaces
    (for ``%output`` and ``%extended-output`` the last argument is the escaped data)."""

    name: str
    args: tuple[str, ...]
    line: str


_ARG_COUNTS = {"output": 2, "extended-output": 3, "exit": 1, "message": 1}


def parse_notification(line: str) -> Notification:
    head, _, rest = line.partition(" ")
    name = head[1:]
    count = _ARG_COUNTS.get(name)
    if not rest:
        args: tuple[str, ...] = ()
    elif count is None:
        args = tuple(rest.split(" "))
    else:
        args = tuple(rest.split(" ", count - 1))
    return Notification(name, args, line)


Subscriber = Callable[[Notification], object] | asyncio.Queue[Notification]


class UnsendableArgument(ToolError):
    """An argument tmux cannot be given (a NUL character); nothing was sent."""


class ConnectionLost(ToolError):
    """The control connection ended (the server exited, or a command timed out)."""


class _Connection:
    """One ``tmux -C attach`` process and the calls waiting for its answers."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        describe: str,
        notify: Callable[[Notification], None],
    ) -> None:
        assert proc.stdin is not None
        assert proc.stdout is not None
        self.proc = proc
        self.loop = asyncio.get_running_loop()
        self.stdin = proc.stdin
        self.stdout = proc.stdout
        self.describe = describe
        self.notify = notify
        self.attached: asyncio.Future[list[str]] = self.loop.create_future()
        self.alive = True
        self.heard = False  # whether tmux wrote anything yet: then it has attached us
        self.frames = FrameReader(
            notification=self._notification, block=self._attach_answer, broken=self._broken
        )
        self.reader = self.loop.create_task(self._read())

    def send(self, args: tuple[str, ...]) -> asyncio.Future[list[str]]:
        """Queue one line, with its sentinels (``schemux.framing``); the line is encoded
        first, so a command that cannot be sent is refused with nothing queued (a queued
        call without its line would take the next caller's answer)."""
        commands = split_commands(args)
        answer = Answer.expecting(self.loop.create_future(), commands)
        framed: list[str] = []
        for index, command in enumerate(commands):
            if index:
                framed += [THEN, "display-message", "-p", answer.sentinels[index - 1], THEN]
            framed += command
        last = command_line(("display-message", "-p", answer.sentinels[-1]))
        line = encode_command(framed) + last
        try:
            self.stdin.write(line)
        except Exception as error:  # the pipe is gone: every caller must hear of it
            self.fail(f"writing to the tmux control client failed: {error!r}")
            raise ConnectionLost(f"writing to the tmux control client failed: {error!r}") from None
        self.frames.answers.append(answer)
        return answer.future

    async def _read(self) -> None:
        buffer = bytearray()
        scanned = 0
        try:
            while True:
                chunk = await self.stdout.read(_CHUNK)
                if not chunk:
                    break
                self.heard = True
                buffer += chunk
                start = 0
                while (end := buffer.find(b"\n", scanned)) >= 0:
                    self.frames.feed(buffer[start:end].decode("utf-8", "surrogateescape"))
                    start = scanned = end + 1
                del buffer[:start]
                scanned = len(buffer)
        except asyncio.CancelledError:
            # close() or the event loop's shutdown (asyncio.run cancels every task): end
            # the process while this loop can still reap it
            self.fail("schemux closed its tmux connection")
            with contextlib.suppress(Exception):
                await self.proc.wait()
            raise
        except Exception as error:  # any failure ends the connection
            self.fail(f"reading from the tmux control client failed: {error!r}")
            return
        self.fail(f"the tmux server on {self.describe} exited (its control client ended)")

    def _attach_answer(self, error: bool, lines: list[str]) -> None:
        if self.attached.done():
            return  # a block of a command run later (if-shell -b ...): nobody's answer
        if error:
            self.attached.set_exception(ToolError("\n".join(lines)))
        else:
            self.attached.set_result(lines)

    def _broken(self, reason: str) -> None:
        self.fail(f"tmux on {self.describe} is out of step: {reason}")

    def _notification(self, line: str) -> None:
        if not line.startswith("%"):
            return  # nothing else is sent outside blocks
        notification = parse_notification(line)
        if notification.name == "exit":
            reason = " ".join(notification.args)
            self.fail(
                f"the tmux server on {self.describe} exited or detached schemux's control "
                f"client{f' ({reason})' if reason else ''}"
            )
        self.notify(notification)

    def fail(self, message: str) -> None:
        """End the connection: every waiting call gets ``message``; the process ends."""
        if not self.alive:
            return
        self.alive = False
        if not self.attached.done():
            self.attached.set_exception(ConnectionLost(message))
        while self.frames.answers:
            answer = self.frames.answers.popleft()
            if not answer.future.done():
                answer.future.set_exception(ConnectionLost(message))
        self.terminate()

    def terminate(self) -> None:
        """Close stdin (``tmux -C`` exits on it) and kill the process to be sure, once
        tmux has attached it.

        tmux 3.3a crashes (``control_stop`` on a client without control state: a NULL
        dereference) when a control client dies after announcing itself as one and
        before its identification is complete. A client that tmux has written to is past
        that point and is killed at once; an earlier one only loses its stdin, which
        ends it as soon as it is attached, and is killed after ``KILL_GRACE`` seconds
        only if it is still there."""
        if self.proc.returncode is not None:
            return
        with contextlib.suppress(Exception):
            self.stdin.close()
        if self.heard:
            self._kill()
        else:
            self.loop.call_later(KILL_GRACE, self._kill)

    def _kill(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    def abandon(self) -> None:
        """Forget a connection of another (possibly closed) event loop and end its
        process (SIGTERM before tmux attached it: see ``terminate``)."""
        self.alive = False
        if self.proc.returncode is not None:
            return  # reaped already: its pid may be another process's now
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL if self.heard else signal.SIGTERM)

    async def close(self) -> None:
        self.fail("schemux closed its tmux connection")
        with contextlib.suppress(ProcessLookupError):
            await asyncio.shield(self.proc.wait())
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.reader


async def _answer(connection: _Connection, args: tuple[str, ...], timeout: float) -> list[str]:
    """Send one command line on ``connection`` and wait for its answer (``run``'s contract)."""
    future = connection.send(args)
    try:
        async with asyncio.timeout(timeout):
            return await future
    except TimeoutError:
        connection.fail(
            f"tmux did not answer {args[0]} within {timeout:g} s; the control "
            "connection was restarted"
        )
        raise ToolError(
            f"tmux on {connection.describe} did not answer {args[0]} within {timeout:g} s",
            suggestion="check that the tmux server is responsive, then retry",
        ) from None
    except ConnectionLost:
        raise
    except ToolError as error:
        raise TmuxCommandError(args[0], error.message) from None


class Watcher:
    """A control client that one caller owns and that is sent ``%output`` (made by
    ``ControlEngine.open_watcher``); its notifications go to the caller's callback."""

    def __init__(self, connection: _Connection, timeout: float) -> None:
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
        return await _answer(self._connection, args, self._timeout)

    async def close(self) -> None:
        """End the client (tmux detaches it; nothing of it stays)."""
        await self._connection.close()


def _retrieved(task: asyncio.Future[_Connection]) -> None:
    if not task.cancelled():
        task.exception()


def _end_spawned(spawning: asyncio.Future[_Connection]) -> None:
    """End the connection of a start that its caller gave up."""
    if not spawning.cancelled() and spawning.exception() is None:
        connection = spawning.result()
        connection.fail("schemux gave up this control client while it started")
        connection.attached.exception()  # nobody waits for this attach any more


class ControlEngine:
    """Commands to one tmux server over a control-mode client, started on first use.

    ``run`` has the contract of ``TmuxServer.run``. ``prepare`` (given by the server) runs
    before each connection: it makes sure the server runs and the owned session exists,
    raising the usual ToolError otherwise; ``argv`` is the tmux client's binary and socket
    flags. A command that takes longer than ``timeout`` fails, and the connection (then
    out of step) is closed; the next command starts a new one. Connections belong to the
    event loop that made them: a command from another loop starts a new one, and a loop's
    shutdown (which cancels every task) ends its connection's process.

    ``command`` turns a whole tmux argv into the argv of the process to start: itself on
    this machine, the ssh session that runs it on a remote host (``schemux.hosts``).
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
        self._connection: _Connection | None = None
        self._starting: asyncio.Task[_Connection] | None = None
        self._subscribers: dict[str, list[Subscriber]] = {}
        self._idle_waiters: list[_Connection] = []
        self.waits_in_progress = 0
        # ids of the sessions made on this server for this process (the owned one, the
        # agent's), oldest first, so a failed call can report what it created
        self.created_sessions: list[str] = []

    @property
    def pid(self) -> int | None:
        """The control client's process id while a connection is up."""
        connection = self._connection
        return connection.proc.pid if connection is not None and connection.alive else None

    def subscribe(self, name: str, subscriber: Subscriber) -> Callable[[], None]:
        """Deliver notifications ``%name`` (``"*"`` for all) to a callback or a queue;
        returns the function that unsubscribes."""
        self._subscribers.setdefault(name, []).append(subscriber)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.get(name, []).remove(subscriber)

        return unsubscribe

    def _notify(self, notification: Notification) -> None:
        for key in (notification.name, "*"):
            for subscriber in list(self._subscribers.get(key, ())):
                try:
                    if isinstance(subscriber, asyncio.Queue):
                        subscriber.put_nowait(notification)
                    else:
                        subscriber(notification)
                except Exception:  # a subscriber's failure must not end the connection
                    logger.exception("a subscriber of %%%s failed", notification.name)

    async def run(self, *args: str) -> list[str]:
        connection = await self._connect()
        return await _answer(connection, args, self.timeout)

    async def _connect(self) -> _Connection:
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

    async def _start(self) -> _Connection:
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
    ) -> _Connection:
        """A new control client, attached to the owned session and answering."""
        result = self.prepare()
        if asyncio.iscoroutine(result):
            await result
        spawning = asyncio.ensure_future(self._spawn(flags, notify or self._notify))
        try:
            connection = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            # cancelled while the process starts: it may be announcing itself to tmux,
            # so it is ended the gentle way (see _Connection.terminate) once it exists
            spawning.add_done_callback(_end_spawned)
            raise
        try:
            async with asyncio.timeout(self.timeout):
                await connection.attached
        except BaseException as error:
            await connection.close()
            if isinstance(error, TimeoutError):
                raise ToolError(
                    f"tmux on {self.describe} did not accept a control client within "
                    f"{self.timeout:g} s"
                ) from None
            raise
        return connection

    async def _spawn(self, flags: str, notify: Callable[[Notification], None]) -> _Connection:
        attach = ["-u", "-C", "attach-session", "-f", flags, "-t", f"={OWNED_SESSION}"]
        proc = await asyncio.create_subprocess_exec(
            *self.command([*self.argv, *attach]),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return _Connection(proc, self.describe, notify)

    async def wait(self, channel: str) -> None:
        """Return once ``channel`` is signalled (tmux ``wait-for``), however long it takes.

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
        self.waits_in_progress += 1
        try:
            await connection.send(("wait-for", channel))
        except BaseException:
            connection.fail(f"the wait on {channel} was given up")
            raise
        finally:
            self.waits_in_progress -= 1
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
