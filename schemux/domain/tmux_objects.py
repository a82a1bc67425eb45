"""The sessions, windows and panes of one tmux server as the inspect tools give them
(libtmux-mcp's ``SessionInfo``, ``WindowInfo`` and ``PaneInfo``), and the session or
window a call names.

One command line reads the server's version and every pane with its window and session
(``list-panes -a``), so a listing is of one moment. As ``tmux_snapshot`` does, it leaves
out schemux's control window, and a user's window that a wait links into schemux's own
session is listed under the user's sessions only; program windows, which live there
alone, are listed. A window linked into several sessions is listed under each, as tmux
lists it.

A session is found by its id or by comparing names (a name never becomes a ``-t``
target, where tmux would read its ``:``, ``.``, ``=`` or a prefix); a window by its id
or by its index in a session. With none of them, the session or window is the agent's
pane's (``schemux.panes.targets``). The facts keep the contracts' field names and types
(tmux's text where the contract has a string), so a handler reads them into its model.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from schemux.audit.log import CallRecord
from schemux.errors import InvalidArgument, PaneBusy, SchemuxError, Unfit, preview
from schemux.names import OWNED_SESSION
from schemux.panes.claims import BUSY_OPTION, claim_owner
from schemux.panes.targets import PaneInfo, PaneTarget, resolve_pane
from schemux.shell.abandoned import PANE_OPTION
from schemux.tmux.command import THEN
from schemux.tmux.format import (
    option,
    parse_row,
    parse_rows,
    query,
    readable,
    row_format,
    tmux_row,
    unsanitized,
)
from schemux.tmux.owned_session import CONTROL_MARK, is_reserved
from schemux.tmux.server import TmuxServer
from schemux.versions import parse_version

_INDEX = re.compile(r"\d+")
_SESSION_ID = re.compile(r"\$\d+")
NAMES_SHOWN = 20  # of the sessions or windows an error lists


@tmux_row
class _Head:
    version: str
    socket_path: str


@tmux_row
class _Row:
    session_id: str
    session_name: str
    session_attached: str
    session_created: str
    window_id: str
    window_index: str
    window_name: str
    window_layout: str
    window_active: bool
    window_width: str
    window_height: str
    window_linked_sessions_list: str
    pane_id: str
    pane_index: str
    pane_width: str
    pane_height: str
    pane_left: int | None
    pane_top: int | None
    pane_right: int | None
    pane_bottom: int | None
    pane_at_left: bool
    pane_at_right: bool
    pane_at_top: bool
    pane_at_bottom: bool
    pane_tty: str
    pane_current_command: str
    pane_current_path: str
    pane_pid: str
    pane_title: str
    pane_active: bool
    control: bool = option(CONTROL_MARK)


@dataclass(frozen=True)
class SessionFacts:
    session_id: str
    session_name: str
    window_count: int
    session_attached: str
    session_created: str
    active_pane_id: str | None


@dataclass(frozen=True)
class WindowFacts:
    window_id: str
    window_name: str
    window_index: str
    session_id: str
    session_name: str
    pane_count: int
    window_layout: str
    window_active: str
    window_width: str
    window_height: str
    active_pane_id: str | None


@dataclass(frozen=True)
class PaneFacts:
    pane_id: str
    pane_index: str
    pane_width: str
    pane_height: str
    pane_left: int | None
    pane_top: int | None
    pane_right: int | None
    pane_bottom: int | None
    pane_at_left: bool
    pane_at_right: bool
    pane_at_top: bool
    pane_at_bottom: bool
    pane_tty: str
    pane_current_command: str
    pane_current_path: str
    pane_pid: str
    pane_title: str
    pane_active: str
    window_id: str
    session_id: str
    is_caller: bool | None


@dataclass(frozen=True)
class SessionTarget:
    """A session a call names, by id or name (both: they must agree); neither: the
    agent's pane's."""

    session_id: str | None = None
    session_name: str | None = None

    @property
    def named(self) -> bool:
        return self.session_id is not None or self.session_name is not None

    def describe(self) -> str:
        given = {"session_id": self.session_id, "session_name": self.session_name}
        return ", ".join(f"{k}={preview(v)}" for k, v in given.items() if v is not None)


@dataclass(frozen=True)
class WindowTarget:
    """A window a call names: by id, or by index in a session (the agent's pane's when
    no session is named); only a session: its active window; nothing: the agent's."""

    window_id: str | None = None
    window_index: str | None = None
    session: SessionTarget = SessionTarget()

    def validate(self) -> None:
        PaneTarget(
            window_id=self.window_id,
            session_id=self.session.session_id,
            session_name=self.session.session_name,
        ).validate()
        if self.window_index is not None and not _INDEX.fullmatch(self.window_index):
            raise SchemuxError(
                f"window_index {preview(self.window_index)} is not a window index",
                suggestion="pass the window's index as digits, such as '0'",
            )


