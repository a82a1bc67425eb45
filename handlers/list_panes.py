"""list_panes: the panes of a window, of a session, or of the whole server, filtered
(libtmux-mcp's list_panes)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.filters import conditions_for, meeting
from schemux.domain.tmux_objects import (
    PaneFacts,
    SessionTarget,
    WindowTarget,
    named_session,
    named_window,
    read_objects,
)
from schemux.generated.models.list_panes import ListPanesInput, ListPanesOutput, ResultItem


async def handle(call: Call, request: ListPanesInput) -> ListPanesOutput:
    conditions = conditions_for(PaneFacts, request.filters)
    server = call.tmux(request.socket_name)
    session = SessionTarget(request.session_id, request.session_name)
    panes: list[PaneFacts]
    if request.window_id is not None or request.window_index is not None:
        target = WindowTarget(request.window_id, request.window_index, session)
        window, objects = await named_window(server, target, call.notes)
        panes = objects.panes_of(window)
    elif session.named:
        named, objects = await named_session(server, session, call.notes)
        panes = [pane for pane in objects.panes if pane.session_id == named.session_id]
    else:
        panes = list((await read_objects(server)).panes)
    return ListPanesOutput(
        result=[
            ResultItem.model_validate(pane, from_attributes=True)
            for pane in await meeting(panes, conditions)
        ]
    )
