"""``schemux serve --http`` started for a test: a free loopback port, the server on it,
and waiting until it listens."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.leftovers import run_environment
from tests.support import run_apart


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def serve_http(tmux_socket: str, port: int, *options: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux_socket,
         "--http", str(port), *options], stderr=subprocess.DEVNULL,
    )  # fmt: skip


@contextmanager
def serving_over_http(tmux_socket: str) -> Iterator[str]:
    """schemux serving ``tmux_socket`` over streamable HTTP, listening; its URL. It is
    ended on leaving."""
    port = free_port()
    process = serve_http(tmux_socket, port)
    try:
        deadline = time.monotonic() + 20
        while not listening(port):
            assert process.poll() is None, "schemux serve --http exited"
            assert time.monotonic() < deadline, "schemux serve --http is not listening"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@dataclass(frozen=True)
class PageServer:
    """``schemux serve --http`` with the page: its base URL, the token it requires, its
    audit log's directory (recordings beside it) and its log file."""

    base: str
    token: str
    state: Path
    log: Path

    def mcp_call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """``tool`` called over /mcp with the bearer token; its structured content."""
        return run_apart(self._call, tool, arguments)

    async def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{self.base}/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return dict(result.structured_content)


@contextmanager
def serving_page(tmux_socket: str, directory: Path, token: str) -> Iterator[PageServer]:
    """schemux serving ``tmux_socket`` over HTTP with ``token``, every tool served, its
    audit log, recordings and log file in ``directory``; ended on leaving."""
    port = free_port()
    log = directory / "server.log"
    environment = run_environment(
        SCHEMUX_HTTP_TOKEN=token, XDG_STATE_HOME=str(directory), HOME=os.environ["HOME"]
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux_socket,
         "--tools", "all", "--log-file", str(log), "--log-level", "info",
         "--http", str(port)],
        stderr=subprocess.DEVNULL, env={**os.environ, **environment},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not listening(port):
            assert process.poll() is None, "schemux serve --http exited"
            assert time.monotonic() < deadline, "schemux serve --http is not listening"
            time.sleep(0.2)
        yield PageServer(f"http://127.0.0.1:{port}", token, directory / "schemux", log)
    finally:
        process.terminate()
        process.wait(timeout=10)