@dataclass(frozen=True)
class ServerFacts:
    is_alive: bool
    socket_name: str | None
    socket_path: str | None
    session_count: int
    version: str | None


@dataclass(frozen=True)
class Objects:
    """A server's sessions, windows and panes, as one listing read them, in tmux's order,
    with the server's version and socket path."""

    where: str
    version: str
    socket_path: str
    sessions: tuple[SessionFacts, ...]
    windows: tuple[WindowFacts, ...]
    panes: tuple[PaneFacts, ...]

    def session(self, target: SessionTarget) -> SessionFacts:
        """The session ``target`` names; SchemuxError naming what exists when none does."""
        for session in self.sessions:
            if target.session_id in (None, session.session_id) and target.session_name in (
                None,
                session.session_name,
            ):
                return session
        names = [session.session_name for session in self.sessions]
        raise SchemuxError(
            f"no session matches {target.describe()} on {self.where}",
            suggestion=f"name one of its sessions: {_listed(names)}",
        )

    def windows_of(self, session_id: str) -> list[WindowFacts]:
        return [window for window in self.windows if window.session_id == session_id]

    def window(self, target: WindowTarget, default: PaneInfo | None) -> WindowFacts:
        """The window ``target`` names; ``default`` is the agent's pane, for a target
        that names no session and no window id."""
        if target.window_id is not None:
            holding = [window for window in self.windows if window.window_id == target.window_id]
            if target.session.named:
                session = self.session(target.session)
                holding = [w for w in holding if w.session_id == session.session_id]
            if holding:
                return holding[0]
            raise SchemuxError(
                f"no window {target.window_id!r}"
                + (
                    f" in the session of {target.session.describe()}"
                    if target.session.named
                    else ""
                )
                + f" on {self.where}",
                suggestion="pass the id of a window that exists, as list-windows -F "
                "'#{window_id}' prints it",
            )
        if target.session.named:
            session = self.session(target.session)
        elif default is not None:
            session = self.session(SessionTarget(session_id=default.session_id))
        else:
            raise SchemuxError(f"no session to find a window in on {self.where}")
        windows = self.windows_of(session.session_id)
        if target.window_index is None:
            # the agent's window, or the active window of the session named
            agents = default.window_id if default is not None and not target.session.named else None
            for window in windows:
                if window.window_id == agents or (agents is None and window.window_active == "1"):
                    return window
            if windows:
                return windows[0]
        for window in windows:
            if window.window_index == target.window_index:
                return window
        indexes = [window.window_index for window in windows]
        raise SchemuxError(
            f"no window at index {preview(target.window_index)} in session "
            f"{preview(session.session_name)} on {self.where}",
            suggestion=f"pass one of its windows' indexes: {_listed(indexes)}",
        )

    def current_window(self, session_id: str) -> WindowFacts:
        """The current window of the session ``session_id`` (its first listed when that
        is one schemux does not list)."""
        windows = self.windows_of(session_id)
        for window in windows:
            if window.window_active == "1":
                return window
        if windows:
            return windows[0]
        raise SchemuxError(f"session {session_id} was closed")

    def panes_of(self, window: WindowFacts) -> list[PaneFacts]:
        return [
            pane
            for pane in self.panes
            if pane.window_id == window.window_id and pane.session_id == window.session_id
        ]

    def pane_at(self, window: WindowFacts, corner: str) -> PaneFacts:
        """The pane of ``window`` at ``corner`` (``top-left`` ... ``bottom-right``): the
        one touching both its edges; were several to (a border status line moves the top
        edge), the one nearest the corner."""
        vertical, horizontal = corner.split("-")
        touching = [
            pane
            for pane in self.panes_of(window)
            if getattr(pane, f"pane_at_{vertical}") and getattr(pane, f"pane_at_{horizontal}")
        ]
        if not touching:
            raise SchemuxError(
                f"no pane of window {window.window_id} touches its {vertical} and "
                f"{horizontal} edges on {self.where}",
                suggestion="list the window's panes with their pane_at_* fields",
            )

        def nearness(pane: PaneFacts) -> tuple[int, int]:
            row = pane.pane_top if vertical == "top" else -(pane.pane_bottom or 0)
            column = pane.pane_left if horizontal == "left" else -(pane.pane_right or 0)
            return (row or 0, column or 0)

        return min(touching, key=nearness)

    def pane(self, pane: PaneInfo) -> PaneFacts:
        """The facts of ``pane`` (as ``resolve_pane`` found it), in its session."""
        return self.pane_in(pane.pane_id, pane.session_id)

    def pane_in(self, pane_id: str, session_id: str) -> PaneFacts:
        """The facts of the pane ``pane_id`` in the session ``session_id`` (the pane's
        first session when its window has left that one)."""
        found = [facts for facts in self.panes if facts.pane_id == pane_id]
        for facts in found:
            if facts.session_id == session_id:
                return facts
        if found:
            return found[0]
        raise SchemuxError(f"pane {pane_id} was closed")

    def window_in(self, window_id: str, session_id: str) -> WindowFacts:
        """The facts of the window ``window_id`` in the session ``session_id`` (the
        window's first session when it has left that one)."""
        found = [window for window in self.windows if window.window_id == window_id]
        for window in found:
            if window.session_id == session_id:
                return window
        if found:
            return found[0]
        raise SchemuxError(f"window {window_id} was closed")


