"""Talking to one tmux server without blocking the loop.

Commands go over one persistent control-mode client per server (``schemux.tmux.control.engine``),
which the server's TmuxServer owns (and a fleet's host scope owns one TmuxServer per
server it uses). A call works through its own handle of the server (``for_call``),
which carries what that call may do there (``CallPermits``). A wait (``wait-for``)
never goes there: it takes a control client of its own from a pool, ended when the wait
is cancelled, so nothing is left waiting inside tmux. The server may be on another host
(``schemux.hosts``): its address carries the host.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import re
import shlex
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, runtime_checkable

from schemux.config import AgentSession
from schemux.errors import (
    ConnectionLost,
    Created,
    SchemuxError,
    ServerUnavailable,
    TmuxCommandError,
    preview,
    shorten,
)
from schemux.hooks import PENDING, integrated_command
from schemux.hosts import Host
from schemux.hosts.local import LOCAL
from schemux.names import socket_name_problem
from schemux.system.child_runs import run_collecting
from schemux.system.tethered import tethered
from schemux.tmux.agent_session import (
    AGENT_MARK,
    AgentSessionMade,
    history_limit_arguments,
    login_shell,
    new_session_arguments,
    user_environment,
)
from schemux.tmux.command import THEN, command_arguments
from schemux.tmux.control.carrier import Carried, carrier_argv
from schemux.tmux.control.client import control_client_argv, header_for, plain_path
from schemux.tmux.control.engine import ControlEngine
from schemux.tmux.format import parse_row
from schemux.tmux.owned_session import OWNED_TARGET, creation_command
from schemux.tmux.references import CreatedSessionRow, ServerIdentity, created_session
from schemux.versions import (
    MISMATCH_FIX,
    mismatch,
    server_refusal,
)

logger = logging.getLogger("schemux")
Shared = TypeVar("Shared")


@runtime_checkable
class ClosedWithServer(Protocol):
    """What ``TmuxServer.shared`` holds that must be closed with the server (pipes, say)."""

    def close(self) -> None: ...


def check_socket_name(name: str, field: str = "socket_name") -> None:
    """Refuse a socket name that is not one, naming the field it came from."""
    problem = socket_name_problem(name)
    if problem is not None:
        raise SchemuxError(
            f"{field} {preview(name)} is not a tmux socket name: {problem}",
            suggestion="pass a name as tmux -L takes it, such as 'work'; a socket path can "
            "only be configured (schemux --socket-path, or SCHEMUX_SOCKET_PATH)",
        )


@dataclass(frozen=True)
class ServerAddress:
    """Which tmux server: by socket name (``-L``), socket path (``-S``), or tmux's default;
    on this machine or on a remote host (``schemux.hosts``)."""

    socket_name: str | None = None
    socket_path: str | None = None
    host: Host = LOCAL

    def flags(self) -> tuple[str, ...]:
        if self.socket_path is not None:
            return ("-S", self.socket_path)
        if self.socket_name is not None:
            return ("-L", self.socket_name)
        return ()

    def command_text(self, *args: str) -> str:
        """A tmux command line a person can run (a shell's quoting) to reach this server,
        not whichever one their terminal's ``tmux`` would."""
        return shlex.join(["tmux", *self.flags(), *args])

    def describe(self) -> str:
        on = self.host.where()
        if self.socket_path is not None:
            return f"socket path {shorten(self.socket_path, 200)}{on}"
        if self.socket_name is not None:
            return f"socket name {preview(self.socket_name)}{on}"
        return f"the default socket{on}"


_NO_SERVER = re.compile(
    r"no server running|error connecting to|No such file or directory|server exited unexpectedly"
)


# fails when the owned session is not there (display-message would print anyway), else
# prints the server's version, pid and start time, and socket path (``_learn_server``)
_OWNED_AND_VERSION = (
    "has-session", "-t", OWNED_TARGET, THEN, "display-message", "-p", "-t", OWNED_TARGET,
    "#{version}", THEN, "display-message", "-p", "-t", OWNED_TARGET, "#{pid} #{start_time}",
    THEN, "display-message", "-p", "-t", OWNED_TARGET, "#{socket_path}",
)  # fmt: skip
_VERSION = (
    "display-message", "-p", "#{version}", THEN, "display-message", "-p", "#{pid} #{start_time}",
    THEN, "display-message", "-p", "#{socket_path}",
)  # fmt: skip


class CallPermits:
    """What one call may do on the tmux servers it uses, carried by its handles of them
    (``TmuxServer.for_call``): start the configured server at its first command there
    (``allow_start``), and not connect again to a host whose connect failed in it
    (``failed_connects``, by the host's connection). Once the call has ended
    (``end``), a handle that outlived it (a program's) is given neither."""

    def __init__(self) -> None:
        self._may_start: set[TmuxServer] = set()
        self._failed_connects: dict[Hashable, ServerUnavailable] = {}
        self.ended = False

    def allow_start(self, server: TmuxServer) -> None:
        """The next command on ``server`` may start it (with its ``agent``) if it is not
        running: the first command of a call there. A server that is gone in the middle
        of a call is that call's failure, never replaced under it by a new one."""
        if server.agent is not None:
            self._may_start.add(server)

    def may_start(self, server: TmuxServer) -> bool:
        return not self.ended and server in self._may_start

    def start_used(self, server: TmuxServer) -> None:
        self._may_start.discard(server)

    def failed_connect(self, connection: Hashable) -> ServerUnavailable | None:
        """Why the connect over ``connection`` failed in this call, if it did."""
        return None if self.ended else self._failed_connects.get(connection)

    def connect_failed(self, connection: Hashable, error: ServerUnavailable) -> None:
        if not self.ended:
            self._failed_connects[connection] = error

    def end(self) -> None:
        self.ended = True
        self._may_start.clear()
        self._failed_connects.clear()


@dataclass
class _Shared:
    """What every handle of one server shares (see ``TmuxServer``): what was learned of
    the server, and what the layers above keep for it."""

    server_version: str | None = None
    client_version: str | None = None
    socket_path: str | None = None
    identity: ServerIdentity | None = None
    clients_connection: int | None = None
    reported_pid: tuple[int, int] | None = None
    helper_sees_pids: bool = True
    by_kind: dict[type, object] = field(default_factory=dict)


class TmuxServer:
    """Commands to one tmux server.

    With ``agent`` (the configured server's), a server that is not running when a call
    begins (``CallPermits.allow_start``) is started by that call's handle, with the owned
    session and the agent's session (``schemux.tmux.agent_session``); otherwise such a
    server is a ServerUnavailable error.

    A call's handle (``for_call``) is this server with that call's ``CallPermits``: it
    shares everything else (the control clients, what was learned of the server, what
    is kept), and is equal to every other handle of the server.
    """

    def __init__(
        self,
        address: ServerAddress,
        binary: str | None = None,
        agent: AgentSession | None = None,
        connect: Callable[[CallPermits | None], Awaitable[None]] | None = None,
        learned: Callable[[TmuxServer], None] | None = None,
    ) -> None:
        self.address = address
        # how a command first makes sure the host is reached: the host's own connect, or
        # its owner's (a fleet's, which bounds how many hosts connect at once)
        self._connect_host = connect or (lambda permits: address.host.connect())
        self.binary = binary or address.host.tmux_binary()
        self.agent = agent
        self.engine = ControlEngine(
            self.address.describe(),
            self._prepare_for,
            [self.binary, *self.address.flags()],
            command=self.address.host.client_command,
            control=self._control_client,
            carried=self._carried_client,
        )
        # the sessions made on this server by this object (the owned one, the agent's),
        # oldest first, so a failed call can report what it created
        self.created_sessions: list[Created] = []
        # the server's version once checked (a server restarted meanwhile is checked
        # again), the version of the client binary that talks to it, the socket path as
        # the server printed it, the running server as it reports itself (``learned`` is
        # told each one learned: a fleet says when two hosts reach one server), the host's
        # connection the control clients were started on (``Host.connection``), and what
        # the layers above keep: one object, shared by every handle of this server
        self._shared = _Shared()
        self._on_learned = learned
        self._permits: CallPermits | None = None  # a call's handle: that call's

    def for_call(self, permits: CallPermits) -> TmuxServer:
        """This server as the call with ``permits`` uses it: its commands may start the
        server, and connect to its host, as ``permits`` says."""
        handle = copy.copy(self)
        handle._permits = permits
        return handle

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TmuxServer) and other._shared is self._shared

    def __hash__(self) -> int:
        return id(self._shared)

    @property
    def identity(self) -> ServerIdentity | None:
        """The running server as it reports itself, when checked."""
        return self._shared.identity

    # for the shell facts of a host whose pids are not this machine's
    # (``schemux.shell.facts``): the server's pid and start time as tmux last said them,
    # and whether the host's helper sees the server's pids (when it does not, the facts
    # are read by run-shell only)
    @property
    def reported_pid(self) -> tuple[int, int] | None:
        return self._shared.reported_pid

    @reported_pid.setter
    def reported_pid(self, value: tuple[int, int] | None) -> None:
        self._shared.reported_pid = value

    @property
    def helper_sees_pids(self) -> bool:
        return self._shared.helper_sees_pids

    @helper_sees_pids.setter
    def helper_sees_pids(self, value: bool) -> None:
        self._shared.helper_sees_pids = value

    def shared(self, kind: type[Shared]) -> Shared:
        """The one ``kind()`` this object keeps for the layers above it, made at its first
        use: what lives as long as the server does (which panes have a call of ours in
        flight, say), so that two contexts, each with its own TmuxServer, share none of
        it, and this module need not know what it is."""
        kept = self._shared.by_kind
        found = kept.get(kind)
        if not isinstance(found, kind):
            found = kept[kind] = kind()
        return found

    def describe(self) -> str:
        return self.address.describe()

    def argv(self, *args: str) -> list[str]:
        return self.address.host.command([self.binary, *self.address.flags(), *args])

    async def run(self, *args: str) -> list[str]:
        """Run one tmux command (or several joined by ``;`` arguments); return its output
        lines.

        Raises SchemuxError when no server runs there, TmuxCommandError for any other error.
        A blocking ``wait-for`` must go through ``wait`` instead.
        """
        try:
            return await self.engine.run(*args, starter=self)
        except ConnectionLost as error:
            raise self._connection_lost(error) from None
        finally:
            self._start_used()

    def _control_client(self, command: list[str]) -> list[str]:
        """A control client's argv for ``command``, for the server as last checked (see
        ``schemux.tmux.control.client``); ``_prepare`` runs before every start, so the host is
        connected, and this is the connection the client starts on."""
        learned = self._shared
        learned.clients_connection = self.address.host.connection
        return control_client_argv(
            [self.binary, *self.address.flags()],
            command,
            version=learned.server_version,
            socket_path=learned.socket_path,
            python=self.address.host.python,
            source_here=self.address.host.files_here,
        )

    def _carried_client(self, command: list[str]) -> Carried | None:
        """How a control client for ``command`` is carried with the others, on a host of
        another machine whose server the attacher serves (``schemux.tmux.control.carrier``:
        one process there for them all); None where it is a process of its own."""
        host, learned = self.address.host, self._shared
        header, python, path = header_for(learned.server_version), host.python, learned.socket_path
        if host.pids_here or header is None or python is None or path is None:
            return None
        if not plain_path(path):
            return None
        learned.clients_connection = host.connection
        # the carrier reads every client's output itself: no relay (``Host.client_command``)
        return Carried(tethered(host.exec_command(carrier_argv(python))), [header, path, *command])

    def _connection_lost(self, error: ConnectionLost) -> ConnectionLost:
        """``error``, or on a remote host whose connection dropped (or was replaced
        since the control clients started on it), that cause."""
        lost = self.address.host.lost(self._shared.clients_connection)
        if lost is None:
            return error
        return ConnectionLost(f"{lost} while this call ran; the next call connects again")

    async def wait(self, channel: str, sent: asyncio.Event | None = None) -> None:
        """Return once ``channel`` is signalled (``wait-for``), on a client of its own;
        ``sent`` is set once the ``wait-for`` is on its way."""
        try:
            await self.engine.wait(channel, sent, starter=self)
        except ConnectionLost as error:
            raise self._connection_lost(error) from None
        finally:
            self._start_used()

    async def running(self) -> bool:
        """Whether the server runs, asked by a client of its own (never starting it)."""
        try:
            await self.run_subprocess("has-session")
        except ServerUnavailable:
            return False
        except TmuxCommandError:
            return True  # it answered
        return True

    def _start_used(self) -> None:
        if self._permits is not None:
            self._permits.start_used(self)

    async def close(self) -> None:
        """End the control client (the next command starts a new one), and close what
        the layers above keep that holds resources (``ClosedWithServer``)."""
        await self.engine.close()
        for kept in self._shared.by_kind.values():
            if isinstance(kept, ClosedWithServer):
                kept.close()

    async def _prepare_for(self, starter: object) -> None:
        """``_prepare`` by the handle whose command starts a control client (this server
        itself when none is said)."""
        handle = starter if isinstance(starter, TmuxServer) else self
        await handle._prepare()

    async def _prepare(self) -> None:
        """Before a control client attaches: the server must run (``has-session`` fails
        without starting one), be of a version schemux serves (``_learn_server``)
        and the owned session must exist (made detached, running an
        inert ``cat``; only a server that exited in between would be started by it). With
        ``agent``, a server not running is started, in the user's environment, by making
        the owned session and then the agent's (so a shell that ends at once leaves the
        server up and says so). A session made here goes into the engine's
        ``created_sessions``. It runs as the handle whose command needs the client, so it
        has that call's permission."""
        start_server = False
        try:
            await self._learn_server(await self.run_subprocess(*_OWNED_AND_VERSION))
            return
        except ServerUnavailable:
            if self.agent is None or self._permits is None or not self._permits.may_start(self):
                raise
            start_server = True
        except TmuxCommandError as error:
            if not re.search(r"can't find session|no such session", error.stderr):
                raise
            # a running server, before anything is made on it (of its sessions, tmux picks one)
            await self._learn_server(await self.run_subprocess(*_VERSION))
        shown = await self._make_owned_session(agent_shell()[1] if start_server else None)
        if start_server:  # what the control clients need to know of it (control_client)
            await self._learn_server(
                await self.run_subprocess(*_VERSION) if shown is None else shown
            )
        if start_server and self.agent is not None:
            await self.make_agent_session(self.agent)

    async def _learn_server(self, shown: list[str]) -> None:
        """Record the server's version, identity and socket path, ``shown`` as
        ``#{version}``, ``#{pid} #{start_time}`` then ``#{socket_path}`` (a path with a
        newline is whole again), and tell a new identity to ``learned``; refuse a server
        older than schemux serves, whatever the client's version
        (``schemux.versions``), and say once when client and server differ."""
        server_version = shown[0] if shown else ""
        pid, _, started = (shown[1] if len(shown) > 1 else "").partition(" ")
        learned = self._shared
        learned.socket_path = "\n".join(shown[2:]) or None
        if pid.isdigit() and started.isdigit() and learned.socket_path is not None:
            identity = ServerIdentity(int(pid), int(started), learned.socket_path)
            if identity != learned.identity:
                learned.identity = identity
                if self._on_learned is not None:
                    self._on_learned(self)
        if server_version == learned.server_version:
            return
        if learned.client_version is None:
            learned.client_version = await self._client_version()
        where = self.address.describe()
        refusal = server_refusal(server_version, learned.client_version, where)
        if refusal is not None:
            raise refusal
        said = mismatch(server_version, learned.client_version, where)
        if said is not None:
            logger.warning("%s (%s)", said, MISMATCH_FIX)
        learned.server_version = server_version

    async def _client_version(self) -> str:
        """``tmux -V`` of the client binary schemux runs (where the server is): as the
        host's connect read it, when that is the binary (a process less on a host's first
        call), else run."""
        host = self.address.host
        probed = host.tmux_version
        if probed is not None and self.binary == host.tmux_binary():
            return probed
        _, out, _ = await run_collecting(host.command([self.binary, "-V"]))
        return out.decode(errors="replace").strip()

    async def _make_owned_session(self, env: dict[str, str] | None) -> list[str] | None:
        """Make the owned session; what ``_VERSION`` shows of the server, in the same
        call; None when the session was there already (made meanwhile by another
        process). With ``env`` (the user's environment), this starts the server, and
        first raises its history-limit for every pane made on it
        (``history_limit_arguments``)."""
        start = () if env is None else (*history_limit_arguments(), THEN)
        try:
            created = await self.run_subprocess(
                *start, *creation_command(), THEN, *_VERSION, env=env
            )
        except TmuxCommandError as error:
            if "duplicate session" not in error.stderr:
                raise
            return None
        if not created:
            raise self._could_not_start()
        self.created_sessions.append(created_session(parse_row(CreatedSessionRow, created[0])))
        return created[1:]

    def _could_not_start(self) -> SchemuxError:
        """The error for a client that answered nothing, with status 0: the server it
        forked could not listen."""
        return SchemuxError(
            f"tmux could not start a server on {self.address.describe()}",
            suggestion="check that the socket's directory exists and is yours to write "
            f"in (try `{self.address.command_text('new-session')}`)",
        )

    async def make_agent_session(self, agent: AgentSession) -> None:
        """Make the agent's session (starting the server when it is not running), its
        pane marked ``AGENT_MARK``; one made meanwhile by another process is taken as
        made. Its id goes into ``created_sessions``."""
        shell, env = agent_shell()
        hooked = None
        if self.address.host.files_here:  # the integration's files are written here
            hooked = integrated_command(shell, self.binary, env, login=True)
        try:
            made = await self.run_subprocess(
                *new_session_arguments(agent, self.address.host.home(), hooked), env=env
            )
        except TmuxCommandError as error:
            if "duplicate session" not in error.stderr:
                raise
            return
        if not made:
            raise self._could_not_start()
        row = parse_row(AgentSessionMade, made[0])
        pane_id, pane_pid = row.pane_id, row.pane_pid
        self.created_sessions.append(created_session(row))
        try:
            marks: tuple[str, ...] = ("set-option", "-p", "-t", pane_id, AGENT_MARK, "1")
            if hooked is not None:  # a first call waits for the hooks' first prompt
                name = os.path.basename(shell)
                marks += (THEN, "set-option", "-p", "-t", pane_id, PENDING, name)
            await self.run_subprocess(*marks)
        except TmuxCommandError as error:
            if not error.target_gone:
                raise
            raise agent_shell_ended(shell, agent.name, self.address.describe()) from None
        await self.address.host.until_shell_ready(pane_pid, self.binary)

    async def run_subprocess(self, *args: str, env: dict[str, str] | None = None) -> list[str]:
        """``run`` by a tmux client process of its own (about 2.5 ms a command); ``env``
        is the client's environment (a client that starts the server gives it to the
        server; on a remote host, the environment ssh gives the command there)."""
        text = (await self._run_own_client(args, env, None)).decode(errors="surrogateescape")
        return text.split("\n")[:-1] if text else []

    async def exchange(self, *args: str, given: bytes = b"") -> bytes:
        """One tmux command by a client process of its own whose stdin is ``given`` and
        whose stdout comes back whole, byte for byte: for the commands that read a
        client's stdin or write its stdout (``load-buffer -``, ``save-buffer -``), so
        that data never becomes an argument. The server is made ready first, as by a
        call's first ``run`` (started where the call may start it)."""
        await self.run("has-session", "-t", OWNED_TARGET)
        return await self._run_own_client(args, None, given)

    async def run_on_host(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        """``argv``, a command line of the host's (``Host.command``, ``Host.exec_command``),
        run there to its end once the host is reached as this handle may reach it: its
        exit status, output and errors, whatever they are. Cancelled, it leaves no
        process."""
        await self._connect_host(self._permits)
        return await run_collecting(argv)

    async def _run_own_client(
        self, args: tuple[str, ...], env: dict[str, str] | None, given: bytes | None
    ) -> bytes:
        """The output of ``args`` run by a client process of its own; SchemuxError when
        the host or the server cannot be reached, TmuxCommandError when tmux refuses."""
        await self._connect_host(self._permits)
        connection = self.address.host.connection
        status, out, err = await run_collecting(self.argv(*command_arguments(args)), env, given)
        if status != 0:
            host = self.address.host
            lost = None if host.reached(status) else host.lost(connection, status)
            if lost is not None:  # the way to the host failed (ssh's own failure), not tmux
                raise ServerUnavailable(f"{lost} ({err.decode(errors='replace').strip()})")
            raise self._error(args[0], err.decode(errors="replace").strip())
        return out

    def _error(self, command: str, stderr: str) -> SchemuxError:
        if _NO_SERVER.search(stderr):
            starting = self.address.command_text("new-session", "-d")
            return ServerUnavailable(
                f"no tmux server is running on {self.address.describe()} ({stderr})",
                suggestion=f"start one (for example `{starting}`) or point schemux at a "
                "running server with --socket-name/--socket-path",
            )
        return TmuxCommandError(command, stderr)


def agent_shell() -> tuple[str, dict[str, str]]:
    """The user's login shell, and the user's environment to start the server in."""
    shell = login_shell(os.environ)
    return shell, user_environment(os.environ, shell)


def agent_shell_ended(shell: str, name: str, where: str) -> SchemuxError:
    return SchemuxError(
        f"the agent's login shell {shell} ended as soon as it started, in session "
        f"{preview(name)} on {where}",
        suggestion="check that the shell of your passwd entry (or $SHELL) starts as a "
        "login shell, for example with `tmux new-session` in a terminal",
    )
