"""capture_pane against real tmux: a capture past its byte ceiling keeps its newest
rows whole after the truncation header (the rest of what it promises is replayed from
schemas/examples/capture_pane.json)."""

from __future__ import annotations

from mcp import Client

from schemux.handlers.capture_pane import MAX_BYTES
from tests.support import call, new_pane, tmux, until


async def test_a_large_capture_is_bounded_in_bytes(client: Client, tmux_socket: str) -> None:
    # tmux's default history of 2,000 rows, each 200 columns: more than MAX_BYTES
    pane = new_pane(tmux_socket, width=250, height=10)
    row = "x" * 200
    command = f"for i in $(seq 1 3000); do echo $i-{row}; done; echo done-''writing"
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, command, "Enter")
    await until(
        lambda: "done-writing" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id),
        timeout=20,
    )
    text = (
        await call(client, "capture_pane", pane_id=pane.pane_id, start=-100000, max_lines=None)
    )["result"]
    header, *kept = text.split("\n")
    assert len(text.encode()) <= MAX_BYTES + len(header) + 1
    everything = tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id, "-S", "-")
    rows = everything.removesuffix("\n").split("\n")
    assert header == f"[... truncated {len(rows) - len(kept)} lines ...]"
    assert kept == rows[len(rows) - len(kept) :]  # the newest rows, each whole
    assert f"3000-{row}" in kept
