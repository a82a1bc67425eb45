"""schemux's own log sent to a client that sets a level (``logging/setLevel``), through a
real MCP client: the records at that level and above, nothing below, nothing after the
server has closed; and the MCP level each Python level is sent as."""

from __future__ import annotations

import logging

import anyio
import mcp_types as types
import pytest
from mcp import Client

from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.client_log import mcp_level
from schemux.serving.server import build_server
from schemux.serving.state import ServingState
from tests.contexts import client_of

pytestmark = pytest.mark.anyio


async def test_a_client_gets_the_log_at_its_level_and_above(tmux_socket: str) -> None:
    received: list[types.LoggingMessageNotificationParams] = []

    async def record(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    context = ServingState(Settings(socket_name=tmux_socket))
    logger = logging.getLogger("schemux")
    try:
        async with Client(
            build_server(context, BINDINGS), mode="legacy", logging_callback=record
        ) as client:
            logger.error("before any level is set")
            await client.set_logging_level("error")
            logger.warning("below the level set")
            logger.error("at the level: %s", "sent")
            logger.critical("above it")
            with anyio.fail_after(5):
                while len(received) < 2:  # noqa: ASYNC110 (notifications arrive on their own)
                    await anyio.sleep(0.01)
            await anyio.sleep(0.1)  # and no third
    finally:
        await context.close()
    assert [(params.level, params.data, params.logger) for params in received] == [
        ("error", "at the level: sent", "schemux"),
        ("critical", "above it", "schemux"),
    ]
    assert context.client_log not in logger.handlers
    logger.error("after the server closed")  # goes nowhere, and fails nothing


async def test_the_capability_is_declared(tmux_socket: str) -> None:
    context = ServingState(Settings(socket_name=tmux_socket))
    try:
        async with client_of(context, BINDINGS, mode="legacy") as client:
            capabilities = client.server_capabilities
    finally:
        await context.close()
    assert capabilities.logging is not None


def test_python_levels_are_sent_as_the_nearest_mcp_level_below() -> None:
    assert mcp_level(logging.DEBUG) == "debug"
    assert mcp_level(logging.INFO) == "info"
    assert mcp_level(logging.WARNING) == "warning"
    assert mcp_level(logging.WARNING + 5) == "warning"
    assert mcp_level(logging.ERROR) == "error"
    assert mcp_level(logging.CRITICAL) == "critical"
    assert mcp_level(5) == "debug"
