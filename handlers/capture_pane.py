"""capture_pane: a pane's screen, and history above it, as text rows."""

from __future__ import annotations

from schemux.context import ToolContext
from schemux.generated.models.capture_pane import CapturePaneInput, CapturePaneOutput
from schemux.targets import PaneTarget, resolve_pane
from schemux.tmux_command import THEN
from schemux.tmux_format import Query

_SCREEN = Query(("pane_width", "pane_height", "cursor_x", "cursor_y", "alternate_on"))


async def handle(ctx: ToolContext, request: CapturePaneInput) -> CapturePaneOutput:
    server = ctx.tmux()
    pane = await resolve_pane(server, PaneTarget(pane_id=request.pane_id))
    wanted = request.history_lines or 0
    # one tmux call, so the screen's facts and its rows are of the same moment
    lines = await server.run(
        "display-message", "-p", "-t", pane.pane_id, _SCREEN.format, THEN,
        "capture-pane", "-p", "-t", pane.pane_id, "-S", str(-wanted), "-E", "-",
    )  # fmt: skip
    screen = _SCREEN.parse(lines[0])
    width, height = screen.integer("pane_width"), screen.integer("pane_height")
    cursor_x, cursor_y = screen.integer("cursor_x"), screen.integer("cursor_y")
    rows = lines[1:]
    return CapturePaneOutput(
        pane_id=pane.pane_id,
        width=width,
        height=height,
        cursor_x=cursor_x,
        cursor_y=cursor_y,
        alternate_screen=screen.flag("alternate_on"),
        dead=pane.dead,
        history_rows=max(0, len(rows) - height),
        rows=rows,
    )
