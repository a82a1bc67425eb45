"""HTTP connections held to time and number before anything is authenticated.

uvicorn bounds only the idle time between a connection's requests (``timeout_keep_alive``)
and the size of a request head (h11's 16 KB); a connection that sends its head a byte at
a time, or never ends its body, stays open for as long as its sender likes, and as many
of them as it opens, all before the bearer token is ever looked at. Here, in uvicorn's
h11 protocol (the one layer that sees a connection before its request head is whole):

* a request head must be complete within ``HttpConfig.head_seconds`` of its first byte
  (of the connection's start, for the first one), its body within
  ``HttpConfig.body_seconds`` of the head's end; otherwise the connection is closed;
* at most ``HttpConfig.max_new_connections`` connections may be open that have not yet
  sent one whole request head: beyond them, the oldest of them is closed.

Each close is logged the first time, then counted (``logs.RepeatedLog``): a flood of
connections writes a line every ten seconds, not one per connection.

A request that fails authentication is answered with ``Connection: close``
(``http.security``), so an unauthenticated connection lives for at most one head's time.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from schemux.http.config import HttpConfig
from schemux.logs import RepeatedLog

logger = logging.getLogger("schemux")


class ConnectionGuard:
    """One HTTP server's limits, and its connections that have sent no whole request head."""

    def __init__(self, config: HttpConfig) -> None:
        self.head_seconds = config.head_seconds
        self.body_seconds = config.body_seconds
        self.max_new = config.max_new_connections
        # oldest first (a dict keeps insertion order)
        self.new: dict[H11Protocol, None] = {}
        self.repeated = RepeatedLog(logger)  # a flood's closes: one line, then counts

    def close(self) -> None:
        """At the server's end: the counts of closes not yet logged."""
        self.repeated.close()

    def protocol(self) -> type[H11Protocol]:
        """uvicorn's h11 protocol under this guard (uvicorn makes one per connection)."""
        guard = self

        class GuardedH11Protocol(H11Protocol):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self._deadline: asyncio.TimerHandle | None = None
                self._awaiting: str | None = None  # "head" or "body": what the deadline is for

            def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
                super().connection_made(transport)
                if len(guard.new) >= guard.max_new:
                    # the oldest goes: a client that sends its request at once is never
                    # the oldest for long, however many connections an attacker holds
                    oldest = next(iter(guard.new))
                    del guard.new[oldest]
                    guard.repeated.log(
                        logging.WARNING,
                        f"HTTP: closed the oldest of {guard.max_new} connections that have "
                        "sent no whole request yet, the most this server allows",
                    )
                    oldest.transport.close()
                guard.new[self] = None
                self._expect("head", guard.head_seconds)

            def data_received(self, data: bytes) -> None:
                if self._awaiting is None and self.conn.their_state is h11.IDLE:
                    self._expect("head", guard.head_seconds)  # the next request on a kept one
                super().data_received(data)
                self._follow()

            def on_response_complete(self) -> None:
                super().on_response_complete()
                self._follow()  # a pipelined request may have been read meanwhile

            def connection_lost(self, exc: Exception | None) -> None:
                super().connection_lost(exc)
                self._disarm()
                guard.new.pop(self, None)

            def _follow(self) -> None:
                """Move the deadline to where the request is: its head, its body, done."""
                state = self.conn.their_state
                if state is h11.IDLE:
                    return
                guard.new.pop(self, None)
                if state is h11.SEND_BODY:
                    if self._awaiting != "body":
                        self._expect("body", guard.body_seconds)
                else:
                    self._disarm()

            def _expect(self, part: str, seconds: float) -> None:
                self._disarm()
                self._awaiting = part
                self._deadline = self.loop.call_later(seconds, self._expired, part, seconds)

            def _disarm(self) -> None:
                if self._deadline is not None:
                    self._deadline.cancel()
                self._deadline = None
                self._awaiting = None

            def _expired(self, part: str, seconds: float) -> None:
                self._deadline = None
                self._awaiting = None
                if not self.transport.is_closing():
                    guard.repeated.log(
                        logging.INFO,
                        f"HTTP: closed a connection whose request {part} took over {seconds:g} s",
                    )
                    self.transport.close()

        return GuardedH11Protocol
