"""show_option: a tmux option's value in effect at a scope (libtmux-mcp's show_option;
``schemux.domain.tmux_options`` says where it is read and how)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.tmux_options import check_name, option_value, place
from schemux.generated.models.show_option import ShowOptionInput, ShowOptionOutput


async def handle(call: Call, request: ShowOptionInput) -> ShowOptionOutput:
    check_name("option", request.option)
    server = call.tmux(request.socket_name)
    where = await place(server, request.scope, request.target, request.global_, call.notes)
    value = await option_value(server, where, request.option)
    return ShowOptionOutput(option=request.option, value=value)
