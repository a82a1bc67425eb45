"""call_read_tools_batch (the inspect family) through the in-memory MCP client, on a tmux
server of this module's own: each operation answers as a call of its own would, only
served read-only tools run (a tool that changes anything, one not served, the batch
itself: refused by name, nothing done), on_error stops or goes on, and the audit log
keeps one record of the batch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from schemux.config import AuditSettings, Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.selection import select
from schemux.serving.state import ServingState
from tests.contexts import Contexts, client_of
from tests.support import call, new_pane, screen

pytestmark = pytest.mark.anyio

BATCH = "call_read_tools_batch"


async def test_each_operation_answers_as_its_own_call_would(
    socket_client: Client, socket: str
) -> None:
    pane = new_pane(socket)
    operations: list[dict[str, Any]] = [
        {"tool": "get_pane_info", "arguments": {"pane_id": pane.pane_id}},
        {"tool": "list_windows", "arguments": {"session_id": pane.session_id}},
        {
            "tool": "display_message",
            "arguments": {"format_string": "#{pane_id}", "pane_id": pane.pane_id},
        },
        {"tool": "snapshot_pane", "arguments": {"pane_id": pane.pane_id}},
    ]
    batch = await call(socket_client, BATCH, operations=operations)
    assert (batch["succeeded"], batch["failed"], batch.get("stopped_at")) == (4, 0, None)
    for index, (operation, result) in enumerate(zip(operations, batch["results"], strict=True)):
        alone = await socket_client.call_tool(operation["tool"], operation["arguments"])
        assert result["index"] == index
        assert result["tool"] == operation["tool"]
        assert result["success"] is True
        assert result["elapsed_seconds"] >= 0
        if operation["tool"] != "snapshot_pane":  # its screen is of its moment
            assert result["structured_content"] == alone.structured_content
            assert result["content"] == [
                block.model_dump(mode="json", by_alias=True, exclude_none=True)
                for block in alone.content
            ]


async def test_only_served_read_only_tools_run(make_context: Contexts, socket: str) -> None:
    """A selection of the inspect family and send_keys: send_keys is served, yet refused;
    capture_pane is read-only, yet not served."""
    pane = new_pane(socket)
    before = screen(pane)
    served = select(BINDINGS, ["inspect", "send_keys"], several_hosts=False)
    context = make_context(socket_name=socket)
    async with client_of(context, served) as client:
        refused = {
            "send_keys": "it is not read-only",
            "run_command": "this server does not serve it (--tools)",
            "capture_pane": "this server does not serve it (--tools)",
            BATCH: "a batch does not call itself",
            "no_such_tool": "this server does not serve it (--tools)",
        }
        operations = [
            {"tool": tool, "arguments": {"keys": "echo typed", "command": "echo ran",
                                         "pane_id": pane.pane_id, "operations": []}}
            for tool in refused
        ]  # fmt: skip
        batch = await call(client, BATCH, operations=operations, on_error="continue")
    assert (batch["succeeded"], batch["failed"]) == (0, len(refused))
    for result, (tool, why) in zip(batch["results"], refused.items(), strict=True):
        assert result["error"] == f"{tool!r} is refused: {why}" + (
            ": a batch calls only tools whose readOnlyHint is true" if tool == "send_keys" else ""
        )
        assert result["structured_content"] is None
    assert screen(pane) == before  # nothing was typed or run


async def test_on_error_stops_or_goes_on(socket_client: Client, socket: str) -> None:
    pane = new_pane(socket)
    operations = [
        {"tool": "get_pane_info", "arguments": {"pane_id": "x"}},  # invalid
        {"tool": "get_pane_info", "arguments": {"pane_id": pane.pane_id}},
        {"tool": "get_pane_info", "arguments": {"pane_id": "%999999"}},  # not there
    ]
    stopped = await call(socket_client, BATCH, operations=operations)
    assert (stopped["succeeded"], stopped["failed"], stopped["stopped_at"]) == (0, 1, 0)
    assert len(stopped["results"]) == 1
    assert stopped["results"][0]["error"].startswith("pane_id 'x' is not a tmux pane id")
    went_on = await call(socket_client, BATCH, operations=operations, on_error="continue")
    assert [r["success"] for r in went_on["results"]] == [False, True, False]
    assert (went_on["succeeded"], went_on["failed"], went_on.get("stopped_at")) == (1, 2, None)
    assert went_on["results"][2]["error"].startswith("no pane matches pane_id='%999999'")
    # failing last: all attempted
    last = await call(socket_client, BATCH, operations=operations[1:])
    assert last.get("stopped_at") is None


async def test_the_audit_keeps_one_record_of_the_batch(socket: str, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    pane = new_pane(socket)
    context = ServingState(Settings(socket_name=socket, audit=AuditSettings(log)))
    operations = [
        {"tool": "get_pane_info", "arguments": {"pane_id": pane.pane_id}},
        {"tool": "get_pane_info", "arguments": {"pane_id": "%999999"}},
    ]
    try:
        async with client_of(context, BINDINGS) as client:
            await call(client, BATCH, operations=operations, on_error="continue")
    finally:
        await context.close()
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["tool"] == BATCH
    assert record["outcome"] == "ok"  # a failed operation is the batch's answer, not its failure
    assert record["arguments"]["operations"] == operations
    assert record["pane"] == pane.pane_id  # the pane its operations resolved
