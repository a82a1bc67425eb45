"""The hosts one schemux serves, by name: each host's scope (its tmux servers, its
programs), made at its first use; connections made at a call's first command, at most a
few at once (in threads of the fleet's own), tried once a call, and closed when the host
has been idle a while.

A ``Fleet`` is owned by its ``Services``. Configured by name (``--host``, ``--hosts``)
it holds those hosts; otherwise the one host of the settings (``--ssh``, ``--exec``,
this machine), named by its label, as the audit log and resource URIs always named it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor

from schemux.audit.recordings import Recordings
from schemux.config import AgentSession, Settings
from schemux.errors import SchemuxError, ServerUnavailable, preview, shorten
from schemux.host_settings import HostTarget, NamedHost
from schemux.hosts import Host
from schemux.hosts.kinds import host_for
from schemux.programs.store import ProgramStore
from schemux.tmux.references import ServerIdentity
from schemux.tmux.server import CallPermits, ServerAddress, TmuxServer, check_socket_name

# how often, at most, the idle hosts are looked for: a fraction of the idle time
SWEEPS_PER_IDLE = 4
LONGEST_SWEEP_SECONDS = 30.0
logger = logging.getLogger("schemux")


class HostConnection:
    """The way a fleet's tmux servers connect to one of its hosts: a connect runs in the
    fleet's connect threads (when the host is not connected already) and marks the scope
    used. The host itself is what the servers run their commands through."""

    def __init__(self, host: Host, connects: Executor, scope: HostScope) -> None:
        self.host = host
        self._connects = connects
        self._scope = scope
        self.connected = False  # a connect succeeded since the last close
        self._connecting = asyncio.Lock()
        self._ended = 0  # connects that ended, failed or not
        self._failure: ServerUnavailable | None = None  # why the last one failed

    async def connect(self, permits: CallPermits | None = None) -> None:
        """Connected already (and not lost): the host's own quick check. Otherwise the
        host connects in one of the fleet's connect threads: the fleet's hosts connect a
        few at a time, and a host that is slow to connect holds only its own thread,
        never another host's calls nor schemux's other work. The callers of one host at
        once share its one connect, and its failure; a call whose connect to the host
        failed (noted in its ``permits``: each step of a call connects, and would try a
        host that does not answer again) fails at once at its later steps there (the next
        call tries again)."""
        self._scope.touch()
        earlier = None if permits is None else permits.failed_connect(self)
        if earlier is not None:
            raise ServerUnavailable(earlier.message, suggestion=earlier.suggestion)
        try:
            await self._connect()
        except ServerUnavailable as error:
            if permits is not None:
                permits.connect_failed(self, error)
            raise

    async def _connect(self) -> None:
        if not self._up():
            ended = self._ended
            async with self._connecting:
                failure = self._failure
                if failure is not None and self._ended != ended:
                    # the connect this caller waited for failed: its answer is this one's
                    raise ServerUnavailable(failure.message, suggestion=failure.suggestion)
                if not self._up():
                    self._scope.connects += 1
                    self._failure = None
                    try:
                        await self.host.connect(self._connects)
                    except ServerUnavailable as error:
                        self._failure = error
                        raise
                    finally:
                        self._ended += 1
                    self.connected = True
                    return
        await self.host.connect(self._connects)

    def _up(self) -> bool:
        return self.connected and self.host.lost() is None

    def close(self) -> None:
        self.connected = False
        self.host.close()


class ServersReached:
    """The tmux servers a fleet's hosts reached, by the identity each reports: a server
    that a second host name reaches (two ssh aliases of one machine, say) is said once in
    the log, as a pane there takes one run_command call at a time, whichever name it comes
    by. Names configured for one target are not said again: the start said them
    (``schemux.cli.start_notice.same_server_lines``)."""

    def __init__(self, same_targets: Iterable[Iterable[str]]) -> None:
        self._names: dict[ServerIdentity, set[str]] = {}
        self._said = {
            frozenset(pair) for names in same_targets for pair in itertools.combinations(names, 2)
        }

    def learned(self, name: str, server: TmuxServer) -> None:
        """Host ``name``'s ``server`` has told its identity."""
        identity = server.identity
        if identity is None:
            return
        names = self._names.setdefault(identity, set())
        for other in sorted(names - {name}):
            if frozenset((name, other)) not in self._said:
                self._said.add(frozenset((name, other)))
                logger.warning(
                    "hosts %s and %s reach the same tmux server (pid %d, socket %s): a pane "
                    "there runs one run_command call at a time, whichever name it comes by",
                    other, name, identity.pid, shorten(identity.socket_path, 200),
                )  # fmt: skip
        names.add(name)


