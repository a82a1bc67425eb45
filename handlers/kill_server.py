"""kill_server: a tmux server killed, with all its sessions (libtmux-mcp's
kill_server), once identified as the one the call means (``schemux.domain.teardown``);
never started to be killed."""

from __future__ import annotations

import os

from schemux.domain.call import Call
from schemux.domain.teardown import identified_server, kill_identified
from schemux.domain.tmux_objects import read_objects, refuse_held
from schemux.generated.models.kill_server import KillServerInput, KillServerOutput
from schemux.tmux.server import CallPermits


async def handle(call: Call, request: KillServerInput) -> KillServerOutput:
    # a handle whose commands never start the server (call.tmux's first may)
    server = call.services.tmux(request.socket_name, call.scope).for_call(CallPermits())
    identity = await identified_server(server, os.environ)
    objects = await read_objects(server)
    await refuse_held(server, {pane.pane_id for pane in objects.panes}, "killing the server")
    await kill_identified(server, identity)
    said = (
        f"Server killed: {server.address.describe()} (pid {identity.pid}, "
        f"{len(objects.sessions)} sessions)"
    )
    if server.agent is not None:
        said += "; schemux starts it again, with a new agent's session, at the next call"
    return KillServerOutput(result=said)