def refuse_owned(session_name: str, what: str) -> None:
    """Refuse to change ``what``, in the session ``session_name``, when that is
    schemux's own (``_schemux``): its control clients' window and the programs it runs
    are schemux's to manage."""
    if session_name == OWNED_SESSION:
        raise Unfit(
            f"{what} is in {OWNED_SESSION!r}, schemux's own session, which no tool changes",
            suggestion="name a pane, window or session of another session",
        )


@tmux_row
class _PaneHolders:
    """Who else holds a pane: a run_command call's claim, a program's mark."""

    pane_id: str
    claim: str = option(BUSY_OPTION)
    program: str = option(PANE_OPTION)


async def refuse_held(server: TmuxServer, pane_ids: Collection[str], action: str) -> None:
    """Refuse ``action`` (such as "respawning it") on the panes ``pane_ids``, or what
    holds them, while a live run_command call holds one (what it types and reads would
    be lost) or a program schemux started runs in one (stopping it is the program
    tools' job)."""
    remote = not server.address.host.pids_here
    for row in await query(server, _PaneHolders, "list-panes", "-a"):
        if row.pane_id not in pane_ids:
            continue
        if row.program:
            raise Unfit(
                f"pane {row.pane_id} runs a program schemux started: {action} is refused",
                suggestion="stop the program with the program tools first",
            )
        owner = claim_owner(row.claim)
        if owner is not None and owner.may_run(remote=remote):
            raise PaneBusy(
                f"pane {row.pane_id} runs a run_command call now: {action} is refused",
                suggestion="wait for the call to end, then try again",
            )


