"""``schemux serve --http`` started for a test: a free loopback port, the server on it,
and waiting until it listens."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


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


def serve_http(tmux_socket: str, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux_socket,
         "--http", str(port)], stderr=subprocess.DEVNULL,
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
