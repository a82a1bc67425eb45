"""schemux's own log sent to the MCP clients that ask for it (``logging/setLevel``).

A handshake-era client (2025-11-25 and older) that sets a level gets each record of the
``schemux`` logger at that level or above as ``notifications/message`` (logger
``schemux``), as well as where ``--log-level``/``--log-file`` send it; ``--log-level``
still decides which records are made at all. Each client (the stdio one, or each HTTP
session) has its own level; a client that cannot be reached any more is dropped. The
2026-07-28 revision removed ``logging/setLevel`` (a request opts in to messages on its own
stream instead), so its clients get none from here.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPDeprecationWarning

# MCP's levels, least severe first, and the one each Python level is sent as
MCP_LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)  # fmt: skip
PYTHON_LEVELS: Mapping[int, types.LoggingLevel] = MappingProxyType(
    {
        logging.DEBUG: "debug",
        logging.INFO: "info",
        logging.WARNING: "warning",
        logging.ERROR: "error",
        logging.CRITICAL: "critical",
    }
)
STDIO_CLIENT = "stdio"


def mcp_level(levelno: int) -> types.LoggingLevel:
    """The MCP level a Python record's level is sent as (the nearest at or below it)."""
    at_or_below = [level for level in PYTHON_LEVELS if level <= levelno]
    return PYTHON_LEVELS[max(at_or_below)] if at_or_below else "debug"


class ClientLog(logging.Handler):
    """The clients that set a level (``ServingState.client_log``): attached to the
    ``schemux`` logger while there is one."""

    def __init__(self) -> None:
        super().__init__()
        # client (its HTTP session id, or stdio) -> its session and the least level it takes
        self._clients: dict[str, tuple[ServerSession, types.LoggingLevel]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sending: set[asyncio.Task[None]] = set()

    async def set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """``logging/setLevel``: this client gets records at ``params.level`` and above."""
        headers = ctx.request.headers if ctx.request is not None else {}
        client = str(headers.get("mcp-session-id", STDIO_CLIENT))
        self._clients[client] = (ctx.session, params.level)
        self._loop = asyncio.get_running_loop()
        logger = logging.getLogger("schemux")
        if self not in logger.handlers:
            logger.addHandler(self)
        return types.EmptyResult()

    def emit(self, record: logging.LogRecord) -> None:
        # any thread may log (the audit writer's does): sent from the server's loop
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        level = mcp_level(record.levelno)
        message = record.getMessage()
        loop.call_soon_threadsafe(self._send_all, level, message)

    def _send_all(self, level: types.LoggingLevel, message: str) -> None:
        rank = MCP_LEVELS.index(level)
        for client, (session, least) in list(self._clients.items()):
            if rank >= MCP_LEVELS.index(least):
                task = asyncio.get_running_loop().create_task(
                    self._send(client, session, level, message)
                )
                self._sending.add(task)
                task.add_done_callback(self._sending.discard)

    async def _send(
        self, client: str, session: ServerSession, level: types.LoggingLevel, message: str
    ) -> None:
        try:
            # the SDK warns that logging is deprecated in 2026-07-28 at each call; it is
            # this client's era's (the warning is raised as the call is made, not awaited)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                sending = session.send_log_message(level, message, logger="schemux")
            await sending
        except Exception:  # gone: nothing is logged about it (that would be sent again)
            self._clients.pop(client, None)

    async def detach(self) -> None:
        """No more records are sent; those on their way are awaited, boundedly."""
        logging.getLogger("schemux").removeHandler(self)
        self._clients.clear()
        if self._sending:
            await asyncio.wait(self._sending, timeout=1.0)
