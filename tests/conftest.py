"""Fixtures: private tmux servers and MCP clients of schemux, in memory and over stdio."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from schemux.config import Settings
from schemux.context import ToolContext
from schemux.generated.bindings import BINDINGS
from schemux.programs import ProgramLimits
from schemux.server import build_server
from tests.leftovers import find_leftovers, private_temporary_directory
from tests.support import force_gate, private_tmux_server

STDIO_WAIT_CEILING = 60
_temporary: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    """The run gets a temporary directory of its own, so that its end can tell what it left
    from what other runs on the machine leave."""
    _temporary.append(private_temporary_directory())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when it left a tmux socket, server or schemux runtime directory."""
    if not _temporary:
        return
    temporary = _temporary.pop()
    leftovers = find_leftovers(temporary)
    if leftovers:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(leftovers.report(), red=True)
        else:
            print(leftovers.report(), file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    # either way, leave the machine clean for the next run
    for path in leftovers.sockets:
        subprocess.run(["tmux", "-S", str(path), "kill-server"], capture_output=True, check=False)
        path.unlink(missing_ok=True)
    shutil.rmtree(temporary, ignore_errors=True)


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
async def tool_context(anyio_backend: str, tmux_socket: str) -> AsyncIterator[ToolContext]:
    """Closed afterwards, as the server closes its own: programs ended, runtime directory
    removed."""
    context = ToolContext(Settings(socket_name=tmux_socket, wait_ceiling=STDIO_WAIT_CEILING))
    try:
        yield context
    finally:
        await context.close()


@pytest.fixture
async def memory_client(anyio_backend: str, tool_context: ToolContext) -> AsyncIterator[Client]:
    """schemux in this process, over the SDK's in-memory transport."""
    async with Client(build_server(tool_context, BINDINGS)) as client:
        yield client


@pytest.fixture(params=["perl", "python"])
def program_gate(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The gate programs run under, each in turn (``force_gate``)."""
    return force_gate(request.param, monkeypatch)


@pytest.fixture
async def programs(
    anyio_backend: str, tmux_socket: str
) -> AsyncIterator[tuple[Client, ToolContext]]:
    """schemux in this process with room for many programs, running and ended."""
    limits = ProgramLimits(max_running=400, retained_ended=400)
    context = ToolContext(Settings(socket_name=tmux_socket, program_limits=limits))
    async with Client(build_server(context, BINDINGS)) as client:
        yield client, context
    await context.close()
