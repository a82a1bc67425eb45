"""signal_channel: signal a tmux ``wait-for`` channel (libtmux-mcp's signal_channel); the
name's rules are ``schemux.domain.channels``'."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.channels import check_channel, signal
from schemux.generated.models.signal_channel import SignalChannelInput, SignalChannelOutput


async def handle(call: Call, request: SignalChannelInput) -> SignalChannelOutput:
    channel = check_channel(request.channel)
    await signal(call.tmux(request.socket_name), channel)
    return SignalChannelOutput(result=f"Channel {channel!r} signalled")
