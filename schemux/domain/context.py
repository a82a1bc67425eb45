"""What every handler is given: the settings and the way to the tmux servers."""

from __future__ import annotations

import asyncio
import contextlib
import copy

from schemux.audit.log import AuditLog
from schemux.calls.client_log import ClientLog
from schemux.calls.in_flight import CallsInFlight
from schemux.calls.tasks import ToolTasks
from schemux.config import Settings
from schemux.domain.capture import ScreenTracker
from schemux.domain.channels import ChannelWaits
from schemux.domain.fleet import Fleet, HostScope
from schemux.domain.new_rows import RowCursors
from schemux.domain.resource_watch import ResourceWatches
from schemux.hosts import Host
from schemux.programs.store import ProgramStore
from schemux.shell.abandoned import AbandonedReaper
from schemux.tmux.server import TmuxServer


class ToolContext:
    """Shared by all calls of one running server. It owns what it reaches the servers
    with: the hosts (``fleet``: ``host``, or those the settings name; an ssh master runs
    until ``close``), their tmux servers' engines, their programs.

    ``host``, ``tmux``, ``programs`` and ``where`` are those of one host: the default one
    (the only one, or the configured default); ``routed(name)`` is this context with them
    on host ``name``, which is what a call that names a host is given."""

    def __init__(self, settings: Settings, host: Host | None = None) -> None:
        self.settings = settings
        self.resource_watches = ResourceWatches()  # what resource subscriptions follow
        # a resource subscription keeps its host (the default one) connected
        self.fleet = Fleet(settings, host, held=self._watched)
        self._scope = self.fleet.on(self.fleet.default)
        self.screens = ScreenTracker(settings.tracking_backend)  # tmux_capture's delta cursors
        self.abandoned = AbandonedReaper()  # what dead schemux processes left, per server
        self.row_cursors = RowCursors()  # capture_since's cursors
        self.channels = ChannelWaits()  # wait_for_channel's waits, per server and channel
        # the default host, as the audit log and resource URIs name it
        self.audit = AuditLog(settings.audit, self.where)  # one line per tool call
        self.calls = CallsInFlight()
        # tool calls run as MCP tasks; none lives longer than the longest wait and a while
        self.tasks = ToolTasks(self.calls, settings.wait_ceiling)
        self.client_log = ClientLog()  # the log sent to clients that set a level

    def _watched(self, name: str) -> bool:
        return self.resource_watches.watching_on(name)

    @property
    def scope(self) -> HostScope:
        """The host this context's calls run on."""
        return self._scope

    @property
    def host(self) -> Host:
        return self._scope.host

    @property
    def programs(self) -> ProgramStore:
        return self._scope.programs

    @property
    def where(self) -> str:
        """The host, as the audit log and resource URIs name it."""
        return self._scope.where

    def on(self, name: str) -> HostScope:
        """The scope of the configured host ``name`` (SchemuxError when there is none)."""
        return self.fleet.on(name)

    def routed(self, name: str) -> ToolContext:
        """This context, its calls on host ``name``: what it shares (cursors, tasks, the
        audit) is the same object; only the host's scope differs."""
        view = copy.copy(self)
        view._scope = self.fleet.on(name)
        return view

    def tmux(self, socket_name: str | None = None) -> TmuxServer:
        """The configured tmux server of this context's host, or the one on
        ``socket_name`` when a call names one (a name as ``tmux -L`` takes it, refused
        otherwise: never a path). The configured server is started when it is not
        running; another is not."""
        server = self._scope.tmux(socket_name, self.settings.agent)
        with contextlib.suppress(RuntimeError):  # no event loop: nothing to reap with
            asyncio.get_running_loop()
            self.abandoned.start(server)  # before the permission: the reaper never starts it
        server.allow_start()  # a call begins: its first command may start the server
        return server

    async def close(self) -> None:
        """Every way schemux ends comes here. Cancel the calls in flight, those run as
        tasks first, and let their own cleanup run (a command interrupted, a program
        ended); end the resource watches; end the programs still running and remove their
        output, the tmux control clients of every server used, then each host's
        connection (every host at once); forget every cursor; last, write out the audit
        log (the calls that ended as the server did are in it)."""
        try:
            await self.client_log.detach()
            await self.tasks.close()
            await self.calls.close()
            await self.resource_watches.close()
            await self.abandoned.close()
            await self.fleet.close()
            self.screens.close()
            self.row_cursors.close()
        finally:
            await self.audit.close()
