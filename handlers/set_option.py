"""set_option: a tmux option set at a scope (libtmux-mcp's set_option; where and how,
``schemux.domain.tmux_options``)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_options import check_name, check_settable, place, set_value
from schemux.generated.models.set_option import SetOptionInput, SetOptionOutput


async def handle(call: Call, request: SetOptionInput) -> SetOptionOutput:
    check_name("option", request.option)
    check_settable(request.option)
    server = call.tmux(request.socket_name)
    where = await place(server, request.scope, request.target, request.global_, call.notes)
    await set_value(server, where, request.option, request.value)
    return SetOptionOutput(option=request.option, value=request.value, status="set")
