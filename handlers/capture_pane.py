"""capture_pane: a pane's rows as text (libtmux-mcp's capture_pane), without colours:
the screen, or the rows from ``start`` to ``end`` as tmux's ``capture-pane -S``/``-E``
count them (0 the screen's first row, negative rows of history; tmux clamps a row beyond
the history or below the screen to the nearest there is). The pane is found as every tool
of the family finds it (``schemux.panes.targets``; none named: the agent's).

The newest rows are kept, at most ``max_lines`` of them and ``MAX_BYTES`` of text; when
older ones are dropped the text starts with one ``[... truncated K lines ...]`` line, and
the result links to the pane's scrollback resource, which holds them."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.resource_uris import pane_uri
from schemux.errors import INVALID_ARGUMENTS, SchemuxError, TmuxCommandError
from schemux.generated.models.capture_pane import CapturePaneInput, CapturePaneOutput
from schemux.panes.targets import resolve_requested_pane
from schemux.text.screen import limit_rows

# bytes of text (a newline a row) a result holds at most: tmux_capture's largest max_bytes
MAX_BYTES = 256 * 1024


async def handle(call: Call, request: CapturePaneInput) -> CapturePaneOutput:
    start = 0 if request.start is None else request.start  # tmux's own default
    if request.end is not None and request.end < start:
        # tmux would swap the two silently; a caller who wrote them so meant something else
        raise SchemuxError(
            f"end {request.end} is before start {start}",
            suggestion="give an end at or after start: 0 is the screen's first row, -1 the "
            "newest row of history, -100 the hundredth newest",
            code=INVALID_ARGUMENTS,
            delivery="not_sent",
        )
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    bounds = [
        *(("-S", str(request.start)) if request.start is not None else ()),
        *(("-E", str(request.end)) if request.end is not None else ()),
    ]
    try:
        rows = await server.run("capture-pane", "-p", "-t", pane.pane_id, *bounds)
    except TmuxCommandError as error:
        if error.target_gone:
            raise SchemuxError(f"pane {pane.pane_id} was closed") from None
        raise
    max_lines = len(rows) if request.max_lines is None else request.max_lines
    kept, _ = limit_rows([row + "\n" for row in rows], max_lines, MAX_BYTES)
    dropped = len(rows) - len(kept)
    text = "".join(kept).removesuffix("\n")
    if not dropped:
        return CapturePaneOutput(result=text)
    call.links.link(
        pane_uri(call.host_name, pane.pane_id, "scrollback"),
        f"scrollback of {pane.pane_id}",
        "all the rows of the pane's history and its screen",
    )
    header = f"[... truncated {dropped} lines ...]"
    return CapturePaneOutput(result=f"{header}\n{text}" if kept else header)
