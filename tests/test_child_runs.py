"""A child run to its end (schemux.system.child_runs): output collected, stdin given,
and a cancel that returns at once though another process holds the child's pipes (the
tmux server a client hands them to)."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
from collections.abc import Awaitable
from pathlib import Path

import pytest

from schemux.system.child_runs import run_collecting
from tests.support import wait_until

pytestmark = pytest.mark.anyio


async def test_output_errors_status_and_input_come_back() -> None:
    status, out, err = await run_collecting(
        ["sh", "-c", 'cat; echo "$1" >&2; exit 3', "sh", "to errors"], given=b"in\x00put"
    )
    assert (status, out, err) == (3, b"in\x00put", b"to errors\n")


async def test_a_tmux_client_on_a_socket_that_never_answers_is_cancelled() -> None:
    """It hands its stdout to the listener, which never reads it: asyncio's wait would
    wait for that pipe's end for as long as the listener lives."""
    directory = tempfile.mkdtemp(prefix="sxc-", dir="/tmp")  # a socket path has 107 bytes
    path = f"{directory}/silent"
    with socket.socket(socket.AF_UNIX) as silent:
        silent.bind(path)
        silent.listen()
        with pytest.raises(TimeoutError):
            await cancelled_after(
                0.5, run_collecting(["tmux", "-S", path, "display-message", "-p", "x"])
            )
        wait_until(lambda: not _clients_of(path), timeout=2)
    os.unlink(path)
    os.rmdir(directory)


async def cancelled_after(seconds: float, run: Awaitable[object]) -> None:
    """``run``, cancelled once after ``seconds`` (asyncio's one cancel, which a shielded
    wait inside does not see again, unlike an anyio scope's), waited for to its end:
    TimeoutError, or a test timeout where the cancel is not honoured."""
    await asyncio.wait_for(run, seconds)


def _clients_of(path: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if path.encode() in argv.split(b"\x00"):
            found.append(pid)
    return found
