"""kill_window: one window closed, with all its panes (libtmux-mcp's kill_window); see
``schemux.domain.teardown`` for what it never closes."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.teardown import kill, refuse_caller
from schemux.domain.tmux_objects import read_objects, refuse_held, refuse_owned
from schemux.errors import NotFound
from schemux.generated.models.kill_window import KillWindowInput, KillWindowOutput
from schemux.panes.targets import PaneTarget


async def handle(call: Call, request: KillWindowInput) -> KillWindowOutput:
    PaneTarget(window_id=request.window_id).validate()
    server = call.tmux(request.socket_name)
    objects = await read_objects(server)
    windows = [window for window in objects.windows if window.window_id == request.window_id]
    if not windows:
        raise NotFound(
            f"no window {request.window_id!r} on {objects.where}",
            suggestion="pass the id of a window that exists",
        )
    what = f"window {request.window_id}"
    for window in windows:
        refuse_owned(window.session_name, what)
    panes = objects.panes_of(windows[0])
    refuse_caller(what, any(pane.is_caller for pane in panes))
    await refuse_held(server, {pane.pane_id for pane in panes}, "killing its window")
    await kill(server, "kill-window", request.window_id)
    return KillWindowOutput(result=f"Window killed: {request.window_id}")
