"""Progress notifications while a call waits.

A client that sends a ``progressToken`` with ``tools/call`` gets ``notifications/progress``
while the call waits: the first as soon as the handler says it waits, then one every
``TICK_SECONDS``; ``progress`` is the seconds elapsed since the call began, ``total``
the seconds by which its wait ends at the latest, and the message says what it waits
for. Several clients end a call after 60 s without progress; waits go up to the server's
ceiling (120 s by default).

The pipeline (``serving.server.call_tool``) runs each call inside :func:`reporting`, which gives
the call its :class:`Progress` (``Call.progress``); a handler states its wait with
:meth:`Progress.expect`, which starts the call's ticker, and tells of a step it finished
with :meth:`Progress.announce` (a notification at once, between the ticks); the ticker is
cancelled when the call ends. Every notification's ``progress`` is above the last one's,
as MCP requires. The session's ``report_progress`` sends against the caller's token and
does nothing without one (and on the SDK's in-memory transport calls the caller's
callback), so no notification goes to a caller that asked for none. A call that reports
to nobody (one run as a task) has a ``Progress`` without ``send``: it says nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

TICK_SECONDS = 3.0

logger = logging.getLogger("schemux")

# report_progress(progress, total, message) of the caller's session
Send = Callable[[float, float | None, str | None], Awaitable[None]]


@dataclass
class _Ticking:
    """What one tool call reports as its progress, and the task that reports it."""

    send: Send
    started: float = field(default_factory=time.monotonic)
    ends_by: float = 0.0  # seconds after ``started``
    message: str = ""
    ticker: asyncio.Task[None] | None = None
    last: float = -1.0  # the progress last sent: each one sent must be above it
    # one notification at a time, so that they go out in the order of their values
    sending: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def send_now(self, message: str | None = None) -> None:
        """A notification now; its message is the waiting one's, or ``message``."""
        async with self.sending:
            elapsed = round(time.monotonic() - self.started, 1)
            value = elapsed if elapsed > self.last else round(self.last + 0.1, 1)
            total = max(self.ends_by, value)
            if message is None:
                message = f"{self.message}: {elapsed:.0f} s of at most {total:.0f} s"
            self.last = value
            await self.send(value, round(total, 1), message)


class Progress:
    """The progress of one tool call (``Call.progress``), sent through ``send`` (the
    caller's session's ``report_progress``); without ``send``, nothing is sent."""

    def __init__(self, send: Send | None = None) -> None:
        self._call = None if send is None else _Ticking(send)

    def expect(self, total_seconds: float, message: str) -> None:
        """This call now waits up to ``total_seconds`` for what ``message`` says (a short
        phrase such as "waiting for the command to finish"); a later ``expect`` in the
        same tool call states the next wait."""
        call = self._call
        if call is None:
            return
        call.ends_by = time.monotonic() - call.started + max(0.0, total_seconds)
        call.message = message
        if call.ticker is None:
            call.ticker = asyncio.get_running_loop().create_task(_tick(call))

    async def announce(self, message: str) -> None:
        """Tell the caller at once that a step of the wait ended (``message``, such as
        "host web1 answered: 3 of 10 hosts done"); before the call's first ``expect``,
        nothing. A client that cannot take it does not fail the call."""
        call = self._call
        if call is None or call.ticker is None:
            return
        try:
            await call.send_now(message)
        except Exception:
            logger.debug("progress notification not sent", exc_info=True)

    async def end(self) -> None:
        """The call ended: no notification goes out after its result; shielded, as the
        call may be cancelled."""
        ticker = None if self._call is None else self._call.ticker
        if ticker is not None:
            ticker.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait({ticker})


@asynccontextmanager
async def reporting(send: Send) -> AsyncIterator[Progress]:
    """The progress of the call run inside, reported through ``send`` from its first
    :meth:`Progress.expect` on (a call that never waits costs nothing), until it ends."""
    progress = Progress(send)
    try:
        yield progress
    finally:
        await progress.end()


async def _tick(call: _Ticking) -> None:
    while True:
        try:
            await call.send_now()
        except Exception:
            # a client that is gone or cannot take it: the call goes on without progress
            logger.debug("progress notification not sent", exc_info=True)
            return
        await asyncio.sleep(TICK_SECONDS)
