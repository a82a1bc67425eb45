"""One persistent tmux control-mode client per tmux server: the path of every command.

The user sees a detached session named ``_schemux`` (``OWNED_SESSION``) in ``tmux ls``,
running an inert ``cat`` in an 80x24 window. schemux's control clients are attached to
it (``tmux list-clients -t _schemux``), the shared one that runs commands and
``SPARE_CLIENTS`` more for waits and watches. They attach only to that
session, with ``-f no-output,ignore-size``, so no user window is resized, no user session
shows a new client, and a ``client-attached`` hook fires in the owned session only (a
global ``session-created`` hook does fire once, when the owned session is created). The
owned session keeps the tmux server alive while it exists; ``kill-session -t _schemux``
removes it, and schemux makes it again on its next command. On a server that schemux
started (``schemux.tmux.agent_session``), the agent's session is there too; both stay when
schemux exits.

Control clients are started as seldom as possible: tmux 3.3a to 3.5a crash (a NULL
``control_state`` in ``control_write``) when a notification (a session made or closed,
a pane killed, a client detached) reaches a control client that has announced itself
and not yet finished identifying (tmux 3.7c survives it). So the spares start together,
when the first wait or watch wants one (and again with each start of the shared client
after that), while schemux's own commands wait (``run``); an engine that only runs
commands has one client. They are kept for the engine's life: a wait borrows one and
gives it back, also when it is given up
(the client stays blocked until the channel is signalled, ``_give_back_when_woken``); a
watch (``open_watcher``: ``%output`` wanted) borrows one and turns its output on, then
off again. Only when none is free does a wait run a plain ``tmux wait-for`` client (not
a control client: nothing to crash) and a watch start a control client of its own,
which it then leaves to the spares.

The shared client's notifications (those of the windows in the owned session, such as a
``%layout-change``, and the server-wide ones) go to every callback given to ``listen``:
one client tells every program its resizes, with no process or command of its own.

The protocol and one client's process: ``schemux.tmux.control.connection``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from schemux.errors import ConnectionLost, SchemuxError
from schemux.names import OWNED_SESSION
from schemux.system.processes import load_stretch
from schemux.tmux.control.carrier import Carried, Carrier
from schemux.tmux.control.connection import ClientProcess, Connection, Notification, answer

DEFAULT_TIMEOUT = 10.0
logger = logging.getLogger("schemux.tmux.control.engine")
SPARE_CLIENTS = 2
KEPT_FOR_WATCHES = 1  # idle clients a wait leaves for watches (which need a control client)
MAX_IDLE_CLIENTS = 32
MAX_GIVEN_UP_WAITS = 16  # clients left blocked in given-up waits, kept to be woken
SHARED_FLAGS = "no-output,ignore-size"
# a watcher's output turned on: by ``open_watcher``, or by the borrower at the start of its
# first command line (``open_watcher(output=False)``); and off by ``take_back``, in a line
# of its own (a line that turned it off ahead of other commands went unanswered on
# tmux 3.3a: the output queued before it is dropped, and the answer's start with it)
OUTPUT_ON = ("refresh-client", "-f", "!no-output")
OUTPUT_OFF = ("refresh-client", "-f", "no-output")


class Watcher:
    """A control client that one caller borrows and that is sent ``%output`` (lent by
    ``ControlEngine.open_watcher``); its notifications go to the caller's callback until
    ``close`` gives it back."""

    def __init__(self, engine: ControlEngine, connection: Connection) -> None:
        self._engine = engine
        self._connection: Connection | None = connection

    @property
    def alive(self) -> bool:
        return self._connection is not None and self._connection.alive

    async def run(self, *args: str) -> list[str]:
        """One command line on this client, with ``ControlEngine.run``'s contract; an
        ended client (the server exited, or its session was closed) refuses at once."""
        connection = self._connection
        if connection is None or not connection.alive:
            raise ConnectionLost(
                f"schemux's control client on {self._engine.describe} ended (the tmux "
                f"server exited, or {OWNED_SESSION} was closed)"
            )
        return await answer(connection, args, self._engine.timeout)

    async def close(self) -> None:
        """Give the client back (its output off again), or end it if it cannot be."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await self._engine.take_back(connection)


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
    before each start: it makes sure the server runs and the owned session exists,
    raising the usual SchemuxError otherwise; it is handed the ``starter`` of the command
    that needed the start (the server's handle that ran it, with what its call may do).
    ``argv`` is the tmux client's binary and socket flags. A command that takes longer
    than ``timeout`` fails, and the connection (then out of step) is closed; the next
    command starts a new one. Connections belong to the event loop that made them: a
    command from another loop starts a new one, and a loop's shutdown (which cancels
    every task) ends its connection's process.

    ``command`` turns a whole tmux argv into the argv of the process to start: itself on
    this machine, the ssh session that runs it on a remote host, each made to end when
    schemux does (``Host.client_command``). ``control`` turns a tmux command
    (``attach-session ...``) into the argv of a control client that runs it, before
    ``command`` (``schemux.tmux.control.client``). ``carried`` says, where it can, how
    the client is carried instead, with the engine's others, by one process there
    (``schemux.tmux.control.carrier``); a host where that process cannot run gets a
    process a client.
    """

    def __init__(
        self,
        describe: str,
        prepare: Callable[[Any], object],
        argv: list[str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        command: Callable[[list[str]], list[str]] = list,
        control: Callable[[list[str]], list[str]],
        carried: Callable[[list[str]], Carried | None] | None = None,
    ) -> None:
        self.describe = describe
        self.prepare = prepare
        self.argv = argv
        self.command = command
        self.control = control
        self.carried = carried
        self._carrier: Carrier | None = None
        self.timeout = timeout
        self._connection: Connection | None = None
        self._starting: asyncio.Task[Connection] | None = None
        self._preparing = False  # whether that start is still in ``prepare``
        self._spares_wanted = False  # a wait or watch has borrowed: spares start with each start
        self._spares_starting: set[asyncio.Task[Connection]] = set()
        self._idle: list[Connection] = []  # attached, no-output, nothing queued
        self._given_up: list[Connection] = []  # blocked in a wait nobody awaits any more
        self._plain_waits: set[asyncio.subprocess.Process] = set()
        self._attaching: set[asyncio.Future[None]] = set()  # control clients identifying
        # of the shared client, by a key of each ``listen``, in the order they began
        self._listeners: dict[object, Callable[[Notification], None]] = {}

    def listen(self, notify: Callable[[Notification], None]) -> Callable[[], None]:
        """Give ``notify`` each notification of the shared client (of this client and
        of each one started after it) until the function returned is called."""
        key = object()
        self._listeners[key] = notify

        def end() -> None:
            self._listeners.pop(key, None)

        return end

    def _told(self, notification: Notification) -> None:
        for notify in list(self._listeners.values()):
            try:
                notify(notification)
            except Exception:  # one listener's failure is not the others'
                logger.exception("a listener of %%%s failed", notification.name)

    async def run(self, *args: str, starter: object = None) -> list[str]:
        connection = await self._connect(starter)
        if self._attaching:
            # a notification our command causes must not reach a client mid-identification
            await asyncio.wait(self._attaching)
            connection = await self._connect(starter)  # closed meanwhile: started again
        return await answer(connection, args, self.timeout)

    async def _connect(self, starter: object = None) -> Connection:
        loop = asyncio.get_running_loop()
        connection = self._connection
        if connection is not None and connection.loop is not loop:
            connection.abandon()
            connection = self._connection = None
        if connection is not None and connection.alive:
            return connection
        starting = self._starting
        if starting is None or starting.get_loop() is not loop or starting.done():
            return await asyncio.shield(self._begin_start(starter))
        try:
            return await asyncio.shield(starting)
        except Exception:
            # another caller's start failed: it may have begun before the server was
            # started again, or without this caller's permission to start it, so this
            # caller's own start decides (once)
            connection = self._connection
            if connection is not None and connection.alive:
                return connection
            starting = self._starting
            if starting is None or starting.done():
                starting = self._begin_start(starter)
            return await asyncio.shield(starting)

    def _begin_start(self, starter: object) -> asyncio.Task[Connection]:
        starting = self._starting = asyncio.get_running_loop().create_task(self._start(starter))
        # its callers wait through shield: when all of them were cancelled, nobody would
        # retrieve a failure
        starting.add_done_callback(_retrieved)
        return starting

    async def _start(self, starter: object) -> Connection:
        """The shared client, and the spares missing once they are wanted, all started
        at once."""
        try:
            self._preparing = True
            try:
                await self._prepare(starter)
            finally:
                self._preparing = False
            self._forget_unusable()
            if self._spares_wanted:
                self._start_spares()
            self._connection = await self._attach_new(SHARED_FLAGS, self._told)
            return self._connection
        finally:
            self._starting = None

    def _start_spares(self) -> None:
        """Start the spares missing, all at once."""
        missing = SPARE_CLIENTS - len(self._idle) - len(self._given_up)
        for _ in range(max(missing, 0)):
            spare = asyncio.ensure_future(self._attach_new(SHARED_FLAGS, None))
            self._spares_starting.add(spare)
            spare.add_done_callback(self._spare_started)

    def _spare_started(self, spare: asyncio.Task[Connection]) -> None:
        self._spares_starting.discard(spare)
        if not spare.cancelled() and spare.exception() is None:
            self._keep(spare.result())

    def _forget_unusable(self) -> None:
        """Ended connections (the server restarted, say) and those of another (possibly
        closed) event loop: not counted among the spares, which a start makes again."""
        loop = asyncio.get_running_loop()
        for connection in [*self._idle, *self._given_up]:
            if connection.loop is not loop or not connection.alive:
                connection.abandon()
        self._idle = [c for c in self._idle if c.loop is loop and c.alive]
        self._given_up = [c for c in self._given_up if c.loop is loop and c.alive]

    async def _borrow(self, leaving: int = 0, starter: object = None) -> Connection | None:
        """An idle client, once the engine has started (waiting for its spares if they
        are starting, as they are at the first borrow); None when no more than
        ``leaving`` are idle."""
        await self._connect(starter)
        loop = asyncio.get_running_loop()
        while True:
            self._forget_unusable()
            if len(self._idle) > leaving:
                return self._idle.pop()
            if not self._spares_wanted:
                self._spares_wanted = True
                self._start_spares()
            starting = [spare for spare in self._spares_starting if spare.get_loop() is loop]
            if not starting:
                return None
            await asyncio.wait(starting)

    def _keep(self, connection: Connection) -> None:
        """An idle client back among the spares, or ended when there are enough."""
        if not connection.alive:
            return
        if len(self._idle) < MAX_IDLE_CLIENTS:
            self._idle.append(connection)
        else:
            connection.fail("schemux keeps enough idle control clients")

    async def take_back(self, connection: Connection) -> None:
        """A watcher's client: its output off again and idle, or ended."""
        connection.notify = None
        usable = (
            connection.alive
            and connection.loop is asyncio.get_running_loop()
            and not connection.frames.answers
        )
        if usable:
            try:
                await answer(connection, OUTPUT_OFF, self.timeout)
            except SchemuxError:
                usable = False
        if usable:
            self._keep(connection)
        else:
            await connection.close()

    async def open_watcher(
        self, notify: Callable[[Notification], None], *, output: bool = True
    ) -> Watcher:
        """A control client of the caller's own that is sent ``%output``: attached to the
        owned session without ``no-output``, so tmux reports the output of every pane of
        the windows in that session to ``notify`` (with every other notification). The
        caller closes it; until then it runs commands like ``run``. A pane that a
        previous borrower paused (``refresh-client -A``) stays paused for this one.
        ``output`` False: the caller's first command line begins with ``OUTPUT_ON``,
        which saves a round trip (a new client has its output on already)."""
        connection = await self._borrow()
        if connection is not None:
            connection.notify = notify
            if not output:
                return Watcher(self, connection)
            try:
                await answer(connection, OUTPUT_ON, self.timeout)
            except BaseException:
                await connection.close()
                raise
            return Watcher(self, connection)
        await self._prepare()
        return Watcher(self, await self._attach_new("ignore-size", notify))

    async def _prepare(self, starter: object = None) -> None:
        result = self.prepare(starter)
        if asyncio.iscoroutine(result):
            await result

    async def _attach_new(
        self, flags: str, notify: Callable[[Notification], None] | None
    ) -> Connection:
        """A new control client, attached to the owned session and answering."""
        attached = asyncio.get_running_loop().create_future()
        self._attaching.add(attached)
        try:
            return await self._attached(flags, notify)
        finally:
            self._attaching.discard(attached)
            attached.set_result(None)

    async def _attached(
        self, flags: str, notify: Callable[[Notification], None] | None
    ) -> Connection:
        spawning = asyncio.ensure_future(self._spawn(flags, notify))
        try:
            connection = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            # cancelled while the process starts: it may be announcing itself to tmux,
            # so it is ended the gentle way (see Connection.terminate) once it exists
            spawning.add_done_callback(_end_spawned)
            raise
        try:
            await self._until_attached(connection)
        except BaseException:
            await connection.close()
            raise
        return connection

    async def _until_attached(self, connection: Connection) -> None:
        """Wait for the new client's attach: up to the engine's timeout, stretched by how
        loaded the machine is (looked at again every second, as the load shows), so that
        many servers starting at once on a busy machine are slow, not failed; then the
        error says what was waited for, how long, and the load."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        attached = connection.attached
        try:
            while not attached.done():
                stretch = load_stretch()
                left = started + self.timeout * stretch - loop.time()
                if left <= 0:
                    raise SchemuxError(
                        f"tmux on {self.describe} did not accept a control client within "
                        f"{loop.time() - started:.0f} s (the machine's load per core: "
                        f"{stretch:.1f})",
                        suggestion="check that the tmux server answers (tmux "
                        "list-sessions); try again when the machine is less busy",
                    )
                await asyncio.wait({attached}, timeout=min(left, 1.0))
        except BaseException:
            # given up (or cancelled): nobody waits for the attach any more, so the
            # connection's end must not leave an error on it that nobody retrieves
            attached.cancel()
            raise
        attached.result()  # the attach's own failure, if it failed

    async def _spawn(self, flags: str, notify: Callable[[Notification], None] | None) -> Connection:
        attach = ["attach-session", "-f", flags, "-t", f"={OWNED_SESSION}"]
        proc: ClientProcess | None = None
        carried = self.carried(attach) if self.carried is not None else None
        if carried is not None and (carrier := self._carrier_for(carried.argv)) is not None:
            proc = await carrier.open(carried.words, self.timeout * load_stretch())
        if proc is None:
            proc = await asyncio.create_subprocess_exec(
                *self.command(self.control(attach)),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
        return Connection(proc, self.describe, notify)

    def _carrier_for(self, argv: list[str]) -> Carrier | None:
        """This loop's carrier (a new one when the last has ended), or None where it
        cannot run."""
        carrier = self._carrier
        if carrier is not None and carrier.loop is not asyncio.get_running_loop():
            carrier.abandon()
            carrier = None
        if carrier is not None and carrier.refused:
            return None
        if carrier is None or not carrier.usable:
            carrier = self._carrier = Carrier(argv)
        return carrier

    async def wait(
        self, channel: str, sent: asyncio.Event | None = None, starter: object = None
    ) -> None:
        """Return once ``channel`` is signalled (tmux ``wait-for``), however long it takes;
        ``sent`` is set once the ``wait-for`` is on its way to tmux.

        A waiting ``wait-for`` holds its client's whole command queue, so a wait never
        runs on the shared connection: it borrows a spare (leaving ``KEPT_FOR_WATCHES``
        to watches), or runs a plain ``tmux wait-for`` client when none is free. A wait
        cancelled before the signal leaves its waiter in tmux whatever becomes of its
        client (tmux keeps the waiter of a client that has gone), so a spare stays
        blocked until the channel is signalled and then serves again; a plain client is
        ended.
        """
        connection = await self._borrow(KEPT_FOR_WATCHES, starter)
        if connection is None:
            await self._wait_plain(channel, sent)
            return
        answered = connection.send(("wait-for", "--", channel))
        if sent is not None:
            sent.set()
        try:
            await asyncio.shield(answered)
        except asyncio.CancelledError:
            self._give_back_when_woken(connection, answered)
            raise
        except BaseException:
            connection.fail(f"the wait on {channel} failed")
            raise
        self._keep(connection)

    def _give_back_when_woken(
        self, connection: Connection, answered: asyncio.Future[list[str]]
    ) -> None:
        """A spare blocked in a given-up wait: idle again once its channel is signalled
        (callers signal it when they are its last waiter); past ``MAX_GIVEN_UP_WAITS``
        such, the oldest is ended instead."""
        self._given_up.append(connection)

        def woken(answered: asyncio.Future[list[str]]) -> None:
            failed = answered.exception()  # the client's end: nobody else retrieves it
            if connection in self._given_up:
                self._given_up.remove(connection)
                if failed is None:
                    self._keep(connection)

        answered.add_done_callback(woken)
        while len(self._given_up) > MAX_GIVEN_UP_WAITS:
            self._given_up.pop(0).fail("schemux keeps enough clients in given-up waits")

    async def _wait_plain(self, channel: str, sent: asyncio.Event | None) -> None:
        """``wait-for`` on a tmux client of its own, not a control client."""
        proc = await asyncio.create_subprocess_exec(
            *self.command([*self.argv, "wait-for", "--", channel]),
            stdin=asyncio.subprocess.PIPE,  # a remote client ends when its input does
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        self._plain_waits.add(proc)
        if sent is not None:
            sent.set()
        try:
            assert proc.stderr is not None
            error = await proc.stderr.read()
            await proc.wait()
        except BaseException:
            await asyncio.shield(_end_process(proc))
            raise
        finally:
            self._plain_waits.discard(proc)
        if proc.returncode:
            said = error.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
            raise ConnectionLost(f"the wait on {channel} on {self.describe} ended: {said}")

    def _seeming_alive(self) -> list[Connection]:
        """The kept clients (the shared one, the idle spares) that have not read their
        end yet."""
        kept = [self._connection, *self._idle, *self._given_up]
        return [connection for connection in kept if connection is not None and connection.alive]

    def connected(self) -> bool:
        """Whether a kept client of this engine still seems alive."""
        return bool(self._seeming_alive())

    async def until_ended(self, within: float) -> None:
        """Wait, up to ``within`` seconds, for the clients that still seem alive to read
        their end, once the server is known gone: a next command then starts it again
        instead of going to a client about to fail it."""
        readers = {connection.reader for connection in self._seeming_alive()}
        if readers:
            await asyncio.wait(readers, timeout=within)

    def _starts_in_progress(self) -> list[asyncio.Future[Any]]:
        starting: list[asyncio.Future[Any]] = [*self._spares_starting, *self._attaching]
        if self._starting is not None:
            starting.append(self._starting)
        return starting

    async def close(self) -> None:
        """End the control clients (a later ``run`` starts them again), once none is
        identifying itself: the detach of one would crash tmux in another's (see the
        module)."""
        # a start still in ``prepare`` has no control client yet, only a tmux client of
        # its own (which its cancel ends): a host still being reached is not waited for
        if self._starting is not None and self._preparing:
            self._starting.cancel()
        # a start cancelled midway would end its clients too soon; a start may begin
        # others (the shared client's, its spares), so this waits until none is left
        deadline = asyncio.get_running_loop().time() + self.timeout
        while starting := self._starts_in_progress():
            remaining = deadline - asyncio.get_running_loop().time()
            done, _ = await asyncio.wait(starting, timeout=max(remaining, 0))
            if not done:
                break
        for task in starting:
            task.cancel()
        for task in starting:
            with contextlib.suppress(BaseException):
                await task
        connections = [self._connection, *self._idle, *self._given_up]
        self._connection = None
        self._idle = []
        self._given_up = []
        for connection in connections:
            if connection is None:
                continue
            if connection.loop is asyncio.get_running_loop():
                await connection.close()
            else:
                connection.abandon()
        for proc in [*self._plain_waits]:
            await _end_process(proc)
        carrier, self._carrier = self._carrier, None
        if carrier is not None:
            if carrier.loop is asyncio.get_running_loop():
                await carrier.close()
            else:
                carrier.abandon()


async def _end_process(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(Exception):
            assert proc.stdin is not None
            proc.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()
