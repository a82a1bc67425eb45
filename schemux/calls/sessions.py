"""The MCP session a request comes from, for what belongs to it: over streamable HTTP
with sessions, its ``Mcp-Session-Id`` (random, known only to its client and schemux);
None over stdio (one session, this process's) and for a stateless request (MCP
2026-07-28), which all share one pool.

The serving layer reads it of each tool call and resource request (:func:`session_of`)
and gives it to the call (``Call.session``); the program store tags a program with the
session that started it, and answers "not found" to any other.
"""

from __future__ import annotations

from typing import Any

SESSION_HEADER = "mcp-session-id"


def session_of(request_context: Any) -> str | None:
    """The session id of a request (an SDK ``ServerRequestContext``): its HTTP request's
    ``Mcp-Session-Id`` header; None without an HTTP request or without the header."""
    request = getattr(request_context, "request", None)
    if request is None:
        return None
    value = request.headers.get(SESSION_HEADER)
    return None if value is None else str(value)
