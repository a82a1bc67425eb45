"""capture_since: a pane's visible rows and a cursor, then with the cursor only the rows
written or rewritten since (libtmux-mcp's capture_since, its ``CaptureSinceResult``); how
rows are told new is ``schemux.domain.new_rows``'. A call with a cursor and a target must name
the cursor's pane (and server). ``lines`` keeps its tail within ``max_lines`` and ``max_bytes``.
"""

from __future__ import annotations

import time

from schemux.domain import new_rows
from schemux.domain.call import Call
from schemux.errors import SchemuxError
from schemux.generated.models.capture_since import CaptureSinceInput, CaptureSinceOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: CaptureSinceInput) -> CaptureSinceOutput:
    started = time.monotonic()
    if request.cursor is None:
        server = call.tmux(request.socket_name)
        pane = await resolve_requested_pane(server, request, call.notes)
        read = await new_rows.start(server, call.row_cursors, pane)
    else:
        mark = call.row_cursors.recall(request.cursor)
        # the cursor names its server: a call that names one must name that one
        if request.socket_name is not None and call.tmux(request.socket_name) != mark.server:
            raise SchemuxError(
                f"the cursor is for pane {mark.pane_id} of the tmux server on "
                f"{mark.server.address.describe()}, not of the one socket_name "
                f"{request.socket_name!r} names",
                suggestion="pass the cursor without socket_name",
            )
        targeted = (request.pane_id, request.window_id, request.session_id, request.session_name)
        if any(value is not None for value in targeted):
            pane = await resolve_requested_pane(mark.server, request, call.notes)
            if pane.pane_id != mark.pane_id:
                raise SchemuxError(
                    f"the cursor is for pane {mark.pane_id}, not {pane.pane_id}, which the "
                    "call names",
                    suggestion="pass the cursor alone, or start a new one on this pane (no cursor)",
                )
        read = await new_rows.since(call.row_cursors, mark)
    lines, dropped_lines, dropped_bytes = new_rows.tail_within(
        read.lines, request.max_lines, request.max_bytes
    )
    return CaptureSinceOutput(
        pane_id=read.pane_id,
        cursor=read.cursor,
        lines=lines,
        elapsed_seconds=round(time.monotonic() - started, 6),
        lines_missed=read.lines_missed,
        truncated=dropped_lines > 0 or dropped_bytes > 0,
        truncated_lines=dropped_lines,
        truncated_bytes=dropped_bytes,
    )
