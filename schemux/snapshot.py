"""The sessions, windows and panes of a tmux server, each with its live reference.

One tmux command line reads the server's identity and every pane (``list-panes -a``),
so the listing is of one moment. schemux's own session is left out, but for the program
windows that live there: a user's window that a wait links into it for the wait's
duration is listed under the user's sessions only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from schemux.owned_session import CONTROL_MARK, is_reserved
from schemux.references import IDENTITY, ServerIdentity
from schemux.tmux import TmuxServer
from schemux.tmux_command import THEN
from schemux.tmux_format import Query, readable

_SERVER = Query((*IDENTITY.names, "version"))
_PANES = Query((
    "session_id", "session_name", "session_attached",
    "window_id", "window_index", "window_name", "window_active",
    "pane_id", "pane_index", "pane_active", "pane_width", "pane_height",
    "pane_current_command", "pane_dead", "pane_dead_status", "pane_in_mode", CONTROL_MARK,
    "window_linked_sessions_list",
))  # fmt: skip


@dataclass(frozen=True)
class PaneEntry:
    id: str
    generation: str
    index: int
    active: bool
    width: int
    height: int
    current_command: str
    dead: bool
    dead_status: int | None
    in_mode: bool
    program_id: str | None


@dataclass
class WindowEntry:
    id: str
    generation: str
    index: int
    name: str
    active: bool
    panes: list[PaneEntry] = field(default_factory=list)


@dataclass
class SessionEntry:
    id: str
    generation: str
    name: str
    attached: int
    windows: list[WindowEntry] = field(default_factory=list)


@dataclass(frozen=True)
class ServerListing:
    identity: ServerIdentity
    version: str
    sessions: list[SessionEntry]


async def list_server(server: TmuxServer, program_in: Callable[[str], str | None]) -> ServerListing:
    """The sessions, windows and panes of ``server``; ``program_in`` tells the programId of
    the schemux program a pane runs, if any."""
    lines = await server.run(
        "display-message", "-p", _SERVER.format, THEN,
        "list-panes", "-a", "-F", _PANES.format,
    )  # fmt: skip
    head = _SERVER.parse(lines[0])
    identity, version = ServerIdentity.of(head), readable(head["version"])
    sessions: dict[str, SessionEntry] = {}
    windows: dict[tuple[str, str], WindowEntry] = {}
    for values in _PANES.parse_all(lines[1:]):
        if is_reserved(
            values["session_name"],
            values.flag(CONTROL_MARK),
            values["window_linked_sessions_list"],
        ):
            continue  # schemux's control window, or a window linked in; programs are listed
        session_id, window_id, pane_id = (
            values["session_id"],
            values["window_id"],
            values["pane_id"],
        )
        session = sessions.get(session_id)
        if session is None:
            session = sessions[session_id] = SessionEntry(
                session_id,
                identity.generation(session_id),
                readable(values["session_name"]),
                int(values["session_attached"]),
            )
        # a window linked into several sessions is listed under each
        window = windows.get((session_id, window_id))
        if window is None:
            window = windows[(session_id, window_id)] = WindowEntry(
                window_id,
                identity.generation(window_id),
                int(values["window_index"]),
                readable(values["window_name"]),
                values.flag("window_active"),
            )
            session.windows.append(window)
        dead = values.flag("pane_dead")
        status = values["pane_dead_status"]
        window.panes.append(
            PaneEntry(
                pane_id,
                identity.generation(pane_id),
                int(values["pane_index"]),
                values.flag("pane_active"),
                int(values["pane_width"]),
                int(values["pane_height"]),
                readable(values["pane_current_command"]),
                dead,
                int(status) if dead and status else None,
                values.flag("pane_in_mode"),
                program_in(pane_id),
            )
        )
    return ServerListing(identity, version, list(sessions.values()))
