"""One tool call, as its handler is given it (``handle(call, request)``)."""

from __future__ import annotations

import dataclasses
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from schemux.audit.log import CallRecord
from schemux.calls.progress import Progress
from schemux.calls.result_links import ResultLinks
from schemux.calls.result_media import ResultMedia
from schemux.config import Settings
from schemux.domain.capture import ScreenTracker
from schemux.domain.channels import ChannelWaits
from schemux.domain.fleet import Fleet, HostScope
from schemux.domain.new_rows import RowCursors
from schemux.domain.pane_recording import PaneRecorder, record_pane
from schemux.domain.services import Services
from schemux.panes.targets import PaneInfo
from schemux.programs.store import ProgramCaller, ProgramStore
from schemux.tmux.server import CallPermits, TmuxServer


@dataclass(frozen=True)
class NestedResult:
    """A tool's answer to a call another tool made of it (a batch's): whether it failed,
    its content blocks and structured content as sent, and its text (the error, when it
    failed)."""

    failed: bool
    content: list[dict[str, Any]]
    structured: dict[str, Any] | None
    text: str


class ReadTools(Protocol):
    """The served read-only tools, called through the whole pipeline of a ``tools/call``
    (validation, routing, result check): what call_read_tools_batch calls."""

    async def call(self, parent: Call, tool: str, arguments: dict[str, Any]) -> NestedResult: ...


@dataclass(frozen=True)
class Call:
    """What one call runs with and what it notes on its way; the serving layer makes one
    for each ``tools/call`` (and resource request). Code below the handler that needs a
    part of it is given that part.

    ``services`` are those every call shares (the fleet, the cursors, the channels' waits,
    the reaper); ``scope`` is the host the call runs on (``on`` gives the same call on
    another host: a fan-out's). ``progress`` is what the caller is told while the call
    waits, ``links`` the resources its result links to, ``media`` the pictures its
    result shows (a nested call's go to its parent's result), ``notes`` its audit record (None:
    a request no record keeps), ``session`` the MCP session it came in, and ``permits``
    what it may do on the tmux servers it uses (start the configured one at its first
    command there; not connect again to a host whose connect failed in it); ``tools``
    the served read-only tools it may call in turn (None: none, outside ``tools/call``);
    ``approved``: the person approved it when the policy asked, or a rule allows it: a
    pane a person watches is not asked about (``domain.write_policy``)."""

    services: Services
    scope: HostScope
    session: str | None = None
    notes: CallRecord | None = None
    progress: Progress = field(default_factory=Progress)
    links: ResultLinks = field(default_factory=ResultLinks)
    media: ResultMedia = field(default_factory=ResultMedia)
    permits: CallPermits = field(default_factory=CallPermits)
    tools: ReadTools | None = None
    approved: bool = False

    @property
    def host_name(self) -> str:
        """The host the call runs on, as the audit log and resource URIs name it."""
        return self.scope.name

    @property
    def settings(self) -> Settings:
        return self.services.settings

    @property
    def fleet(self) -> Fleet:
        return self.services.fleet

    @property
    def programs(self) -> ProgramStore:
        """The programs of the call's host."""
        return self.scope.programs

    @property
    def caller(self) -> ProgramCaller:
        """This call, as the program store asks who wants a program."""
        return ProgramCaller(self.session, self.notes)

    @property
    def screens(self) -> ScreenTracker:
        return self.services.screens

    @property
    def row_cursors(self) -> RowCursors:
        return self.services.row_cursors

    @property
    def channels(self) -> ChannelWaits:
        return self.services.channels

    def recorded(
        self, server: TmuxServer, pane: PaneInfo, command: str, *, begin_later: bool = False
    ) -> AbstractAsyncContextManager[PaneRecorder | None]:
        """``pane`` (of ``server``) recorded while the ``async with`` drives it, the
        recording linked from this call's audit record (``domain.pane_recording``;
        ``begin_later``: the block awaits ``PaneRecorder.begun`` before it types)."""
        tool = self.notes.tool if self.notes is not None else "call"
        return record_pane(
            server, pane, self.fleet.recordings, session=self.session, notes=self.notes,
            command=command, title=f"{tool} in {pane.pane_id}", begin_later=begin_later,
        )  # fmt: skip

    def on(self, name: str) -> Call:
        """This call on the configured host ``name``: all else is the same object."""
        return dataclasses.replace(self, scope=self.fleet.on(name))

    def tmux(self, socket_name: str | None = None) -> TmuxServer:
        """This call's handle of the configured tmux server of its host, or of the one on
        ``socket_name`` when it names one (``Services.tmux``). The configured server is
        started by the handle's next command when it is not running; another is not."""
        server = self.services.tmux(socket_name, self.scope)
        self.permits.allow_start(server)  # a call begins: its first command may start it
        return server.for_call(self.permits)