def check_session_name(field: str, name: str) -> None:
    """Refuse ``field``'s session name when it is empty, or one tmux would make schemux's
    own: tmux makes ``.`` and ``:`` in a name ``_``, so ``:schemux`` would be
    ``_schemux``."""
    if name == "":
        raise InvalidArgument(f"{field} is empty", suggestion="omit it or pass a name")
    if re.sub(r"[.:]", "_", name) == OWNED_SESSION:
        raise Unfit(
            f"{field} {preview(name)} is schemux's own session's name ({OWNED_SESSION!r})",
            suggestion="pass another name",
        )


def _listed(names: list[str]) -> str:
    """Names for an error message: the first ``NAMES_SHOWN``, each cut short."""
    if not names:
        return "(it has none)"
    shown = ", ".join(preview(name) for name in names[:NAMES_SHOWN])
    more = len(names) - NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


async def read_objects(server: TmuxServer) -> Objects:
    """Every session, window and pane of ``server`` (see the module's docstring)."""
    lines = await server.run(
        "display-message", "-p", row_format(_Head), THEN,
        "list-panes", "-a", "-F", row_format(_Row),
    )  # fmt: skip
    head = parse_row(_Head, lines[0])
    release = parse_version(readable(head.version))
    remote = not server.address.host.pids_here
    rows = [
        row
        for row in parse_rows(_Row, lines[1:])
        if not is_reserved(row.session_name, row.control, row.window_linked_sessions_list)
    ]
    panes = tuple(
        PaneFacts(
            pane_id=row.pane_id,
            pane_index=row.pane_index,
            pane_width=row.pane_width,
            pane_height=row.pane_height,
            pane_left=row.pane_left,
            pane_top=row.pane_top,
            pane_right=row.pane_right,
            pane_bottom=row.pane_bottom,
            pane_at_left=row.pane_at_left,
            pane_at_right=row.pane_at_right,
            pane_at_top=row.pane_at_top,
            pane_at_bottom=row.pane_at_bottom,
            pane_tty=readable(row.pane_tty),
            pane_current_command=readable(unsanitized(row.pane_current_command, release)),
            pane_current_path=readable(row.pane_current_path),
            pane_pid=row.pane_pid,
            pane_title=readable(row.pane_title),
            pane_active="1" if row.pane_active else "0",
            window_id=row.window_id,
            session_id=row.session_id,
            is_caller=is_caller(os.environ, row.pane_id, head.socket_path, remote),
        )
        for row in rows
    )
    in_window: dict[tuple[str, str], list[_Row]] = {}
    first_of: dict[str, _Row] = {}  # each session's first row
    for row in rows:  # in tmux's order: by session, then window, then pane
        in_window.setdefault((row.session_id, row.window_id), []).append(row)
        first_of.setdefault(row.session_id, row)
    windows = [_window(window_rows) for window_rows in in_window.values()]
    of_session: dict[str, list[WindowFacts]] = {}
    for window in windows:
        of_session.setdefault(window.session_id, []).append(window)
    sessions = [_session(first_of[session], listed) for session, listed in of_session.items()]
    return Objects(
        server.address.describe(),
        readable(head.version),
        readable(head.socket_path),
        tuple(sessions),
        tuple(windows),
        panes,
    )


def _window(rows: list[_Row]) -> WindowFacts:
    """The window whose panes' rows (in one session) are ``rows``."""
    row = rows[0]
    return WindowFacts(
        window_id=row.window_id,
        window_name=readable(row.window_name),
        window_index=row.window_index,
        session_id=row.session_id,
        session_name=readable(row.session_name),
        pane_count=len(rows),
        window_layout=row.window_layout,
        window_active="1" if row.window_active else "0",
        window_width=row.window_width,
        window_height=row.window_height,
        active_pane_id=next((r.pane_id for r in rows if r.pane_active), None),
    )


