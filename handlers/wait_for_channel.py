"""wait_for_channel: wait until a tmux ``wait-for`` channel is signalled (libtmux-mcp's
wait_for_channel), at most the timeout clamped to the server's wait ceiling; a wait that
times out or is cancelled leaves no waiter in tmux (``schemux.domain.channels``)."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.channels import check_channel
from schemux.errors import SchemuxError
from schemux.generated.models.wait_for_channel import (
    WaitForChannelInput,
    WaitForChannelOutput,
)


async def handle(call: Call, request: WaitForChannelInput) -> WaitForChannelOutput:
    channel = check_channel(request.channel)
    timeout = call.settings.clamp_wait(request.timeout)
    enforced = (
        ""
        if timeout == request.timeout
        else f" (timeout enforced: {timeout:g} s, the server's wait ceiling, "
        f"not the {request.timeout:g} s asked)"
    )
    call.progress.expect(timeout, f"waiting for channel {channel}")
    server = call.tmux(request.socket_name)
    if not await call.channels.wait(server, channel, timeout):
        raise SchemuxError(
            f"wait-for timeout: channel {channel!r} was not signalled within {timeout}s{enforced}",
            suggestion="wait again: a signal sent while nobody waits is kept for the next "
            "wait; check that the command you typed signals it (...; tmux wait-for -S "
            f"{channel})",
        )
    return WaitForChannelOutput(result=f"Channel {channel!r} was signalled{enforced}")
