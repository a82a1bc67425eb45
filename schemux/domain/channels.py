"""Agents' tmux ``wait-for`` channels: names checked, signals sent, waits that leave no
waiter behind (``wait_for_channel`` and ``signal_channel``).

A name must match the contract's ``^[A-Za-z0-9_.:-]{1,128}$``; it reaches tmux as one
quoted argument after ``--``, so even ``-S`` is a channel, never a flag. Names beginning
with ``schemux_`` are refused: run_command's wrappers signal channels of that form.

tmux keeps a waiter whose client has gone: the next signal on its channel goes to that
waiter and is lost, where it would otherwise have been kept for the next wait (tmux
3.3a and 3.5a: a ``wait-for`` client killed, then ``wait-for -S``, then ``wait-for``
blocks). So a wait that gives up (its timeout, or the call's cancellation) does not
simply end its client. As schemux's last wait on the channel, it signals the channel
itself, which wakes its own waiter (the client then goes back to the pool) and leaves
the channel as if nobody had waited; a waiter outside schemux on the same channel is
woken too, the price of leaving nothing behind. While other waits of schemux's are on
the channel, it ends its client instead: the waiter left behind is woken with theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import Counter

from schemux.errors import SchemuxError, preview
from schemux.tmux.server import TmuxServer

_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
RESERVED_PREFIX = "schemux_"
# how long a given-up wait's own signal may take to reach its waiter, per try
_RELEASE_SECONDS = 0.5
_RELEASE_TRIES = 3


def check_channel(channel: str) -> str:
    """``channel`` when it is a name agents may use; a SchemuxError naming the field."""
    if not _NAME.fullmatch(channel):
        raise SchemuxError(
            f"Invalid channel name: channel {preview(channel)} must match "
            "^[A-Za-z0-9_.:-]{1,128}$",
            suggestion="use letters, digits and _ . : - only, 1 to 128 of them",
        )
    if channel.startswith(RESERVED_PREFIX):
        raise SchemuxError(
            f"Invalid channel name: channel {preview(channel)} begins with "
            f"{RESERVED_PREFIX!r}, which schemux's own run_command calls use",
            suggestion="choose a name without that prefix",
        )
    return channel


async def signal(server: TmuxServer, channel: str) -> None:
    """``wait-for -S``: wake the channel's waiters, or keep one signal for the next."""
    await server.run("wait-for", "-S", "--", channel)


class ChannelWaits:
    """schemux's waits on agents' channels, counted per server and channel (one per
    ``Services``), so that a wait that gives up knows whether it is the last. A wait joins
    a channel only while no wait is giving up (one lock: giving up takes milliseconds)."""

    def __init__(self) -> None:
        self._waiting: Counter[tuple[TmuxServer, str]] = Counter()
        self._giving_up = asyncio.Lock()

    async def wait(self, server: TmuxServer, channel: str, timeout: float) -> bool:
        """Whether ``channel`` was signalled within ``timeout`` seconds; whatever ends the
        wait, tmux holds no waiter of it afterwards (see the module)."""
        key = (server, channel)
        async with self._giving_up:
            self._waiting[key] += 1
        sent = asyncio.Event()
        waiting = asyncio.ensure_future(server.wait(channel, sent))
        try:
            try:
                done, _ = await asyncio.wait({waiting}, timeout=timeout)
            except asyncio.CancelledError:
                await asyncio.shield(self._give_up(key, waiting, sent))
                raise
            if not done:
                await asyncio.shield(self._give_up(key, waiting, sent))
                return False
            waiting.result()  # a tmux failure is the call's
            return True
        finally:
            self._waiting[key] -= 1
            if not self._waiting[key]:
                del self._waiting[key]

    async def _give_up(
        self, key: tuple[TmuxServer, str], waiting: asyncio.Future[None], sent: asyncio.Event
    ) -> None:
        server, channel = key
        async with self._giving_up:
            # the wait-for not sent yet, or other waits on the channel: ending the client
            # is enough (nothing of it reached tmux, or their wake-up takes its waiter)
            if sent.is_set() and self._waiting[key] == 1:
                for _ in range(_RELEASE_TRIES):
                    if waiting.done():
                        break
                    try:
                        await signal(server, channel)
                    except SchemuxError:
                        break  # the server is gone, and its channels with it
                    await asyncio.wait({waiting}, timeout=_RELEASE_SECONDS)
            waiting.cancel()
            with contextlib.suppress(BaseException):
                await waiting
