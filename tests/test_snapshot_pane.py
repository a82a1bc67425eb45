"""snapshot_pane against real tmux, through the in-memory MCP client: the text and state
of one moment, its tail kept within max_lines, copy mode and its scroll position, a dead
pane, whether schemux runs in the pane; hostile targets refused."""

from __future__ import annotations

import pytest
from mcp import Client

from schemux.domain.tmux_objects import is_caller
from tests.support import call, call_error, new_pane, pane_format, tmux, until, wait_until

pytestmark = pytest.mark.anyio


async def test_text_cursor_size_and_process(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, width=90, height=20)
    await call(memory_client, "run_command", command="printf 'one\\ntwo\\n'", pane_id=pane.pane_id)
    # the call ends with the command; the shell draws its next prompt a moment later, and the
    # snapshot is compared with a capture made after it, so both must see that prompt
    await until(
        lambda: tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id).rstrip().endswith("#")
    )
    snapshot = await call(memory_client, "snapshot_pane", pane_id=pane.pane_id)
    assert snapshot["pane_id"] == pane.pane_id
    assert "one\ntwo" in snapshot["content"]
    assert snapshot["content"] == tmux(
        tmux_socket, "capture-pane", "-p", "-t", pane.pane_id
    ).rstrip("\n")
    assert (snapshot["pane_width"], snapshot["pane_height"]) == (90, 20)
    assert (snapshot["pane_left"], snapshot["pane_top"]) == (0, 0)
    assert (snapshot["pane_right"], snapshot["pane_bottom"]) == (89, 19)
    assert snapshot["pane_at_left"]
    assert snapshot["pane_at_bottom"]
    assert snapshot["cursor_y"] == int(pane_format(pane, "#{cursor_y}"))
    assert snapshot["pane_pid"] == pane_format(pane, "#{pane_pid}")
    assert snapshot["pane_tty"].startswith("/dev/")
    assert snapshot["pane_current_command"] == "bash"
    assert snapshot["pane_dead"] is False
    assert snapshot["alternate_on"] is False
    assert snapshot["pane_in_mode"] is False
    assert snapshot["pane_mode"] is None
    assert snapshot["scroll_position"] is None
    assert snapshot["is_caller"] in (None, False)  # the tests do not run in this pane
    assert snapshot["content_truncated"] is False
    assert snapshot["content_truncated_lines"] == 0


async def test_the_tail_is_kept_within_max_lines(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, height=12)
    await call(memory_client, "send_keys", keys="seq 1 30", pane_id=pane.pane_id)
    wait_until(lambda: "30\nbash-" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id))
    full = await call(memory_client, "snapshot_pane", pane_id=pane.pane_id, max_lines=None)
    rows = full["content"].split("\n")
    tail = await call(memory_client, "snapshot_pane", pane_id=pane.pane_id, max_lines=3)
    assert tail["content"].split("\n") == rows[-3:]
    assert tail["content_truncated"] is True
    assert tail["content_truncated_lines"] == len(rows) - 3
    none = await call(memory_client, "snapshot_pane", pane_id=pane.pane_id, max_lines=0)
    assert none["content"] == ""
    assert none["content_truncated_lines"] == len(rows)
    error = await call_error(memory_client, "snapshot_pane", pane_id=pane.pane_id, max_lines=-1)
    assert "max_lines: -1 is less than the minimum of 0; give 0 or more" in error


async def test_copy_mode_and_its_scroll_position(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, height=10)
    await call(memory_client, "run_command", command="seq 1 40", pane_id=pane.pane_id)
    tmux(tmux_socket, "copy-mode", "-t", pane.pane_id, ";", "send-keys", "-X", "-t",
         pane.pane_id, "-N", "5", "scroll-up")  # fmt: skip
    snapshot = await call(memory_client, "snapshot_pane", pane_id=pane.pane_id)
    assert snapshot["pane_in_mode"] is True
    assert snapshot["pane_mode"] == "copy-mode"
    assert snapshot["scroll_position"] == 5
    assert snapshot["history_size"] > 0


async def test_a_dead_pane(memory_client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command="sh -c 'echo bye; sleep 0.5'", remain_on_exit=True)
    snapshot = await call(memory_client, "snapshot_pane", pane_id=pane.pane_id)
    assert snapshot["pane_dead"] is True
    # tmux 3.5a writes its "Pane is dead" line there, 3.3a does not
    assert snapshot["content"] == tmux(
        tmux_socket, "capture-pane", "-p", "-t", pane.pane_id
    ).rstrip("\n")


def test_is_caller_compares_pane_and_socket(tmp_path: object) -> None:
    socket = "/tmp/tmux-1000/default"
    inside = {"TMUX": f"{socket},123,0", "TMUX_PANE": "%3"}
    assert is_caller({}, "%3", socket, remote=False) is None
    assert is_caller(inside, "%3", socket, remote=False) is True
    assert is_caller(inside, "%4", socket, remote=False) is False
    assert is_caller(inside, "%3", "/tmp/tmux-1000/other", remote=False) is False
    assert is_caller(inside, "%3", socket, remote=True) is False


@pytest.mark.parametrize(
    "target",
    [
        {"pane_id": "%0;kill-server"},
        {"pane_id": "#{pane_id}"},
        {"window_id": "-t"},
        {"session_id": "$0 ; kill-server"},
        {"session_name": "no such session;kill-server"},
    ],
)
async def test_hostile_targets_are_refused(
    memory_client: Client, tmux_socket: str, target: dict[str, str]
) -> None:
    error = await call_error(memory_client, "snapshot_pane", **target)
    assert "pane_id" in error or "window_id" in error or "session" in error
    assert tmux(tmux_socket, "display-message", "-p", "ok").strip() == "ok"
