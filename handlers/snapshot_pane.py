"""snapshot_pane: a pane's visible text with its cursor, size, position, mode and process
(libtmux-mcp's snapshot_pane, its ``PaneSnapshot``), all from one tmux command line, so
the text and the state are of the same moment. ``content`` keeps the last ``max_lines``
rows (``null``: all), saying how many it dropped; ``is_caller`` tells whether the pane is
the one this schemux runs in (its ``TMUX_PANE`` on the socket its ``TMUX`` names), and
is ``null`` when schemux does not run inside tmux.
"""

from __future__ import annotations

import os

from schemux.domain.call import Call
from schemux.domain.pane_moment import pane_moment
from schemux.domain.tmux_objects import is_caller
from schemux.generated.models.snapshot_pane import SnapshotPaneInput, SnapshotPaneOutput
from schemux.panes.targets import resolve_requested_pane
from schemux.tmux.format import tmux_row


@tmux_row
class _PaneRow:
    cursor_x: int
    cursor_y: int
    pane_width: int
    pane_height: int
    pane_left: int | None
    pane_top: int | None
    pane_right: int | None
    pane_bottom: int | None
    pane_at_left: bool
    pane_at_right: bool
    pane_at_top: bool
    pane_at_bottom: bool
    pane_tty: str
    pane_pid: int | None
    pane_dead: bool
    alternate_on: bool
    pane_in_mode: bool
    pane_mode: str
    scroll_position: int | None
    history_size: int
    pane_title: str
    pane_current_command: str
    pane_current_path: str
    socket_path: str


async def handle(call: Call, request: SnapshotPaneInput) -> SnapshotPaneOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    row, rows = await pane_moment(server, pane.pane_id, _PaneRow)
    while rows and rows[-1] == "":
        rows.pop()
    dropped = 0 if request.max_lines is None else max(0, len(rows) - request.max_lines)
    return SnapshotPaneOutput(
        pane_id=pane.pane_id,
        content="\n".join(rows[dropped:]),
        cursor_x=row.cursor_x,
        cursor_y=row.cursor_y,
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
        pane_tty=row.pane_tty or None,
        pane_pid=None if row.pane_pid is None else str(row.pane_pid),
        pane_dead=row.pane_dead,
        alternate_on=row.alternate_on,
        pane_in_mode=row.pane_in_mode,
        pane_mode=row.pane_mode or None,
        scroll_position=row.scroll_position if row.pane_in_mode else None,
        history_size=row.history_size,
        title=row.pane_title,
        pane_current_command=row.pane_current_command,
        pane_current_path=row.pane_current_path,
        is_caller=is_caller(
            os.environ, pane.pane_id, row.socket_path, not server.address.host.pids_here
        ),
        content_truncated=dropped > 0,
        content_truncated_lines=dropped,
    )
