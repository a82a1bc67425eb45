"""The sessions, windows and panes of a tmux server, each with its live reference.

One tmux command line reads the server's identity and every pane (``list-panes -a``),
so the listing is of one moment. schemux's own session is left out, but for the program
windows that live there: a user's window that a wait links into it for the wait's
duration is listed under the user's sessions only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from schemux.tmux.command import THEN
from schemux.tmux.format import (
    option,
    parse_row,
    parse_rows,
    readable,
    row_format,
    tmux_row,
    unsanitized,
)
from schemux.tmux.owned_session import CONTROL_MARK, is_reserved
from schemux.tmux.references import IdentityRow, ServerIdentity
from schemux.tmux.server import TmuxServer
from schemux.versions import parse_version


@tmux_row
class _ServerRow(IdentityRow):
    version: str


@tmux_row
class _PaneRow:
    session_id: str
    session_name: str
    session_attached: int
    window_id: str
    window_index: int
    window_name: str
    window_active: bool
    pane_id: str
    pane_index: int
    pane_active: bool
    pane_width: int
    pane_height: int
    pane_current_command: str
    pane_dead: bool
    pane_dead_status: int | None
    pane_in_mode: bool
    window_linked_sessions_list: str
    control: bool = option(CONTROL_MARK)


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
        "display-message", "-p", row_format(_ServerRow), THEN,
        "list-panes", "-a", "-F", row_format(_PaneRow),
    )  # fmt: skip
    head = parse_row(_ServerRow, lines[0])
    identity, version = ServerIdentity.of(head), readable(head.version)
    release = parse_version(version)
    sessions: dict[str, SessionEntry] = {}
    windows: dict[tuple[str, str], WindowEntry] = {}
    for row in parse_rows(_PaneRow, lines[1:]):
        if is_reserved(row.session_name, row.control, row.window_linked_sessions_list):
            continue  # schemux's control window, or a window linked in; programs are listed
        session = sessions.get(row.session_id)
        if session is None:
            session = sessions[row.session_id] = SessionEntry(
                row.session_id,
                identity.generation(row.session_id),
                readable(row.session_name),
                row.session_attached,
            )
        # a window linked into several sessions is listed under each
        window = windows.get((row.session_id, row.window_id))
        if window is None:
            window = windows[(row.session_id, row.window_id)] = WindowEntry(
                row.window_id,
                identity.generation(row.window_id),
                row.window_index,
                readable(row.window_name),
                row.window_active,
            )
            session.windows.append(window)
        window.panes.append(
            PaneEntry(
                row.pane_id,
                identity.generation(row.pane_id),
                row.pane_index,
                row.pane_active,
                row.pane_width,
                row.pane_height,
                readable(unsanitized(row.pane_current_command, release)),
                row.pane_dead,
                row.pane_dead_status if row.pane_dead else None,
                row.pane_in_mode,
                program_in(row.pane_id),
            )
        )
    return ServerListing(identity, version, list(sessions.values()))
