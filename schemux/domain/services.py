"""What the tools share across calls: the hosts and their tmux servers, and the cursors,
waits and reaper that outlive one call."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from schemux.config import Settings
from schemux.domain.capture import ScreenTracker
from schemux.domain.channels import ChannelWaits
from schemux.domain.fleet import Fleet, HostScope
from schemux.domain.new_rows import RowCursors
from schemux.domain.pane_picture import Pictures
from schemux.hosts import Host
from schemux.programs.store import ProgramStore
from schemux.shell.abandoned import AbandonedReaper
from schemux.tmux.server import TmuxServer


class Services:
    """Shared by all calls of one running server. It owns what it reaches the servers
    with: the hosts in ``fleet`` (``host``, or those the settings name, where an ssh
    master runs until ``close``), their tmux servers' engines and their programs. It also
    keeps what calls leave for later calls. Those are ``screens`` (tmux_capture's delta
    cursors), ``row_cursors`` (capture_since's), ``channels`` (wait_for_channel's waits)
    ``abandoned`` (what dead schemux processes left, per server) and ``pictures`` (the
    worker that draws panes). ``held(name)`` says
    whether something outside (a resource subscription) keeps host ``name`` connected.

    ``scope``, ``host``, ``programs`` and ``host_name`` are those of the default host (the
    only one, or the configured default)."""

    def __init__(
        self,
        settings: Settings,
        host: Host | None = None,
        held: Callable[[str], bool] = lambda name: False,
    ) -> None:
        self.settings = settings
        self.fleet = Fleet(settings, host, held=held)
        self.scope = self.fleet.on(self.fleet.default)
        self.screens = ScreenTracker(settings.tracking_backend)
        self.abandoned = AbandonedReaper()
        self.row_cursors = RowCursors()
        self.channels = ChannelWaits()
        self.pictures = Pictures()

    @property
    def host(self) -> Host:
        return self.scope.host

    @property
    def programs(self) -> ProgramStore:
        return self.scope.programs

    @property
    def host_name(self) -> str:
        """The default host, as the audit log and resource URIs name it."""
        return self.scope.name

    def on(self, name: str) -> HostScope:
        """The scope of the configured host ``name`` (SchemuxError when there is none)."""
        return self.fleet.on(name)

    def tmux(self, socket_name: str | None = None, scope: HostScope | None = None) -> TmuxServer:
        """The configured tmux server of host ``scope`` (the default host's when None),
        or the one on ``socket_name`` when a call names one (a name as ``tmux -L`` takes
        it, refused otherwise: never a path), its abandoned processes reaped. It is not
        started here: only a call's handle of it may start it (``Call.tmux``)."""
        server = (scope or self.scope).tmux(socket_name, self.settings.agent)
        with contextlib.suppress(RuntimeError):  # no event loop: nothing to reap with
            asyncio.get_running_loop()
            self.abandoned.start(server)  # never a call's handle: the reaper never starts it
        return server

    async def close(self) -> None:
        """End the programs still running and remove their output, the tmux control
        clients of every server used, then each host's connection (every host at once);
        forget every cursor."""
        await self.abandoned.close()
        await self.fleet.close()
        self.screens.close()
        self.row_cursors.close()
        self.pictures.close()