class HostScope:
    """One host of the fleet and what schemux holds there: its tmux servers (``tmux``),
    its programs (``programs``) and its name (``name``, which the audit log and resource
    URIs say). Owned by its ``Fleet``."""

    def __init__(
        self,
        name: str,
        host: Host,
        settings: Settings,
        connects: Executor,
        reached: ServersReached,
        recordings: Recordings | None = None,
    ) -> None:
        self.name = name
        self.settings = settings
        self.host = host
        # how its tmux servers connect to it: in the fleet's connect threads, use noted
        self.connection = HostConnection(host, connects, self)
        limits = settings.program_limits
        # programs run on the host, in the program host it makes
        self.programs = ProgramStore(
            host.program_host(limits.max_running, settings.program_gate), limits, recordings
        )
        self.connects = 0  # connects begun (the first call's, and each after a close)
        self.last_used = time.monotonic()
        self._calls = 0  # calls under way here (``in_use``)
        self._servers: dict[ServerAddress, TmuxServer] = {}
        self._changing = asyncio.Lock()  # a call's start waits out an idle close
        self._reached = reached  # the fleet's servers, told each of this host's

    def touch(self) -> None:
        self.last_used = time.monotonic()

    @property
    def connected(self) -> bool:
        return self.connection.connected

    def tmux(self, socket_name: str | None = None, agent: AgentSession | None = None) -> TmuxServer:
        """The configured tmux server on this host, or the one on ``socket_name`` (a name
        as ``tmux -L`` takes it, refused otherwise: never a path). The configured one is
        made with ``agent``, the session it is started with."""
        settings, host = self.settings, self.host
        configured = ServerAddress(settings.socket_name, settings.socket_path, host)
        if socket_name is not None:
            check_socket_name(socket_name)
            address = ServerAddress(socket_name=socket_name, host=host)
        else:
            address = configured
        server = self._servers.get(address)
        if server is None:
            # only the configured server is started when it is not running (with the
            # agent's session); naming it by socket_name is naming the same server
            started_with = agent if address == configured else None
            server = self._servers[address] = TmuxServer(
                address,
                agent=started_with,
                connect=self.connection.connect,
                learned=functools.partial(self._reached.learned, self.name),
            )
        return server

    @contextlib.asynccontextmanager
    async def in_use(self) -> AsyncIterator[HostScope]:
        """A call runs here: the host is not closed as idle until it ends."""
        async with self._changing:
            self._calls += 1
        try:
            yield self
        finally:
            self._calls -= 1
            self.touch()

    def idle(self, now: float, idle_seconds: float) -> bool:
        """Connected, and for ``idle_seconds`` no call and nothing of schemux's kept
        there: no program (its output is read through the connection)."""
        return (
            self.connected
            and self._calls == 0
            and now - self.last_used >= idle_seconds
            and not self.programs.listed()
        )

    async def close_idle(self, idle_seconds: float) -> bool:
        """Close the connection when the host is still idle; it opens again at the next
        call. Whether it was closed."""
        async with self._changing:
            if not self.idle(time.monotonic(), idle_seconds):
                return False
            await self._close_connection()
            return True

    async def _close_connection(self) -> None:
        for server in self._servers.values():
            await server.close()
        await asyncio.to_thread(self.connection.close)

    async def close(self) -> None:
        """End the programs still running, the tmux control clients and the connection."""
        try:
            await self.programs.close()
        finally:
            await self._close_connection()


