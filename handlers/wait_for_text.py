"""wait_for_text: wait for new text in a pane (libtmux-mcp's wait_for_text); see
``schemux.domain.text_wait`` for what counts as new and ``schemux.domain.pane_watch`` for how the
wait wakes."""

from __future__ import annotations

import time

from schemux.domain.call import Call
from schemux.domain.text_wait import compile_off_loop, wait_for_new_text
from schemux.generated.models.wait_for_text import WaitForTextInput, WaitForTextOutput
from schemux.panes.targets import resolve_requested_pane


async def handle(call: Call, request: WaitForTextInput) -> WaitForTextOutput:
    # The whole call, compiling the patterns and resolving the pane included, is bounded
    # by effective_timeout
    effective_timeout = call.settings.clamp_wait(request.timeout)
    call.progress.expect(effective_timeout, "waiting for the text")
    started = time.monotonic()
    deadline = started + effective_timeout
    patterns, stop = await compile_off_loop(
        {"patterns": request.patterns, "stop": request.stop},
        regex=request.regex,
        match_case=request.match_case,
        deadline=deadline,
    )
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    result = await wait_for_new_text(
        server,
        pane,
        patterns=patterns,
        stop=stop,
        started=started,
        deadline=deadline,
        interval=request.interval,
    )
    return WaitForTextOutput(
        found=result.found,
        outcome=result.outcome,
        matched_index=result.matched_index,
        matched_lines=result.matched_lines,
        tail=result.tail,
        saw_new_output=result.saw_new_output,
        matched_at_entry=result.matched_at_entry,
        alternate_screen=result.alternate_screen,
        pane_id=pane.pane_id,
        elapsed_seconds=result.elapsed,
        effective_timeout=effective_timeout,
    )
