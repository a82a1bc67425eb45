"""search_panes: the panes whose text matches a pattern, paged (libtmux-mcp's
search_panes; its rules are ``schemux.domain.pane_search``')."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.pane_search import SearchRequest, compiled, search
from schemux.domain.tmux_objects import SessionTarget, named_session, read_objects
from schemux.generated.models.search_panes import (
    SearchPanesInput,
    SearchPanesOutput,
    SearchPanesOutputPaneContentMatch,
)


async def handle(call: Call, request: SearchPanesInput) -> SearchPanesOutput:
    pattern = compiled(request.pattern, regex=request.regex, match_case=request.match_case)
    server = call.tmux(request.socket_name)
    target = SessionTarget(request.session_id, request.session_name)
    session_id = None
    if target.named:
        session, objects = await named_session(server, target, call.notes)
        session_id = session.session_id
    else:
        objects = await read_objects(server)
    page = await search(
        server,
        objects,
        SearchRequest(
            pattern=pattern,
            session_id=session_id,
            content_start=request.content_start,
            content_end=request.content_end,
            max_matched_lines_per_pane=request.max_matched_lines_per_pane,
            limit=request.limit,
            offset=request.offset,
        ),
    )
    return SearchPanesOutput(
        matches=[
            SearchPanesOutputPaneContentMatch.model_validate(match, from_attributes=True)
            for match in page.matches
        ],
        truncated=page.truncated,
        truncated_panes=page.truncated_panes,
        total_panes_matched=page.total_panes_matched,
        offset=page.offset,
        limit=page.limit,
    )