class Fleet:
    """The hosts of one running schemux, by name (see the module). ``held(name)`` says
    whether something outside the calls (a resource subscription) keeps a host in use;
    ``make_host`` makes a named host from its settings."""

    def __init__(
        self,
        settings: Settings,
        host: Host | None = None,
        held: Callable[[str], bool] = lambda name: False,
        make_host: Callable[[HostTarget | None], Host] = host_for,
    ) -> None:
        self.settings = settings
        fleet = settings.fleet
        if fleet.hosts:
            configured: Sequence[NamedHost] = fleet.hosts
            self._made: dict[str, Host | None] = {each.name: None for each in configured}
            self._targets = {each.name: each for each in configured}
            self.default = fleet.default if fleet.default is not None else configured[0].name
        else:
            only = host if host is not None else make_host(settings.host_target)
            self.default = only.label()
            self._made = {self.default: only}
            self._targets = {self.default: NamedHost(self.default, settings.host_target)}
        self.names: tuple[str, ...] = tuple(self._targets)
        groups: dict[str, list[str]] = {}
        for named in self._targets.values():
            for group in named.groups:
                groups.setdefault(group, []).append(named.name)
        self.groups: dict[str, tuple[str, ...]] = {g: tuple(n) for g, n in groups.items()}
        self.idle_seconds = fleet.idle_seconds
        # where the hosts connect (a probe, an ssh master's start): at most max_connecting
        # at once, and none of them in the threads schemux's other work waits for
        self._connects = ThreadPoolExecutor(fleet.max_connecting, "schemux-connect")
        self.reached = ServersReached(fleet.same_targets())
        # the programs' and calls' recordings, every host's (``schemux.audit.recordings``)
        self.recordings = Recordings(settings.recording)
        self._scopes: dict[str, HostScope] = {}
        self._held = held
        self._make_host = make_host
        self._sweeper: asyncio.Task[None] | None = None
        self._idle_closes: set[asyncio.Task[bool]] = set()

    @property
    def several(self) -> bool:
        """Whether calls choose among hosts (more than one is configured)."""
        return len(self.names) > 1

    def check(self, name: str, field: str = "host") -> str:
        """``name``, when it is a configured host's; SchemuxError naming ``field`` else."""
        if name not in self._targets:
            raise SchemuxError(
                f"{field}: {preview(name)} is not a configured host",
                suggestion=f"give one of {', '.join(self.names)}",
            )
        return name

    def select(
        self,
        names: Sequence[str] | None = None,
        group: str | None = None,
        every: bool = False,
    ) -> list[str]:
        """The hosts named, those of ``group``, or ``every`` one, in configuration order
        and each once; SchemuxError naming the unknown host or group."""
        chosen: set[str] = set()
        if every:
            chosen.update(self.names)
        for name in names or ():
            chosen.add(self.check(name, "hosts"))
        if group is not None:
            if group not in self.groups:
                known = ", ".join(self.groups) or "none are configured"
                raise SchemuxError(
                    f"group: {preview(group)} is not a configured group of hosts ({known})"
                )
            chosen.update(self.groups[group])
        return [name for name in self.names if name in chosen]

    def on(self, name: str) -> HostScope:
        """The scope of host ``name``, made at its first use (its host is connected at
        its first command, not now)."""
        scope = self._scopes.get(name)
        if scope is None:
            host = self._made.get(self.check(name))
            if host is None:
                host = self._made[name] = self._make_host(self._targets[name].target)
            scope = self._scopes[name] = HostScope(
                name, host, self.settings, self._connects, self.reached, self.recordings
            )
        self._watch_idle()
        return scope

    def program_host(self, program_id: str) -> str | None:
        """The host whose programs include ``program_id`` (ids are random, never reused)."""
        for scope in self.scopes:
            if any(program.id == program_id for program in scope.programs.listed()):
                return scope.name
        return None

    @property
    def scopes(self) -> list[HostScope]:
        """The scopes made so far, in configuration order."""
        return [self._scopes[name] for name in self.names if name in self._scopes]

    def _watch_idle(self) -> None:
        """Hosts configured by name are closed when idle; the one host of ``--ssh`` or
        ``--exec`` stays connected as long as schemux serves, as it always did."""
        if self._sweeper is not None or not self.settings.named_hosts:
            return
        with contextlib.suppress(RuntimeError):  # no event loop: nothing to sweep with
            asyncio.get_running_loop()
            self._sweeper = asyncio.ensure_future(self._sweep())

    async def _sweep(self) -> None:
        pause = min(self.idle_seconds / SWEEPS_PER_IDLE, LONGEST_SWEEP_SECONDS)
        while True:
            await asyncio.sleep(pause)
            now = time.monotonic()
            for scope in self.scopes:
                if scope.idle(now, self.idle_seconds) and not self._held(scope.name):
                    # each host on its own: a slow close holds up no other host
                    closing = asyncio.ensure_future(self._close_idle(scope))
                    self._idle_closes.add(closing)
                    closing.add_done_callback(self._idle_closes.discard)

    async def _close_idle(self, scope: HostScope) -> bool:
        try:
            return await scope.close_idle(self.idle_seconds)
        except Exception:  # the next call finds it closed or not, and connects as needed
            logger.warning("closing idle host %s failed", scope.name, exc_info=True)
            return False

    async def close(self) -> None:
        """Every scope closed, in parallel (one slow host delays none of the others),
        which ends the connects still running; then their threads."""
        try:
            # the calls' recordings still being ended give their watchers back first
            await self.recordings.ended()
            if self._sweeper is not None:
                self._sweeper.cancel()
                await asyncio.gather(self._sweeper, *self._idle_closes, return_exceptions=True)
            closed = await asyncio.gather(
                *(scope.close() for scope in self.scopes), return_exceptions=True
            )
            for scope, outcome in zip(self.scopes, closed, strict=True):
                if isinstance(outcome, BaseException):  # the others were closed all the same
                    logger.error("closing host %s failed", scope.name, exc_info=outcome)
            for name, host in self._made.items():
                if name not in self._scopes and host is not None:
                    await asyncio.to_thread(host.close)
        finally:
            # a connect not begun never begins; each thread ends as its connect does (the
            # hosts' closes killed what they ran)
            self._connects.shutdown(wait=False, cancel_futures=True)
            self.recordings.close()
