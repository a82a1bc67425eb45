"""display_message: tmux variables of a pane in literal text (libtmux-mcp's
display_message); the template's rules are ``schemux.domain.format_text``'."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.format_text import displayed, template
from schemux.errors import SchemuxError, TmuxCommandError
from schemux.generated.models.display_message import DisplayMessageInput, DisplayMessageOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: DisplayMessageInput) -> DisplayMessageOutput:
    template(request.format_string)  # refused before any tmux work
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    try:
        text = await displayed(server, pane.pane_id, request.format_string)
    except TmuxCommandError as error:
        if error.target_gone:
            raise SchemuxError(f"pane {pane.pane_id} was closed") from None
        raise
    return DisplayMessageOutput(result=text)
