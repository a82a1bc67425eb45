"""The MCP session a request comes from, for what belongs to it: over streamable HTTP
with sessions, its ``Mcp-Session-Id`` (random, known only to its client and schemux);
None over stdio (one session, this process's) and for a stateless request (MCP
2026-07-28), which all share one pool.

The serving layer sets it around each tool call and each resource request
(:func:`serving`), riding the request's context as the audit record does; the program
store reads it (:func:`current`) to tag a program with the session that started it, and
to answer "not found" to any other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

SESSION_HEADER = "mcp-session-id"

_session: ContextVar[str | None] = ContextVar("schemux_session", default=None)


def session_of(request_context: Any) -> str | None:
    """The session id of a request (an SDK ``ServerRequestContext``): its HTTP request's
    ``Mcp-Session-Id`` header; None without an HTTP request or without the header."""
    request = getattr(request_context, "request", None)
    if request is None:
        return None
    value = request.headers.get(SESSION_HEADER)
    return None if value is None else str(value)


@contextmanager
def serving(request_context: Any) -> Iterator[None]:
    """Run the block as the request ``request_context``'s session."""
    token = _session.set(session_of(request_context))
    try:
        yield
    finally:
        _session.reset(token)


def current() -> str | None:
    """The session of the request being served (None outside one)."""
    return _session.get()
