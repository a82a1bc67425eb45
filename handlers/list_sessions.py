"""list_sessions: the sessions of a tmux server, filtered (libtmux-mcp's list_sessions);
the listing is ``schemux.domain.tmux_objects``', the filters ``schemux.domain.filters``'."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.filters import conditions_for, meeting
from schemux.domain.tmux_objects import SessionFacts, read_objects
from schemux.generated.models.list_sessions import (
    ListSessionsInput,
    ListSessionsOutput,
    ResultItem,
)


async def handle(call: Call, request: ListSessionsInput) -> ListSessionsOutput:
    conditions = conditions_for(SessionFacts, request.filters)
    objects = await read_objects(call.tmux(request.socket_name))
    sessions = await meeting(objects.sessions, conditions)
    return ListSessionsOutput(
        result=[ResultItem.model_validate(session, from_attributes=True) for session in sessions]
    )
