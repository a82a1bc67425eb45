"""adopt_pane: the idle bash, zsh or fish of a pane schemux did not start given the hooks
of the agent's pane, by one line typed where the person sees it
(``schemux.shell.adoption``); the policy's write scope and a watching person are asked
about first, as for run_command."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.write_policy import check_typing
from schemux.generated.models.adopt_pane import AdoptPaneInput, AdoptPaneOutput
from schemux.panes.targets import resolve_requested_pane
from schemux.shell.adoption import adopt


async def handle(call: Call, request: AdoptPaneInput) -> AdoptPaneOutput:
    timeout = call.settings.clamp_wait(request.timeout)
    server = call.tmux(request.socket_name)
    pane = await resolve_requested_pane(server, request, call.notes)
    await check_typing(call, server, pane, "adopt_pane", force=request.force)
    async with call.recorded(server, pane, "adopt_pane"):
        adoption = await adopt(server, pane, timeout)
    return AdoptPaneOutput(
        pane_id=pane.pane_id,
        shell=adoption.shell,
        adopted=adoption.line is not None,
        line=adoption.line,
    )
