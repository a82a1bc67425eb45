"""MCP over stdio read and written by the event loop itself (schemux.serving.stdio): each
line a message, in order, a long one whole, a line that is no message an error in its
place, stdin's end the end; fd 0 and fd 1 kept from children while it serves; and no
worker thread carries a line (the SDK's transport took three trips to one a call)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from schemux.serving.stdio import pipe_streams
from tests.test_exit_paths import serve_stdio
from tests.test_stdio_unreadable import reply

PING = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n'


async def test_lines_in_are_messages_and_messages_out_are_lines(anyio_backend: str) -> None:
    wire_in, client_out = os.pipe()
    client_in, wire_out = os.pipe()
    big = "é✓" * 700_000  # 3.5 MB of UTF-8: more than a pipe holds, written whole
    got: list[bytes] = []

    def client_reads() -> None:
        with os.fdopen(client_in, "rb") as lines:
            got.extend(lines)

    reader = threading.Thread(target=client_reads)
    reader.start()
    try:
        with anyio.fail_after(30):
            async with pipe_streams(wire_in, wire_out) as (incoming, outgoing):
                os.write(client_out, PING % 1 + b"{not json\n" + PING[:20])
                first = await incoming.receive()
                assert isinstance(first, SessionMessage)
                assert first.message == types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping")
                assert isinstance(await incoming.receive(), Exception)
                os.write(client_out, PING[20:] % 2)  # the rest of a line cut in two
                second = await incoming.receive()
                assert isinstance(second, SessionMessage)
                assert second.message == types.JSONRPCRequest(jsonrpc="2.0", id=2, method="ping")
                for number, text in ((1, big), (2, "small")):
                    result = {"content": [{"type": "text", "text": text}]}
                    answer = types.JSONRPCResponse(jsonrpc="2.0", id=number, result=result)
                    await outgoing.send(SessionMessage(answer))
                await outgoing.aclose()
                os.close(client_out)  # stdin's end: nothing more comes
                async for item in incoming:
                    raise AssertionError(f"nothing more was sent, got {item!r}")
    finally:
        os.close(wire_out)
        os.close(wire_in)
        reader.join(10)
    assert [json.loads(line)["id"] for line in got] == [1, 2]
    assert json.loads(got[0])["result"]["content"][0]["text"] == big


def test_the_wire_is_no_childs_and_no_thread_carries_a_line(tmux_socket: str) -> None:
    """While it serves, the server's fd 0 (what a child inherits) is the null device and
    its fd 1 its stderr, not the wire; it answers many requests with no worker thread
    started for them."""
    process = serve_stdio(tmux_socket)
    assert process.stdin is not None
    try:
        for number in range(1, 30):
            process.stdin.write(PING % number)
            process.stdin.flush()
            assert reply(process) == {"jsonrpc": "2.0", "id": number, "result": {}}
        # pings need nothing but the loop: its thread is the server's only one (the
        # SDK's transport held two more, one blocked reading stdin)
        assert len(os.listdir(f"/proc/{process.pid}/task")) == 1
        descriptors = [os.readlink(f"/proc/{process.pid}/fd/{fd}") for fd in (0, 1, 2)]
        assert descriptors[0] == "/dev/null"
        assert descriptors[1] == descriptors[2]
    finally:
        process.stdin.close()
        process.wait(timeout=10)
    assert process.returncode == 0


def test_a_terminal_or_a_file_is_served_by_the_sdks_transport(
    tmux_socket: str, tmp_path: Path
) -> None:
    """stdin a file (no pipe for the loop to wait on): the SDK's transport reads it, and
    its end ends the server."""
    requests = tmp_path / "requests"
    initialize = {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}},
    }  # fmt: skip
    requests.write_bytes(json.dumps(initialize).encode() + b"\n")
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux_socket],
            stdin=stdin, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer.get("id") for answer in answers] == [0]
    assert done.returncode == 0


def test_answers_larger_than_the_pipe_all_come(tmux_socket: str) -> None:
    """Ten tools/list answers (far more than a pipe holds) asked at once, and none read
    until all are asked: each waits for room in the pipe, none is lost or cut."""
    process = serve_stdio(tmux_socket)
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        for number in range(100, 110):
            process.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % number)
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(10)]
        assert sorted(answer["id"] for answer in answers) == list(range(100, 110))
        assert all(answer["result"]["tools"] for answer in answers)
        assert sum(len(json.dumps(answer)) for answer in answers) > 1 << 16
    finally:
        process.stdin.close()
        process.wait(timeout=10)
