"""Fixtures: private tmux servers and MCP clients of schemux, in memory and over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator

import pytest
from mcp import Client, StdioServerParameters

from schemux.config import Settings
from schemux.context import ToolContext
from schemux.generated.bindings import BINDINGS
from schemux.server import build_server
from tests.support import private_tmux_server

STDIO_WAIT_CEILING = 60


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def tmux_socket() -> Iterator[str]:
    """The tmux server the tests' schemux is configured with."""
    with private_tmux_server("main") as socket_name:
        yield socket_name


@pytest.fixture(scope="session")
def other_tmux_socket() -> Iterator[str]:
    """A second tmux server, reached only through a call's socket_name."""
    with private_tmux_server("other") as socket_name:
        yield socket_name


def stdio_parameters(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "schemux", "serve", *args])


@pytest.fixture(scope="session")
async def stdio_client(anyio_backend: str, tmux_socket: str) -> AsyncIterator[Client]:
    """schemux as an MCP client starts it: a subprocess speaking stdio."""
    parameters = stdio_parameters(
        "--socket-name", tmux_socket, "--wait-ceiling", str(STDIO_WAIT_CEILING)
    )
    async with Client(parameters) as client:
        yield client


@pytest.fixture
def tool_context(tmux_socket: str) -> ToolContext:
    return ToolContext(Settings(socket_name=tmux_socket, wait_ceiling=STDIO_WAIT_CEILING))


@pytest.fixture
async def memory_client(anyio_backend: str, tool_context: ToolContext) -> AsyncIterator[Client]:
    """schemux in this process, over the SDK's in-memory transport."""
    async with Client(build_server(tool_context, BINDINGS)) as client:
        yield client
