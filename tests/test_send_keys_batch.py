"""send_keys_batch against real tmux, through the in-memory MCP client: operations in
order, each by send_keys's rules (the exact bytes a program reads, key names only
without literal, hostile text stays text), each with its own target; a failure is its
operation's, stopping the batch or not; the batch's timeout; NUL refused before any
operation is sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.support import call, call_error, new_pane, tmux
from tests.test_send_keys import HOSTILE, raw_reader, received

pytestmark = pytest.mark.anyio


async def test_operations_arrive_in_order_byte_for_byte(
    memory_client: Client, tmux_socket: str, tmp_path: Path
) -> None:
    output = tmp_path / "keys"
    pane = raw_reader(tmux_socket, output)
    operations = [
        {"keys": text, "pane_id": pane.pane_id, "enter": False, "literal": True} for text in HOSTILE
    ]
    operations.append({"keys": "Enter", "pane_id": pane.pane_id, "enter": False})
    operations.append({"keys": "Enter", "pane_id": pane.pane_id, "literal": True})
    operations.append({"keys": "x", "pane_id": pane.pane_id, "suppress_history": True})
    result = await call(memory_client, "send_keys_batch", operations=operations)
    assert result["succeeded"] == len(operations)
    assert result["failed"] == 0
    assert result["stopped_at"] is None
    assert [item["index"] for item in result["results"]] == list(range(len(operations)))
    assert all(item["pane_id"] == pane.pane_id for item in result["results"])
    expected = "".join(HOSTILE).encode() + b"\r" + b"Enter\r" + b" x\r"
    assert received(output, 0, len(expected)) == expected


async def test_each_operation_resolves_its_own_target(
    memory_client: Client, tmux_socket: str, tmp_path: Path
) -> None:
    first = raw_reader(tmux_socket, tmp_path / "first")
    second = raw_reader(tmux_socket, tmp_path / "second")
    result = await call(
        memory_client,
        "send_keys_batch",
        operations=[
            {"keys": "to-first", "pane_id": first.pane_id, "enter": False},
            {"keys": "to-second", "session_name": second.session_name, "enter": False},
            {"keys": "-first", "window_id": first.window_id, "enter": False},
        ],
    )
    assert [item["pane_id"] for item in result["results"]] == [
        first.pane_id,
        second.pane_id,
        first.pane_id,
    ]
    assert received(tmp_path / "first", 0, 14) == b"to-first-first"
    assert received(tmp_path / "second", 0, 9) == b"to-second"


async def test_a_failure_is_its_operations_and_stops_the_batch_or_not(
    memory_client: Client, tmux_socket: str, tmp_path: Path
) -> None:
    output = tmp_path / "keys"
    pane = raw_reader(tmux_socket, output)
    operations = [
        {"keys": "a", "pane_id": pane.pane_id, "enter": False},
        {"keys": "b", "pane_id": "%999999", "enter": False},
        {"keys": "c", "pane_id": "%0;kill-server", "enter": False},
        {"keys": "d", "pane_id": pane.pane_id, "enter": False},
    ]
    stopped = await call(memory_client, "send_keys_batch", operations=operations)
    assert stopped["stopped_at"] == 1
    assert (stopped["succeeded"], stopped["failed"]) == (1, 1)
    failure = stopped["results"][1]
    assert failure["success"] is False
    assert failure["pane_id"] is None
    assert "no pane matches pane_id='%999999'" in failure["error"]
    assert len(stopped["results"]) == 2

    kept_on = await call(
        memory_client, "send_keys_batch", operations=operations, on_error="continue"
    )
    assert kept_on["stopped_at"] is None
    assert (kept_on["succeeded"], kept_on["failed"]) == (2, 2)
    assert "is not a tmux pane id" in kept_on["results"][2]["error"]
    assert received(output, 0, 3) == b"aad"
    assert tmux(tmux_socket, "display-message", "-p", "ok").strip() == "ok"


async def test_the_batch_timeout(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    operations = [{"keys": "true", "pane_id": pane.pane_id}] * 200
    result = await call(memory_client, "send_keys_batch", operations=operations, timeout=0.05)
    assert result["stopped_at"] is not None
    assert result["stopped_at"] < 199
    last = result["results"][-1]
    assert last["success"] is False
    assert "the batch's timeout (0.05 s) passed" in last["error"]
    for value in (0, -1):
        error = await call_error(
            memory_client, "send_keys_batch", operations=operations, timeout=value
        )
        assert f"timeout: {value} is less than or equal to the minimum of 0; give more" in error


async def test_nul_is_refused_before_any_operation_is_sent(
    memory_client: Client, tmux_socket: str, tmp_path: Path
) -> None:
    output = tmp_path / "keys"
    pane = raw_reader(tmux_socket, output)
    error = await call_error(
        memory_client,
        "send_keys_batch",
        operations=[
            {"keys": "sent?", "pane_id": pane.pane_id, "enter": False},
            {"keys": "a\x00b", "pane_id": pane.pane_id, "enter": False},
        ],
    )
    assert "operations[1].keys: contains a NUL character" in error
    assert output.read_bytes() == b""


async def test_an_empty_batch(memory_client: Client) -> None:
    result = await call(memory_client, "send_keys_batch", operations=[])
    assert result == {"results": [], "succeeded": 0, "failed": 0, "stopped_at": None}
