"""send_keys: text, or one tmux key name, typed into a pane (libtmux-mcp's send_keys).

``keys`` reaches tmux as one quoted argument after ``--``: never an option, never split
into a list of keys. Without ``literal``, tmux reads it as a key name when the whole of it
is one (``C-c``, ``Enter``, ``Up``, ``Escape``, ``F1``, ...) and types it as text
otherwise; with ``literal`` it is always text. ``enter`` presses Enter afterwards, in the
same tmux command line. Targets resolve as run_command's do; a started program's paneId
works too.
"""

from __future__ import annotations

from schemux.context import ToolContext
from schemux.generated.models.send_keys import SendKeysInput, SendKeysOutput
from schemux.targets import resolve_requested_pane
from schemux.tmux_command import THEN


async def handle(ctx: ToolContext, request: SendKeysInput) -> SendKeysOutput:
    server = ctx.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request)
    text = (" " if request.suppress_history else "") + request.keys
    command = ["send-keys", "-t", pane.pane_id, *(["-l"] if request.literal else []), "--", text]
    if request.enter:
        command += [THEN, "send-keys", "-t", pane.pane_id, "Enter"]
    await server.run(*command)
    return SendKeysOutput(result=f"Keys sent to pane {pane.pane_id}")
