"""HTTP locked: a real ``schemux serve --http`` and real HTTP clients (httpx2, the SDK's)."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from schemux import __version__
from schemux.errors import ConfigError
from schemux.hosts.local import check_tmux
from schemux.http.config import (
    DEFAULT_HEAD_SECONDS,
    ENV_ALLOWED_HOSTS,
    ENV_BODY_TIMEOUT,
    ENV_HEAD_TIMEOUT,
    ENV_MAX_NEW_CONNECTIONS,
    ENV_MAX_SESSIONS,
    ENV_SESSION_IDLE_TIMEOUT,
    ENV_TOKEN,
    HttpConfig,
    http_config_from,
    is_loopback,
)
from schemux.http.security import presented_token
from schemux.logs import RepeatedLog
from schemux.names import socket_directory
from tests.http_serving import free_port
from tests.support import new_pane

pytestmark = pytest.mark.anyio

TOKEN = "schemux-test-token-0123456789abcdef"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@dataclass
class Served:
    url: str
    port: int
    banner: str
    process: Process


async def read_line(process: Process) -> str:
    assert process.stderr is not None
    line = ""
    async for chunk in TextReceiveStream(process.stderr):
        line += chunk
        if "\n" in line:
            break
    return line.split("\n")[0]


async def serve(tmux_socket: str, *args: str, env: dict[str, str] | None = None) -> Served:
    """``schemux serve --http`` started and listening (it says so on stderr)."""
    port = free_port()
    command = [sys.executable, "-m", "schemux", "serve", "-L", tmux_socket, "--http", str(port)]
    environment = {key: value for key, value in os.environ.items() if key != ENV_TOKEN}
    process = await anyio.open_process([*command, *args], env={**environment, **(env or {})})
    with anyio.fail_after(20):
        banner = await read_line(process)
    return Served(f"http://127.0.0.1:{port}/mcp", port, banner, process)


@pytest.fixture(scope="module")
async def locked(anyio_backend: str, tmux_socket: str) -> AsyncIterator[Served]:
    served = await serve(tmux_socket, "--allow-host", "agents.example", env={ENV_TOKEN: TOKEN})
    try:
        yield served
    finally:
        served.process.terminate()
        await served.process.wait()


@pytest.fixture(scope="module")
async def open_loopback(anyio_backend: str, tmux_socket: str) -> AsyncIterator[Served]:
    served = await serve(tmux_socket)
    try:
        yield served
    finally:
        served.process.terminate()
        await served.process.wait()


async def post(
    url: str, headers: dict[str, str] | None = None, *, method: str = "POST"
) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as http:
        return await http.request(
            method, url, json=INITIALIZE, headers={**MCP_HEADERS, **(headers or {})}
        )


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_the_start_line_names_the_url_and_the_token(
    locked: Served, open_loopback: Served, tmux_socket: str
) -> None:
    server = f"{check_tmux()}, server -L {tmux_socket} ({socket_directory()}/{tmux_socket})"
    assert locked.banner == (
        f"schemux {__version__}: serving MCP at {locked.url} (bearer token required); {server}"
    )
    assert open_loopback.banner == (
        f"schemux {__version__}: serving MCP at {open_loopback.url} (no token required: any "
        f"local user can call its tools; set {ENV_TOKEN} or --token-file to require one); "
        f"{server}"
    )


async def test_no_token_is_401_with_a_challenge(locked: Served) -> None:
    response = await post(locked.url)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="schemux"'
    assert response.json()["error"] == "unauthorized"


@pytest.mark.parametrize(
    "authorization",
    [
        f"Bearer {TOKEN[:-1]}",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN.upper()}",
        "Bearer",
        f"Basic {TOKEN}",
        TOKEN,
    ],
)
async def test_a_wrong_token_is_401(locked: Served, authorization: str) -> None:
    response = await post(locked.url, {"Authorization": authorization})
    assert response.status_code == 401
    if authorization.startswith("Bearer "):
        assert response.headers["WWW-Authenticate"] == (
            'Bearer realm="schemux", error="invalid_token"'
        )
        assert response.json()["error"] == "invalid_token"


@pytest.mark.parametrize(("method", "path"), [("GET", "/mcp"), ("DELETE", "/mcp"), ("GET", "/")])
async def test_every_request_needs_the_token(locked: Served, method: str, path: str) -> None:
    url = f"http://127.0.0.1:{locked.port}{path}"
    assert (await post(url, method=method)).status_code == 401
    assert (await post(url, bearer(TOKEN), method=method)).status_code != 401


async def test_the_sdk_client_calls_tools_with_the_token(locked: Served, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    async with (
        httpx2.AsyncClient(headers=bearer(TOKEN), timeout=30) as http,
        Client(streamable_http_client(locked.url, http_client=http)) as client,
    ):
        result = await client.call_tool(
            "run_command", {"command": "echo locked-in", "pane_id": pane.pane_id}
        )
    assert result.structured_content is not None
    assert result.structured_content["output"] == ["locked-in"]


async def test_the_sdk_client_with_a_wrong_token_gets_nothing(locked: Served) -> None:
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    hooks = {"response": [record]}
    async with httpx2.AsyncClient(headers=bearer("x" * 40), timeout=10, event_hooks=hooks) as http:
        with pytest.raises(Exception):  # noqa: PT011,B017 - the SDK's own error, any shape
            async with Client(streamable_http_client(locked.url, http_client=http)) as client:
                await client.list_tools()
    assert statuses
    assert set(statuses) == {401}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 421),
        ({"Host": "127.0.0.1.evil.example"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://127.0.0.1.evil.example"}, 403),
        ({"Host": "agents.example"}, 200),
        ({"Host": "agents.example:443", "Origin": "https://agents.example"}, 200),
        ({"Origin": "http://localhost:6274"}, 200),
    ],
)
async def test_host_and_origin_are_checked_behind_the_token(
    locked: Served, headers: dict[str, str], status: int
) -> None:
    response = await post(locked.url, {**bearer(TOKEN), **headers})
    assert response.status_code == status, response.text


@pytest.mark.parametrize(
    ("headers", "status"),
    [({"Host": "evil.example"}, 421), ({"Origin": "http://evil.example"}, 403), ({}, 200)],
)
async def test_host_and_origin_are_checked_on_loopback_without_a_token(
    open_loopback: Served, headers: dict[str, str], status: int
) -> None:
    assert (await post(open_loopback.url, headers)).status_code == status


def schemux(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != ENV_TOKEN}
    return subprocess.run(
        [sys.executable, "-m", "schemux", *args],
        capture_output=True,
        text=True,
        env={**environment, **(env or {})},
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "[::]"])
def test_a_network_bind_without_a_token_refuses_to_start(host: str) -> None:
    done = schemux("serve", "--http", f"{host}:{free_port()}")
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"schemux: refusing to serve HTTP on {host.strip('[]')} without a token: anyone who "
        "can reach the port could run commands as you"
    )
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("token", "mode", "complaint"),
    [
        ("short", 0o600, "the token is too short"),
        ("has a space in it, long enough", 0o600, "printable ASCII without spaces"),
        (TOKEN, 0o644, "group or others have access to it (mode 644); chmod 600"),
        (TOKEN, 0o620, "group or others have access to it (mode 620); chmod 600"),
    ],
)
def test_a_weak_or_exposed_token_refuses_to_start(
    tmp_path: Path, token: str, mode: int, complaint: str
) -> None:
    path = tmp_path / "token"
    path.write_text(token + "\n")
    path.chmod(mode)
    done = schemux("serve", "--http", str(free_port()), "--token-file", str(path))
    assert done.returncode == 2
    assert complaint in done.stderr
    assert TOKEN not in done.stderr


def test_http_options_need_http() -> None:
    done = schemux("serve", "--allow-host", "agents.example")
    assert done.returncode == 2
    assert done.stderr == "schemux: --token-file and --allow-host apply to --http only\n"


def test_a_port_in_use_is_one_line(locked: Served) -> None:
    done = schemux("serve", "--http", str(locked.port), env={ENV_TOKEN: TOKEN})
    assert done.returncode == 2
    assert done.stderr == f"schemux: cannot listen on {locked.url}: Address already in use\n"


async def test_a_token_file_locks_it(tmux_socket: str, tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    served = await serve(tmux_socket, "--token-file", str(path))
    try:
        assert "(bearer token required);" in served.banner
        assert (await post(served.url)).status_code == 401
        assert (await post(served.url, bearer(TOKEN))).status_code == 200
    finally:
        served.process.terminate()
        await served.process.wait()


# the pure pieces


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("BEARER abc", "abc"),
        ("Bearer", None),
        ("Bearer   ", None),
        ("Basic abc", None),
        ("abc", None),
    ],
)
def test_presented_token(header: str | None, token: str | None) -> None:
    assert presented_token(header) == token


def test_allowed_hosts_and_origins() -> None:
    config = http_config_from(
        {ENV_TOKEN: TOKEN},
        "10.1.2.3:8765",
        allowed_hosts=["agents.example", "proxy.example:443", "::1", "[fe80::1]:80"],
    )
    assert config.host_patterns() == [
        "127.0.0.1:*",
        "localhost:*",
        "[::1]:*",
        "10.1.2.3:8765",
        "agents.example",
        "agents.example:*",
        "proxy.example:443",
        "[::1]",
        "[fe80::1]:80",
    ]
    assert "https://agents.example:*" in config.origin_patterns()
    assert "http://proxy.example:443" in config.origin_patterns()
    wildcard = http_config_from({ENV_TOKEN: TOKEN}, "0.0.0.0:8765")
    assert wildcard.host_patterns() == ["127.0.0.1:*", "localhost:*", "[::1]:*"]


def test_settings_from_the_environment() -> None:
    env = {
        ENV_ALLOWED_HOSTS: " a.example, b.example:99 ,",
        ENV_MAX_SESSIONS: "5",
        ENV_SESSION_IDLE_TIMEOUT: "90.5",
    }
    config = http_config_from(env, "8765")
    assert config == HttpConfig(
        host="127.0.0.1",
        port=8765,
        token=None,
        allowed_hosts=("a.example", "b.example:99"),
        max_sessions=5,
        session_idle_timeout=90.5,
    )
    # an option replaces the environment's list
    assert http_config_from(env, "8765", allowed_hosts=["c.example"]).allowed_hosts == (
        "c.example",
    )
    defaults = http_config_from({}, "8765")
    assert (defaults.max_sessions, defaults.session_idle_timeout) == (64, 1800.0)


@pytest.mark.parametrize(
    ("env", "allowed", "complaint"),
    [
        ({ENV_MAX_SESSIONS: "0"}, [], "SCHEMUX_HTTP_MAX_SESSIONS='0' is not a positive"),
        ({ENV_SESSION_IDLE_TIMEOUT: "inf"}, [], "is not a positive number of seconds"),
        ({ENV_SESSION_IDLE_TIMEOUT: "-1"}, [], "is not a positive number of seconds"),
        ({}, ["*"], "--allow-host '*': expected a host name"),
        ({}, ["http://a.example"], "expected a host name"),
        ({}, ["a.example:http"], "expected a host name"),
        ({}, ["a b"], "expected a host name"),
        ({}, [""], "expected a host name"),
        ({}, ["[fe80::1"], "expected a host name"),
    ],
)
def test_bad_http_settings(env: dict[str, str], allowed: list[str], complaint: str) -> None:
    with pytest.raises(ConfigError) as caught:
        http_config_from(env, "8765", allowed_hosts=allowed)
    assert complaint in str(caught.value)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


async def test_the_session_cap_and_the_idle_timeout(tmux_socket: str) -> None:
    env = {ENV_TOKEN: TOKEN, ENV_MAX_SESSIONS: "1", ENV_SESSION_IDLE_TIMEOUT: "1"}
    served = await serve(tmux_socket, env=env)
    try:
        first = await post(served.url, bearer(TOKEN))
        assert first.status_code == 200
        session = {**bearer(TOKEN), "mcp-session-id": first.headers["mcp-session-id"]}
        assert (await post(served.url, bearer(TOKEN))).status_code == 503  # the cap
        await anyio.sleep(2)  # idle past the timeout: the session is gone, room is free
        assert (await post(served.url, session, method="DELETE")).status_code == 404
        assert (await post(served.url, bearer(TOKEN))).status_code == 200
    finally:
        served.process.terminate()
        await served.process.wait()


def raw_connection(port: int, sent: bytes = b"") -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port), timeout=5)
    connection.sendall(sent)
    return connection


def read_until_closed(connection: socket.socket, within: float) -> bytes | None:
    """What the server wrote before it closed the connection; None when it kept it open
    for ``within`` seconds."""
    received = b""
    deadline = time.monotonic() + within
    with connection:
        while (left := deadline - time.monotonic()) > 0:
            connection.settimeout(left)
            try:
                chunk = connection.recv(65536)
            except TimeoutError:
                return None
            except ConnectionResetError:
                return received
            if not chunk:
                return received
            received += chunk
    return None


async def rest_of_stderr(served: Served) -> str:
    """What the server wrote on stderr after its start line, to its end."""
    assert served.process.stderr is not None
    written = b""
    with contextlib.suppress(anyio.EndOfStream):
        while True:
            written += await served.process.stderr.receive()
    return written.decode()


def request_head(*lines: str) -> bytes:
    return "".join(f"{line}\r\n" for line in lines).encode()


async def test_slow_requests_are_closed_before_authentication(tmux_socket: str) -> None:
    """A head sent a byte at a time, a body that never ends, a connection that sends
    nothing: each is closed once its time is up (they stayed open 50 s and more): after
    it, and well before the default times (DEFAULT_HEAD_SECONDS, the least of them), so
    by the times set here."""
    time_up = 0.5
    env = {ENV_TOKEN: TOKEN, ENV_HEAD_TIMEOUT: str(time_up), ENV_BODY_TIMEOUT: str(time_up)}
    served = await serve(tmux_socket, env=env)
    try:
        # serving (the start line comes once it listens, before the server serves)
        assert (await post(served.url, bearer(TOKEN))).status_code == 200
        partial_head = request_head("POST /mcp HTTP/1.1", "Host: 127.0.0.1")
        partial_body = request_head(
            "POST /mcp HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Bearer {TOKEN}",
            "Content-Type: application/json", "Accept: application/json, text/event-stream",
            "Content-Length: 1000", "",
        ) + b'{"jsonrpc": '  # fmt: skip
        began = time.monotonic()
        connections = [
            raw_connection(served.port, sent) for sent in (partial_head, partial_body, b"")
        ] + [raw_connection(served.port, partial_head) for _ in range(20)]
        within = DEFAULT_HEAD_SECONDS / 2
        for connection in connections:
            assert await anyio.to_thread.run_sync(read_until_closed, connection, within) == b""
        assert time_up <= time.monotonic() - began < within
        assert (await post(served.url, bearer(TOKEN))).status_code == 200  # still serving
    finally:
        served.process.terminate()
        await served.process.wait()


async def test_connections_without_a_request_are_bounded(tmux_socket: str) -> None:
    """Beyond the bound the oldest of them is closed at once, long before its head time
    is up, and a client that sends its request at once is served."""
    env = {ENV_TOKEN: TOKEN, ENV_MAX_NEW_CONNECTIONS: "4"}
    served = await serve(tmux_socket, env=env)
    try:
        # serving (the start line comes once it listens, before the server serves)
        assert (await post(served.url, bearer(TOKEN))).status_code == 200
        silent = [raw_connection(served.port) for _ in range(4)]
        await anyio.sleep(0.2)  # accepted, oldest first
        newer = raw_connection(served.port)
        assert await anyio.to_thread.run_sync(read_until_closed, silent[0], 2.0) == b""
        assert (await post(served.url, bearer(TOKEN))).status_code == 200
        for connection in [*silent[1:], newer]:
            connection.close()
    finally:
        served.process.terminate()
        await served.process.wait()


async def test_a_flood_of_connections_is_one_warning_and_a_count(tmux_socket: str) -> None:
    """Each close of the oldest connection was a warning of its own (an 8 s flood wrote
    2,351 lines): the first is logged, the others counted, the count logged at the end."""
    served = await serve(tmux_socket, env={ENV_TOKEN: TOKEN, ENV_MAX_NEW_CONNECTIONS: "2"})
    try:
        # serving (the start line comes once it listens, before the server serves)
        assert (await post(served.url, bearer(TOKEN))).status_code == 200
        flood = [raw_connection(served.port) for _ in range(32)]
        for connection in flood[:30]:  # each newer one closed the oldest
            assert await anyio.to_thread.run_sync(read_until_closed, connection, 5.0) == b""
        for connection in flood[30:]:
            connection.close()
    finally:
        served.process.terminate()
        await served.process.wait()
    closes = [text for text in (await rest_of_stderr(served)).splitlines() if "oldest" in text]
    assert closes[0] == (
        "schemux: WARNING HTTP: closed the oldest of 2 connections that have sent no whole "
        "request yet, the most this server allows"
    )
    counts = [re.search(r" \((\d+) more times? within 10 s\)$", text) for text in closes[1:]]
    assert None not in counts, closes  # a summary every 10 s at most, and one at the end
    assert 1 + sum(int(found.group(1)) for found in counts if found) == 30
    assert len(closes) <= 3


async def test_a_repeated_message_is_logged_once_then_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    summarized = anyio.Event()

    class Summaries(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "more times" in record.getMessage():
                summarized.set()

    logger = logging.getLogger("schemux.test-repeated")
    logger.addHandler(Summaries())
    repeated = RepeatedLog(logger, seconds=0.05)
    with caplog.at_level(logging.INFO, logger=logger.name):
        for _ in range(100):
            repeated.log(logging.WARNING, "flood")
        repeated.log(logging.INFO, "another")
        repeated.log(logging.DEBUG, "below the level")
        assert caplog.messages == ["flood", "another"]
        with anyio.fail_after(5):
            await summarized.wait()  # the period's end, not the next message, logs it
        assert caplog.messages == ["flood", "another", "flood (99 more times within 0.05 s)"]
        repeated.close()
    assert len(caplog.messages) == 3  # nothing was left to count
    assert [record.levelno for record in caplog.records] == [30, 20, 30]


async def test_a_request_without_the_token_ends_its_connection(locked: Served) -> None:
    connection = raw_connection(
        locked.port, request_head("GET /mcp HTTP/1.1", "Host: 127.0.0.1", "")
    )
    answer = await anyio.to_thread.run_sync(read_until_closed, connection, 2.0)
    assert answer is not None
    assert answer.startswith(b"HTTP/1.1 401 ")
    assert b"\r\nconnection: close\r\n" in answer.lower()
