"""enter_copy_mode: a pane in copy mode, scrolled up if asked (libtmux-mcp's
enter_copy_mode): the pane found as every pane tool finds it (none named: the agent's);
one a run_command call holds is refused."""

from __future__ import annotations

from schemux.domain.arranging import enter_copy_mode
from schemux.domain.call import Call
from schemux.domain.tmux_objects import read_objects, refuse_held, refuse_owned
from schemux.generated.models.enter_copy_mode import EnterCopyModeInput, EnterCopyModeOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: EnterCopyModeInput) -> EnterCopyModeOutput:
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    refuse_owned(pane.session_name, f"pane {pane.pane_id}")
    await refuse_held(server, {pane.pane_id}, "putting it in copy mode")
    await enter_copy_mode(server, pane.pane_id, request.scroll_up)
    facts = (await read_objects(server)).pane(pane)
    return EnterCopyModeOutput.model_validate(facts, from_attributes=True)
