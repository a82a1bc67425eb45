"""capture_pane: a pane's screen, and history above it, as text rows."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.resource_uris import pane_uri
from schemux.generated.models.capture_pane import CapturePaneInput, CapturePaneOutput
from schemux.panes.targets import PaneTarget, resolve_pane
from schemux.tmux.command import THEN
from schemux.tmux.format import parse_row, row_format, tmux_row


@tmux_row
class _Screen:
    pane_width: int
    pane_height: int
    cursor_x: int
    cursor_y: int
    alternate_on: bool
    history_size: int


async def handle(call: Call, request: CapturePaneInput) -> CapturePaneOutput:
    server = call.tmux()
    pane = await resolve_pane(server, PaneTarget(pane_id=request.pane_id), call.notes)
    wanted = request.history_lines or 0
    # one tmux call, so the screen's facts and its rows are of the same moment
    lines = await server.run(
        "display-message", "-p", "-t", pane.pane_id, row_format(_Screen), THEN,
        "capture-pane", "-p", "-t", pane.pane_id, "-S", str(-wanted), "-E", "-",
    )  # fmt: skip
    screen = parse_row(_Screen, lines[0])
    rows = lines[1:]
    if screen.history_size > wanted:
        call.links.link(
            pane_uri(call.host_name, pane.pane_id, "scrollback"),
            f"scrollback of {pane.pane_id}",
            f"all {screen.history_size} rows of the pane's history and its screen",
        )
    return CapturePaneOutput(
        pane_id=pane.pane_id,
        width=screen.pane_width,
        height=screen.pane_height,
        cursor_x=screen.cursor_x,
        cursor_y=screen.cursor_y,
        alternate_screen=screen.alternate_on,
        dead=pane.dead,
        history_rows=max(0, len(rows) - screen.pane_height),
        rows=rows,
    )
