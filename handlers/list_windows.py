"""list_windows: the windows of a session, or of the whole server, filtered
(libtmux-mcp's list_windows)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.filters import conditions_for, meeting
from schemux.domain.tmux_objects import SessionTarget, WindowFacts, named_session, read_objects
from schemux.generated.models.list_windows import ListWindowsInput, ListWindowsOutput, ResultItem


async def handle(call: Call, request: ListWindowsInput) -> ListWindowsOutput:
    conditions = conditions_for(WindowFacts, request.filters)
    server = call.tmux(request.socket_name)
    target = SessionTarget(request.session_id, request.session_name)
    if target.named:
        session, objects = await named_session(server, target, call.notes)
        windows = objects.windows_of(session.session_id)
    else:
        windows = list((await read_objects(server)).windows)
    return ListWindowsOutput(
        result=[
            ResultItem.model_validate(window, from_attributes=True)
            for window in await meeting(windows, conditions)
        ]
    )
