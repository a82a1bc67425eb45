"""One ``tmux -C`` client process and the calls waiting for its answers.

Protocol (tmux's ``-C`` mode): each command line is answered by one block per executed
command, ``%begin`` ... ``%end``/``%error``; lines outside blocks are notifications
(``%output``, ``%exit``, ``%window-close``, ...), given to a watcher's callback. A command's output
is written raw, so block framing is forgeable by any program whose text a command
prints: each caller's answer is found by sentinels instead (``schemux.tmux.control.framing``).
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
from types import MappingProxyType
from typing import Protocol

from schemux.errors import ConnectionLost, SchemuxError, TmuxCommandError
from schemux.tmux.command import THEN, command_line, encode_command, split_commands
from schemux.tmux.control.framing import Answer, FrameReader

logger = logging.getLogger("schemux.tmux.control.engine")

KILL_GRACE = 2.0  # seconds a control client not yet attached is given to end by itself
DETACH_GRACE = 1.0  # seconds an idle attached client is given to leave when asked
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Notification:
    """A line outside any block: ``%name arg ...``; ``args`` splits the rest on spaces
    (for ``%output`` and ``%extended-output`` the last argument is the escaped data)."""

    name: str
    args: tuple[str, ...]
    line: str


_ARG_COUNTS = MappingProxyType({"output": 2, "extended-output": 3, "exit": 1, "message": 1})
# a leaf of a tmux layout: WIDTHxHEIGHT,X,Y,PANE (a container has { or [ after its Y)
_LAYOUT_LEAF = re.compile(r"(\d+)x(\d+),\d+,\d+,(\d+)")


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


def layout_size(layout: str, pane_id: str) -> tuple[int, int] | None:
    """The size (columns, rows) a window layout gives the pane ``pane_id``; None when it
    has no such pane (pure)."""
    number = pane_id.removeprefix("%")
    for width, height, pane in _LAYOUT_LEAF.findall(layout):
        if pane == number:
            return int(width), int(height)
    return None


def resized_to(notification: Notification, window_id: str, pane_id: str) -> tuple[int, int] | None:
    """The size of the pane ``pane_id`` of the window ``window_id`` that a
    ``%layout-change`` of that window gives; None for any other notification (pure)."""
    args = notification.args
    if notification.name != "layout-change" or len(args) < 2 or args[0] != window_id:
        return None
    return layout_size(args[1], pane_id)


class ClientInput(Protocol):
    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...

    async def wait_closed(self) -> None: ...


class ClientOutput(Protocol):
    async def read(self, n: int = -1) -> bytes: ...


class ClientProcess(Protocol):
    """A control client as a connection uses it: a process of its own
    (``asyncio.subprocess.Process``) or one a carrier carries
    (``schemux.tmux.control.carrier.CarriedClient``, which has no pid)."""

    @property
    def stdin(self) -> ClientInput | None: ...

    @property
    def stdout(self) -> ClientOutput | None: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def pid(self) -> int | None: ...

    async def wait(self) -> int: ...

    def kill(self) -> None: ...


class Connection:
    """One ``tmux -C attach`` client and the calls waiting for its answers."""

    def __init__(
        self,
        proc: ClientProcess,
        describe: str,
        notify: Callable[[Notification], None] | None,
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
        # when tmux last finished answering a command of ours (loop time): a command's
        # wait for its own answer starts there once the commands ahead of it are done
        self.answered_at = self.loop.time()
        self.frames = FrameReader(
            notification=self._notification, block=self._attach_answer, broken=self._broken
        )
        self.reader = self.loop.create_task(self._read())

    def send(self, args: tuple[str, ...]) -> asyncio.Future[list[str]]:
        """Queue one line, with its sentinels (``schemux.tmux.control.framing``); the line is
        encoded first, so a command that cannot be sent is refused with nothing queued (a queued
        call without its line would take the next caller's answer); an ended connection
        refuses too, as its answers would never come."""
        if not self.alive:
            raise ConnectionLost(f"the tmux control client on {self.describe} has ended")
        answer = Answer.expecting(self.loop.create_future(), split_commands(args))
        framed: list[str] = []
        for index, span in enumerate(answer.spans):
            if index:
                framed += [THEN, "display-message", "-p", answer.sentinels[index - 1], THEN]
            for place, command in enumerate(span):
                framed += [THEN, *command] if place else command
        last = command_line(("display-message", "-p", answer.sentinels[-1]))
        line = encode_command(framed) + last
        try:
            self.stdin.write(line)
        except Exception as error:  # the pipe is gone: every caller must hear of it
            self.fail(f"writing to the tmux control client failed: {error!r}")
            raise ConnectionLost(f"writing to the tmux control client failed: {error!r}") from None
        self.frames.answers.append(answer)
        answer.future.add_done_callback(self._answered)
        return answer.future

    def _answered(self, future: asyncio.Future[list[str]]) -> None:
        if not future.cancelled() and not isinstance(future.exception(), ConnectionLost):
            self.answered_at = self.loop.time()

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
            await self._ended()
            raise
        except Exception as error:  # any failure ends the connection
            self.fail(f"reading from the tmux control client failed: {error!r}")
        else:
            self.fail(f"the tmux server on {self.describe} exited (its control client ended)")
        # an ended connection is dropped without close() (the next call starts another)
        await self._ended()

    async def _ended(self) -> None:
        """Wait, after ``fail``, for the process's exit and its input pipe's close.

        Python 3.11.0-3.11.2 (Debian 12's) report a write that broke the pipe (the client
        died before the reader saw it end) as an error nobody retrieved, unless the
        pipe's close is waited for; ``terminate`` has closed it, so this wait ends."""
        with contextlib.suppress(Exception):
            await asyncio.shield(self.proc.wait())
        with contextlib.suppress(Exception):
            await self.stdin.wait_closed()

    def _attach_answer(self, error: bool, lines: list[str]) -> None:
        if self.attached.done():
            return  # a block of a command run later (if-shell -b ...): nobody's answer
        if error:
            self.attached.set_exception(SchemuxError("\n".join(lines)))
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
        if self.notify is None:
            return
        try:
            self.notify(notification)
        except Exception:  # a watcher's failure must not end the connection
            logger.exception("the watcher of %%%s failed", notification.name)

    def fail(self, message: str) -> None:
        """End the connection: every waiting call gets ``message``; the process ends."""
        if not self.alive:
            return
        self.alive = False
        idle = self.attached.done() and not self.frames.answers  # nothing of ours queued
        if not self.attached.done():
            self.attached.set_exception(ConnectionLost(message))
        while self.frames.answers:
            answer = self.frames.answers.popleft()
            if not answer.future.done():
                answer.future.set_exception(ConnectionLost(message))
        self.terminate(idle=idle)

    def terminate(self, *, idle: bool = False) -> None:
        """Close stdin (``tmux -C`` exits on it) and kill the process to be sure, once
        tmux has attached it.

        An ``idle`` client (attached, no command of ours in its queue) is asked to leave
        first: an empty line is control mode's detach, which tmux answers with ``%exit``
        and by ending the client itself; it is killed only if still there after
        ``DETACH_GRACE``. Killing the process ends the client only on this machine: over
        ssh it ends the local ssh, and the remote client then depends on the session's
        teardown reaching it, which a wait's watcher was seen to outlive by seconds.
        A client with a command queued (a blocked ``wait-for``, an answer overdue) would
        not read the empty line: it is killed at once, as before.

        tmux 3.3a crashes (``control_stop`` on a client without control state: a NULL
        dereference) when a control client dies after announcing itself as one and
        before its identification is complete. A client that tmux has written to is past
        that point and is killed at once; an earlier one only loses its stdin, which
        ends it as soon as it is attached, and is killed after ``KILL_GRACE`` seconds
        only if it is still there."""
        with contextlib.suppress(Exception):
            if idle and self.proc.returncode is None:
                self.stdin.write(b"\n")
            self.stdin.close()
        if self.proc.returncode is not None:
            return
        if idle:
            self.loop.call_later(DETACH_GRACE, self._kill)
        elif self.heard:
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
        if self.proc.returncode is not None or self.proc.pid is None:
            return  # reaped already (its pid may be another process's now), or carried
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL if self.heard else signal.SIGTERM)

    async def close(self) -> None:
        self.fail("schemux closed its tmux connection")
        await self._ended()
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.reader


async def answer(connection: Connection, args: tuple[str, ...], timeout: float) -> list[str]:
    """Send one command line on ``connection`` and wait for its answer (``run``'s contract).

    tmux answers a client's commands in order, so a command sent behind a burst of others
    waits for theirs first: it is overdue only when ``timeout`` seconds pass from its
    sending, or from the last answer since, with no answer from tmux (300 programs started
    at once on a loaded machine queued new-windows for over 10 s while tmux answered
    every few milliseconds)."""
    loop = connection.loop
    future = connection.send(args)
    sent = loop.time()
    try:
        while (left := max(sent, connection.answered_at) + timeout - loop.time()) > 0:
            done, _ = await asyncio.wait((future,), timeout=left)
            if done:
                return future.result()
    except asyncio.CancelledError:
        future.cancel()
        raise
    except ConnectionLost:
        raise
    except SchemuxError as error:
        raise TmuxCommandError(args[0], error.message) from None
    connection.fail(
        f"tmux did not answer {args[0]} within {timeout:g} s; the control connection was restarted"
    )
    raise SchemuxError(
        f"tmux on {connection.describe} did not answer {args[0]} within {timeout:g} s",
        suggestion="check that the tmux server is responsive, then retry",
    )
