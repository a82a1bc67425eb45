"""Progress notifications while a call waits, counted by real MCP clients' callbacks."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from schemux.calls import progress
from schemux.programs.store import STOP_GRACE_SECONDS
from tests.conftest import stdio_parameters
from tests.support import call, new_pane

pytestmark = pytest.mark.anyio

WAIT = 6.0  # seconds each waiting call below waits


@dataclass
class Progress:
    """What one call's progress callback received, with arrival times from the call's start."""

    started: float = field(default_factory=time.monotonic)
    received: list[tuple[float, float, float | None, str | None]] = field(default_factory=list)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.received.append((time.monotonic() - self.started, progress, total, message))

    def check(self, *, total: float, message: str, count: range) -> None:
        assert len(self.received) in count, self.received
        arrivals = [arrival for arrival, *_ in self.received]
        values = [value for _, value, _, _ in self.received]
        assert arrivals[0] < 1.0, "the first one comes at once"
        assert all(
            2.0 <= later - earlier <= 5.0 for earlier, later in itertools.pairwise(arrivals)
        ), arrivals
        assert values == sorted(set(values)), "progress only grows"
        for _, value, got_total, got_message in self.received:
            # the total counts from the call's start: the wait's own, plus what the call
            # did before it (a tenth of a second or more on a loaded machine)
            assert got_total is not None
            assert total <= got_total <= total + 1.0
            assert value <= got_total
            assert got_message is not None
            assert got_message.startswith(f"{message}: ")
            assert got_message.endswith(f" s of at most {got_total:.0f} s")


@pytest.mark.long
async def test_every_wait_reports_progress(memory_client: Client, tmux_socket: str) -> None:
    """run_command, run_shell_command, run_program, read_program, wait_for_text and
    stop_program's grace period, each waiting at once on one client."""
    panes = [new_pane(tmux_socket), new_pane(tmux_socket), new_pane(tmux_socket)]
    quiet = await call(memory_client, "start_program", argv=["sleep", "30"])
    stubborn = await call(
        memory_client, "start_program", argv=["sh", "-c", "trap '' TERM HUP; sleep 30"]
    )
    await anyio.sleep(0.3)  # the trap is set
    calls: dict[str, tuple[dict[str, Any], Progress]] = {
        "run_command": ({"command": f"sleep {WAIT:.0f}", "pane_id": panes[0].pane_id}, Progress()),
        "run_shell_command": (
            {"command": f"sleep {WAIT:.0f}", "paneId": panes[1].pane_id, "timeoutMs": 20_000},
            Progress(),
        ),
        "run_program": ({"argv": ["sleep", f"{WAIT:.0f}"], "timeoutMs": 20_000}, Progress()),
        "read_program": ({"programId": quiet["programId"], "timeoutMs": 6_000}, Progress()),
        "stop_program": ({"programId": stubborn["programId"]}, Progress()),
        "wait_for_text": (
            {"pane_id": panes[2].pane_id, "patterns": ["never printed"], "timeout": WAIT},
            Progress(),
        ),
    }
    results: dict[str, types.CallToolResult] = {}

    async def run(tool: str) -> None:
        arguments, callback = calls[tool]
        callback.started = time.monotonic()
        results[tool] = await memory_client.call_tool(tool, arguments, progress_callback=callback)

    try:
        async with anyio.create_task_group() as group:
            for tool in calls:
                group.start_soon(run, tool)
    finally:
        await memory_client.call_tool("stop_program", {"programId": quiet["programId"]})
    assert not any(result.is_error for result in results.values()), results
    finished = "waiting for the command to finish"
    calls["run_command"][1].check(total=30, message=finished, count=range(2, 4))
    calls["run_shell_command"][1].check(total=20, message=finished, count=range(2, 4))
    program = "waiting for the program to end"
    calls["run_program"][1].check(total=20, message=program, count=range(2, 4))
    output = "waiting for the program's output"
    calls["read_program"][1].check(total=WAIT, message=output, count=range(2, 4))
    stopping = "waiting for the program to stop"
    calls["stop_program"][1].check(total=STOP_GRACE_SECONDS, message=stopping, count=range(1, 2))
    text = "waiting for the text"
    calls["wait_for_text"][1].check(total=WAIT, message=text, count=range(2, 4))


async def test_none_without_a_token(tmux_socket: str) -> None:
    """Over stdio, where every notification the server sends reaches the message handler."""
    notifications: list[Any] = []

    async def record(message: Any) -> None:
        if isinstance(message, types.ProgressNotification):
            notifications.append(message)

    parameters = stdio_parameters("--socket-name", tmux_socket)
    async with Client(parameters, message_handler=record) as client:
        # a ticker sends its first at once (the call with a token below: before 1 s)
        await call(client, "run_program", argv=["sleep", "1"])
        assert notifications == []
        # the same call with a token: the handler above does see them
        callback = Progress()
        await client.call_tool("run_program", {"argv": ["sleep", "4"]}, progress_callback=callback)
    callback.check(total=30, message="waiting for the program to end", count=range(2, 3))
    assert len(notifications) == 2


async def test_a_call_that_never_waits_starts_no_ticker() -> None:
    sent: list[float] = []

    async def send(value: float, total: float | None, message: str | None) -> None:
        sent.append(value)

    async with progress.reporting(send):
        await asyncio.sleep(0.05)
    assert sent == []
    progress.Progress().expect(5, "nobody to tell")  # nothing to report to, and no error


async def test_the_ticker_ends_with_the_call_even_when_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress, "TICK_SECONDS", 0.02)
    sent: list[float] = []

    async def send(value: float, total: float | None, message: str | None) -> None:
        sent.append(value)

    with anyio.move_on_after(0.2):
        async with progress.reporting(send) as reporting:
            reporting.expect(10, "waiting")
            await anyio.sleep(5)
    count = len(sent)
    assert count >= 3
    await anyio.sleep(0.1)
    assert len(sent) == count, "nothing after the call ended"
