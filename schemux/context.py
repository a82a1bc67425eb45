"""What every handler is given: the settings and the way to the tmux servers."""

from __future__ import annotations

import asyncio
import contextlib

from schemux.abandoned import AbandonedReaper
from schemux.audit import AuditLog
from schemux.calls import CallsInFlight
from schemux.capture import ScreenTracker
from schemux.channels import ChannelWaits
from schemux.client_log import ClientLog
from schemux.config import Settings
from schemux.hosts import Host
from schemux.hosts.kinds import host_for
from schemux.new_rows import RowCursors
from schemux.programs.store import ProgramStore
from schemux.resource_watch import ResourceWatches
from schemux.tasks import ToolTasks
from schemux.tmux import ServerAddress, TmuxServer, check_socket_name


class ToolContext:
    """Shared by all calls of one running server. It owns what it reaches the servers
    with: the host (``host``, or one made from the settings; an ssh master runs until
    ``close``), the tmux servers' engines, the programs."""

    def __init__(self, settings: Settings, host: Host | None = None) -> None:
        self.settings = settings
        self.host = host if host is not None else host_for(settings.host_target)
        self._servers: dict[ServerAddress, TmuxServer] = {}
        limits = settings.program_limits
        # programs run on the host, in the program host it makes
        programs = self.host.program_host(limits.max_running, settings.program_gate)
        self.programs = ProgramStore(programs, limits)
        self.screens = ScreenTracker(settings.tracking_backend)  # tmux_capture's delta cursors
        self.abandoned = AbandonedReaper()  # what dead schemux processes left, per server
        self.row_cursors = RowCursors()  # capture_since's cursors
        self.channels = ChannelWaits()  # wait_for_channel's waits, per server and channel
        self.where = self.host.label()  # the host, as the audit log and resource URIs name it
        self.audit = AuditLog(settings.audit, self.where)  # one line per tool call
        self.resource_watches = ResourceWatches()  # what resource subscriptions follow
        self.calls = CallsInFlight()
        # tool calls run as MCP tasks; none lives longer than the longest wait and a while
        self.tasks = ToolTasks(self.calls, settings.wait_ceiling)
        self.client_log = ClientLog()  # the log sent to clients that set a level

    def tmux(self, socket_name: str | None = None) -> TmuxServer:
        """The configured tmux server, or the one on ``socket_name`` when a call names one
        (a name as ``tmux -L`` takes it, refused otherwise: never a path). The configured
        server is started when it is not running; another is not."""
        host = self.host  # every server is on the configured host
        configured = ServerAddress(self.settings.socket_name, self.settings.socket_path, host)
        if socket_name is not None:
            check_socket_name(socket_name)
            address = ServerAddress(socket_name=socket_name, host=host)
        else:
            address = configured
        server = self._servers.get(address)
        if server is None:
            # only the configured server is started when it is not running (with the
            # agent's session); naming it by socket_name is naming the same server
            agent = self.settings.agent if address == configured else None
            server = self._servers[address] = TmuxServer(address, agent=agent)
        with contextlib.suppress(RuntimeError):  # no event loop: nothing to reap with
            asyncio.get_running_loop()
            self.abandoned.start(server)  # before the permission: the reaper never starts it
        server.allow_start()  # a call begins: its first command may start the server
        return server

    async def close(self) -> None:
        """Every way schemux ends comes here. Cancel the calls in flight, those run as
        tasks first, and let their own cleanup run (a command interrupted, a program
        ended); end the resource watches; end the programs still running and remove their
        output; forget every cursor; end the tmux control clients of every server used,
        then the host's connection; last, write out the audit log (the calls that ended as
        the server did are in it)."""
        try:
            await self.client_log.detach()
            await self.tasks.close()
            await self.calls.close()
            await self.resource_watches.close()
            await self.abandoned.close()
            await self.programs.close()
            self.screens.close()
            self.row_cursors.close()
            for server in self._servers.values():
                await server.close()
            await asyncio.to_thread(self.host.close)
        finally:
            await self.audit.close()
