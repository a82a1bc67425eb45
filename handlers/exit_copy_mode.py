"""exit_copy_mode: a pane out of copy mode, or any mode (libtmux-mcp's
exit_copy_mode): the pane found as every pane tool finds it (none named: the agent's)."""

from __future__ import annotations

from schemux.domain.arranging import exit_copy_mode
from schemux.domain.call import Call
from schemux.domain.tmux_objects import read_objects, refuse_owned
from schemux.generated.models.exit_copy_mode import ExitCopyModeInput, ExitCopyModeOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: ExitCopyModeInput) -> ExitCopyModeOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    await exit_copy_mode(server, pane.pane_id)
    facts = (await read_objects(server)).pane(pane)
    return ExitCopyModeOutput.model_validate(facts, from_attributes=True)
