"""MCP's stdio served from the event loop (``schemux.serving.stdio``): request lines read as
the SDK's text wrapper reads them, over pipes and socket pairs; answers larger than a
pipe holds written whole; the descriptor a client shares never made non-blocking; a
regular file left to the SDK's transport; and ``schemux serve`` answering over stdio with
no hand-over to a thread."""

from __future__ import annotations

import fcntl
import io
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from schemux.serving.stdio import PIPE_BYTES, stdio_streams
from tests.leftovers import run_environment

pytestmark = pytest.mark.anyio

# bytes as a client may send them: split lines, CRLF and lone CR, bytes that are no
# UTF-8, blank lines, a last line with no line end, hostile text
WIRE_BYTES = [
    b'{"a": 1}\n',
    b'{"b":\r\n{"c": 2}\r',
    b"\xff\xfe bad \xc3\n\n",
    b"\xe3\x81\x82 split \xe3\x81",
    b'\x82 $(touch /tmp/x) `id` "]\n',
    b"last line, no end",
]


def sdk_lines(data: bytes) -> list[str]:
    """What the SDK's transport reads of ``data``: a text wrapper's lines."""
    return list(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace"))


Pair = Callable[[], tuple[int, int]]


def pipe_pair() -> tuple[int, int]:
    return os.pipe()


def socket_pair() -> tuple[int, int]:
    ours, theirs = socket.socketpair()
    return ours.detach(), theirs.detach()


PAIRS = [pytest.param(pipe_pair, id="pipe"), pytest.param(socket_pair, id="socketpair")]


def blocking(fd: int) -> bool:
    return not fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK


@pytest.mark.parametrize("pair", PAIRS)
async def test_lines_are_read_as_the_sdk_reads_them(pair: Pair) -> None:
    read_end, client_end = pair()
    _, answers = os.pipe()
    try:
        async with stdio_streams(read_end, answers, divert=False) as (stdin, _):
            assert stdin is not None
            lines: list[str] = []

            async def reading() -> None:
                async for line in stdin:
                    lines.append(line)

            async with anyio.create_task_group() as group:
                group.start_soon(reading)
                for chunk in WIRE_BYTES:
                    await anyio.wait_all_tasks_blocked()  # each chunk read apart
                    os.write(client_end, chunk)
                os.close(client_end)
        assert lines == sdk_lines(b"".join(WIRE_BYTES))
        assert blocking(read_end)  # the client's (or a shell's) descriptor is unchanged
    finally:
        for fd in (read_end, answers):
            os.close(fd)


@pytest.mark.parametrize("pair", PAIRS)
async def test_an_answer_larger_than_the_wire_holds_is_written_whole(pair: Pair) -> None:
    requests, _ = os.pipe()
    client_end, write_end = pair()
    answer = json.dumps({"rows": ["x" * 100] * 20_000}) + "\n"  # about 2 MB
    received = bytearray()

    def client() -> None:
        while chunk := os.read(client_end, 65536):
            received.extend(chunk)

    reader = threading.Thread(target=client)
    try:
        async with stdio_streams(requests, write_end, divert=False) as (_, stdout):
            assert stdout is not None
            reader.start()
            await stdout.write(answer)
            await stdout.flush()
        os.close(write_end)
        reader.join()
        assert received.decode() == answer
    finally:
        os.close(requests)
        os.close(client_end)


async def test_a_pipes_answers_are_written_without_waiting_for_the_client() -> None:
    """The answers' pipe is made to hold a megabyte (where the system allows it), so
    that an answer (a read_program page is about 50 KB) is written whole at once and the
    next ones do not queue behind a client that reads a little later (failed before:
    the pipe held 64 KiB, and the flush waited for the client to read)."""
    if int(Path("/proc/sys/fs/pipe-max-size").read_text()) < PIPE_BYTES:
        pytest.skip("the system's pipes hold less than a megabyte")
    requests, _ = os.pipe()
    client_end, write_end = os.pipe()
    answers = [json.dumps({"text": "y" * 50_000, "id": number}) + "\n" for number in range(15)]
    try:
        async with stdio_streams(requests, write_end, divert=False) as (_, stdout):
            assert stdout is not None
            with anyio.fail_after(5):  # no client reads meanwhile
                for answer in answers:
                    await stdout.write(answer)
                    await stdout.flush()
        assert fcntl.fcntl(client_end, fcntl.F_GETPIPE_SZ) == PIPE_BYTES
        received = bytearray()
        while len(received) < len("".join(answers)):
            received.extend(os.read(client_end, PIPE_BYTES))
        assert received.decode() == "".join(answers)
    finally:
        for fd in (requests, client_end, write_end):
            os.close(fd)


async def test_a_regular_file_is_left_to_the_sdks_transport(tmp_path: Path) -> None:
    requests = tmp_path / "requests"
    requests.write_text('{"a": 1}\n')
    fd = os.open(requests, os.O_RDONLY)
    read_end, write_end = os.pipe()
    try:
        async with stdio_streams(fd, write_end, divert=False) as streams:
            assert streams == (None, None)
    finally:
        for each in (fd, read_end, write_end):
            os.close(each)


# run as `python -c`: serve one ServingState over its own stdin and stdout, counting the
# calls handed to a worker thread, then say on stderr how many there were and where fd 0
# and fd 1 pointed while it served
SERVE_COUNTING = """
import importlib, os, sys, anyio, anyio.to_thread
hops = []
real = anyio.to_thread.run_sync
async def counted(func, *args, **kwargs):
    hops.append(getattr(func, "__qualname__", repr(func)))
    return await real(func, *args, **kwargs)
anyio.to_thread.run_sync = counted
main = importlib.import_module("schemux.cli.main")
from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.state import ServingState
import schemux.serving.unreadable as unreadable
answering = unreadable.answering_unreadable
seen = {}
def noting(*args):
    seen["fds"] = [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
    return answering(*args)
unreadable.answering_unreadable = noting
anyio.run(main.serve_stdio, ServingState(Settings(socket_name=sys.argv[1])), BINDINGS)
print(len([hop for hop in hops if "readline" in hop or "write" in hop or "flush" in hop]),
      *seen["fds"], file=sys.stderr)
"""


def test_schemux_serve_answers_over_stdio_with_no_thread(tmux_socket: str) -> None:
    """Each request read and each answer written by the loop (failed before: the SDK's
    transport handed every read, write and flush to a worker thread); fd 0 reads the
    null device and fd 1 writes to stderr while serving."""
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_COUNTING, tmux_socket],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=run_environment(),
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        # the answers read before stdin's end, which ends the server and its calls
        answers = [json.loads(process.stdout.readline()) for _ in range(3)]
        process.stdin.close()
        errors = process.stderr.read()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, errors.decode()[-2000:]
    assert [answer["id"] for answer in answers] == [0, 1, 2]
    assert answers[1]["result"]["tools"]
    hops, stdin, stdout, stderr = errors.decode().splitlines()[-1].split(" ")
    assert hops == "0"
    assert stdin == os.devnull
    assert stdout == stderr
