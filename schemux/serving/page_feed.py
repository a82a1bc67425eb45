"""What one open page is told, as it happens: the panes and programs of the hosts, each
change of a pane or a program's output, and each call the audit log gains.

A pane is followed by the resource watches (``domain.resource_watch``: its ``%output``
over a control client of its own, coalesced to four updates a second), shared with any
MCP subscription to the same pane; a program, by its own change event. A change is told
as a new version of the pane's picture or the program's output, which the page then loads
(``serving.page``): the browser is told, it never polls. Which panes there are is looked
at (one ``list-panes -a`` per host listed) when tmux tells the shared control client of
a host that they may have changed (``ROSTER_NOTIFICATIONS``: a session or a window made
or closed, a layout changed; a followed pane's window is linked into ``_schemux``, so its
splits are told too), ``ROSTER_SETTLE_SECONDS`` after the last look at most once, and
every ``ROSTER_SECONDS`` for what no notification says (a pane's command, a split in a
window the page does not follow, a program). What the audit log gained (other schemux
processes write it too) is looked at every ``AUDIT_SECONDS``: one ``stat``, and a read
of what was appended when it changed.

Hosts are listed as ``resources/list`` lists them: the default host, and each other host
a call has used (an open page connects no host). The page never starts a tmux server (its
calls' permits end before their first command) and never types into a pane.
Events are kept by key until sent (a pane's newest version replaces the one not yet sent),
so a slow browser costs memory in proportion to its panes, not to their output.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio

from schemux.audit.reader import LogTail, timeline_entry
from schemux.domain.call import Call
from schemux.domain.resource_uris import pane_uri, program_uri
from schemux.domain.resource_watch import follow_pane, follow_program
from schemux.errors import SchemuxError
from schemux.panes.targets import PaneTarget, resolve_pane
from schemux.programs.program import Program
from schemux.serving.resources import listed_panes
from schemux.serving.state import ServingState
from schemux.tmux.control.connection import Notification
from schemux.tmux.server import TmuxServer

logger = logging.getLogger("schemux")

ROSTER_SECONDS = 10.0
ROSTER_SETTLE_SECONDS = 0.25  # a burst of notifications (a session made) is one look
ROSTER_NOTIFICATIONS = frozenset(
    {
        "sessions-changed", "session-renamed", "window-add", "window-close",
        "unlinked-window-add", "unlinked-window-close", "layout-change",
    }
)  # fmt: skip
AUDIT_SECONDS = 1.0
MAX_FOLLOWED = 24  # panes and programs one page follows (each pane: a tmux client)

Release = Callable[[], Awaitable[None]]


@dataclass
class _Followed:
    """A pane or program the page shows: its picture's or output's version, and the
    release of its watch (None: shown, not followed)."""

    version: int = 0
    release: Release | None = None


@dataclass
class Events:
    """Events not yet sent, by key (the newest of a key replaces an older one, but the
    timeline's calls, which are appended), and the wake-up of the one writer."""

    pending: dict[str, tuple[str, Any]] = field(default_factory=dict)
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def put(self, key: str, name: str, data: Any) -> None:
        self.pending[key] = (name, data)
        self.wake.set()

    def add_calls(self, entries: list[dict[str, Any]]) -> None:
        _, before = self.pending.get("calls", ("calls", []))
        self.put("calls", "calls", [*before, *entries])

    async def take(self) -> list[tuple[str, Any]]:
        """The events pending, once there is one."""
        await self.wake.wait()
        self.wake.clear()
        taken = list(self.pending.values())
        self.pending.clear()
        return taken


def host_names(state: ServingState) -> list[str]:
    """The hosts a page lists: the default one, then those a call has used."""
    fleet = state.services.fleet
    used = {scope.name for scope in fleet.scopes}
    return [
        fleet.default,
        *(name for name in fleet.names if name != fleet.default and name in used),
    ]


def page_call(state: ServingState, host: str) -> Call:
    """A call for the page's reads on ``host``: no audit record, no MCP session, and
    permits already ended, so that it never starts a tmux server."""
    services = state.services
    call = Call(services, services.scope).on(host)
    call.permits.end()
    return call


def program_state(program: Program) -> str:
    """How a program stands, in a few words."""
    ending = program.ending
    if ending is None:
        return "running"
    if ending.signal:
        return f"{ending.outcome} ({ending.signal})"
    if ending.exit_status is not None:
        return f"{ending.outcome} (exit {ending.exit_status})"
    return ending.outcome


class PageFeed:
    """The events of one open page, over ``state``; ``run`` makes them until cancelled,
    ``close`` releases every watch it holds."""

    def __init__(self, state: ServingState, *, signin: bool) -> None:
        self.state = state
        self.events = Events()
        self._signin = signin
        self._panes: dict[tuple[str, str], _Followed] = {}
        self._programs: dict[tuple[str, str], _Followed] = {}
        self._roster: Any = None
        self._roster_told = asyncio.Event()  # a notification said the panes may have changed
        self._listening: dict[str, Callable[[], None]] = {}  # host -> its listener's end
        audit = state.settings.audit.path
        self._audit = None if audit is None else LogTail(audit)

    async def run(self) -> None:
        hello = {
            "signin": self._signin,
            "audit": self._audit is not None,
            "record": self.state.services.fleet.recordings.enabled,
        }
        self.events.put("hello", "hello", hello)
        async with anyio.create_task_group() as group:
            group.start_soon(self._follow_roster)
            if self._audit is not None:
                group.start_soon(self._follow_audit, self._audit)

    async def close(self) -> None:
        for unlisten in self._listening.values():
            unlisten()
        self._listening.clear()
        with anyio.CancelScope(shield=True):
            for followed in [*self._panes.values(), *self._programs.values()]:
                if followed.release is not None:
                    await followed.release()
            self._panes.clear()
            self._programs.clear()

    async def _follow_audit(self, tail: LogTail) -> None:
        while True:
            records = await anyio.to_thread.run_sync(tail.read)
            if records:
                self.events.add_calls([timeline_entry(record) for record in records])
            await anyio.sleep(AUDIT_SECONDS)

    async def _follow_roster(self) -> None:
        while True:
            self._roster_told.clear()
            await self._look()
            await anyio.sleep(ROSTER_SETTLE_SECONDS)
            with anyio.move_on_after(ROSTER_SECONDS - ROSTER_SETTLE_SECONDS):
                await self._roster_told.wait()

    def _notified(self, notification: Notification) -> None:
        if notification.name in ROSTER_NOTIFICATIONS:
            self._roster_told.set()

    def _listen(self, host: str, server: TmuxServer) -> None:
        """Be told the notifications of ``host``'s shared control client (once a host)."""
        if host not in self._listening:
            self._listening[host] = server.engine.listen(self._notified)

    async def _look(self) -> None:
        """The panes and programs there now: those new followed, those gone let go, and
        the page told of the list when it changed."""
        panes: list[dict[str, Any]] = []
        programs: list[dict[str, Any]] = []
        failures: dict[str, str] = {}
        for host in host_names(self.state):
            on = page_call(self.state, host)
            self._listen(host, on.tmux())
            try:
                rows = await listed_panes(on)
            except SchemuxError as error:
                failures[host] = error.render()
                rows = []
            panes += [
                {
                    "host": host,
                    "id": row.pane_id,
                    "session": row.session_name,
                    "command": row.pane_current_command,
                    "dead": row.pane_dead,
                }
                for row in rows
            ]
            programs += [
                {
                    "host": host,
                    "id": program.id,
                    "pane": program.pane_id,
                    "state": program_state(program),
                }
                for program in on.programs.listed()
            ]
        roster = {"panes": panes, "programs": programs, "failures": failures}
        if roster != self._roster:  # told before the new ones' first pictures and outputs
            self._roster = roster
            self.events.put("roster", "roster", roster)
        await self._reconcile(panes, programs)

    async def _reconcile(self, panes: list[dict[str, Any]], programs: list[dict[str, Any]]) -> None:
        pane_keys = [(pane["host"], pane["id"]) for pane in panes]
        program_keys = [(program["host"], program["id"]) for program in programs]
        for known, now in ((self._panes, pane_keys), (self._programs, program_keys)):
            for key in [key for key in known if key not in now]:
                followed = known.pop(key)
                if followed.release is not None:
                    with anyio.CancelScope(shield=True):
                        await followed.release()
        for host, pane_id in pane_keys:
            if (host, pane_id) not in self._panes:
                self._panes[(host, pane_id)] = followed = _Followed()
                followed.release = await self._follow_pane(host, pane_id)
                self._pane_changed(host, pane_id)
        for host, program_id in program_keys:
            if (host, program_id) not in self._programs:
                self._programs[(host, program_id)] = followed = _Followed()
                followed.release = await self._follow_program(host, program_id)
                self._program_changed(host, program_id)

    def _followed(self) -> int:
        return sum(1 for item in [*self._panes.values(), *self._programs.values()] if item.release)

    async def _follow_pane(self, host: str, pane_id: str) -> Release | None:
        if self._followed() >= MAX_FOLLOWED:
            return None
        on = page_call(self.state, host)
        server = on.tmux()
        try:
            pane = await resolve_pane(server, PaneTarget(pane_id=pane_id), None)
            return await self.state.resource_watches.subscribe(
                (host, f"pane {pane.pane_id}"),
                pane_uri(host, pane.pane_id, "picture"),
                partial(follow_pane, server, pane),
                partial(self._told, partial(self._pane_changed, host, pane_id)),
            )
        except SchemuxError as error:  # gone meanwhile, or too many watches: shown once
            logger.info("the page does not follow pane %s on %s: %s", pane_id, host, error)
            return None

    async def _follow_program(self, host: str, program_id: str) -> Release | None:
        if self._followed() >= MAX_FOLLOWED:
            return None
        on = page_call(self.state, host)
        program = next((p for p in on.programs.listed() if p.id == program_id), None)
        if program is None or program.finished:
            return None
        try:
            return await self.state.resource_watches.subscribe(
                (host, f"program {program.id}"),
                program_uri(host, program.id),
                partial(follow_program, program),
                partial(self._told, partial(self._program_changed, host, program_id)),
            )
        except SchemuxError as error:
            logger.info("the page does not follow program %s on %s: %s", program_id, host, error)
            return None

    @staticmethod
    async def _told(changed: Callable[[], None], uri: str) -> None:
        changed()

    def _pane_changed(self, host: str, pane_id: str) -> None:
        followed = self._panes.get((host, pane_id))
        if followed is None:
            return
        followed.version += 1
        data = {"host": host, "id": pane_id, "version": followed.version}
        self.events.put(f"pane {host} {pane_id}", "pane", data)

    def _program_changed(self, host: str, program_id: str) -> None:
        followed = self._programs.get((host, program_id))
        if followed is None:
            return
        followed.version += 1
        data = {"host": host, "id": program_id, "version": followed.version}
        self.events.put(f"program {host} {program_id}", "program", data)