def _session(row: _Row, windows: list[WindowFacts]) -> SessionFacts:
    """The session of ``row``, whose listed windows are ``windows``."""
    active = next((window for window in windows if window.window_active == "1"), None)
    return SessionFacts(
        session_id=row.session_id,
        session_name=readable(row.session_name),
        window_count=len(windows),
        session_attached=row.session_attached,
        session_created=row.session_created,
        active_pane_id=None if active is None else active.active_pane_id,
    )


async def server_facts(server: TmuxServer, socket_name: str | None) -> ServerFacts:
    """Whether ``server`` runs (asked without starting it), and if it does, its socket
    path, how many sessions it lists and its version; ``socket_name`` is the name the
    server was reached by, if any."""
    if not await server.running():
        return ServerFacts(False, socket_name, server.address.socket_path, 0, None)
    objects = await read_objects(server)
    return ServerFacts(
        True, socket_name, objects.socket_path, len(objects.sessions), objects.version
    )


async def _agent_pane_if(
    needed: bool, server: TmuxServer, notes: CallRecord | None
) -> PaneInfo | None:
    """The agent's pane (the pane a call naming none means), when ``needed``."""
    return await resolve_pane(server, PaneTarget(), notes) if needed else None


async def named_session(
    server: TmuxServer, target: SessionTarget, notes: CallRecord | None
) -> tuple[SessionFacts, Objects]:
    """The session ``target`` names (the agent's pane's when it names none), with the
    listing it was found in."""
    PaneTarget(session_id=target.session_id, session_name=target.session_name).validate()
    default = await _agent_pane_if(not target.named, server, notes)
    objects = await read_objects(server)
    if default is not None:
        target = SessionTarget(session_id=default.session_id)
    return objects.session(target), objects


async def session_named_or_id(
    server: TmuxServer, text: str, notes: CallRecord | None
) -> tuple[SessionFacts, Objects]:
    """The session named ``text`` (compared), or, when none is, whose id it is."""
    try:
        return await named_session(server, SessionTarget(session_name=text), notes)
    except SchemuxError:
        if not _SESSION_ID.fullmatch(text):
            raise
        return await named_session(server, SessionTarget(session_id=text), notes)


async def named_window(
    server: TmuxServer, target: WindowTarget, notes: CallRecord | None
) -> tuple[WindowFacts, Objects]:
    """The window ``target`` names, with the listing it was found in."""
    target.validate()
    needs_default = target.window_id is None and not target.session.named
    default = await _agent_pane_if(needs_default, server, notes)
    objects = await read_objects(server)
    return objects.window(target, default), objects


async def named_pane(
    server: TmuxServer, target: PaneTarget, window_index: str | None, notes: CallRecord | None
) -> PaneInfo:
    """The pane ``target`` names (``resolve_pane``); with ``window_index`` (and no
    window id), in the window at that index of the session named, or of the agent's
    pane's: its active pane unless ``target`` names one of its panes."""
    if window_index is None or target.window_id is not None:
        return await resolve_pane(server, target, notes)
    session = SessionTarget(target.session_id, target.session_name)
    window, _ = await named_window(server, WindowTarget(None, window_index, session), notes)
    return await resolve_pane(
        server,
        PaneTarget(
            pane_id=target.pane_id or window.active_pane_id,
            window_id=window.window_id,
            session_id=window.session_id,
        ),
        notes,
    )


def is_caller(env: Mapping[str, str], pane_id: str, socket_path: str, remote: bool) -> bool | None:
    """Whether ``pane_id`` on ``socket_path`` is the pane this process runs in, by its
    ``TMUX_PANE`` and the socket its ``TMUX`` names (resolved, as links may differ);
    None outside tmux. A server on another host is never this process's."""
    tmux, own_pane = env.get("TMUX"), env.get("TMUX_PANE")
    if not tmux:
        return None
    if remote or own_pane != pane_id:
        return False
    own_socket = tmux.split(",", 1)[0]
    try:
        return os.path.realpath(own_socket) == os.path.realpath(socket_path)
    except (OSError, ValueError):
        return False
