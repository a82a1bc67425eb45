"""find_pane_by_position: the pane at a corner of a window (libtmux-mcp's
find_pane_by_position); with no window named, the agent's pane's window."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_objects import SessionTarget, WindowTarget, named_window
from schemux.generated.models.find_pane_by_position import (
    FindPaneByPositionInput,
    FindPaneByPositionOutput,
)


async def handle(call: Call, request: FindPaneByPositionInput) -> FindPaneByPositionOutput:
    session = SessionTarget(request.session_id, request.session_name)
    target = WindowTarget(request.window_id, request.window_index, session)
    window, objects = await named_window(call.tmux(request.socket_name), target, call.notes)
    pane = objects.pane_at(window, request.corner)
    if call.notes is not None:
        call.notes.note_pane(pane.pane_id)
    return FindPaneByPositionOutput.model_validate(pane, from_attributes=True)
