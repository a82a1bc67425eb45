"""tmux_snapshot against real tmux servers: every pane with its live reference."""

from __future__ import annotations

from typing import Any

import pytest

from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.host_settings import SshTarget
from schemux.serving.server import call_bound_tool
from schemux.serving.state import ServingState
from tests.contexts import Contexts
from tests.support import new_pane, pane_format, private_tmux_server, tmux, wait_until

pytestmark = pytest.mark.anyio


async def snapshot(
    socket_name: str, transport_ssh: SshTarget | None, **arguments: Any
) -> tuple[bool, dict[str, Any]]:
    context = ServingState(Settings(socket_name=socket_name, ssh=transport_ssh))
    try:
        result = await call_bound_tool(BINDINGS["tmux_snapshot"], context, arguments)
    finally:
        await context.close()
    assert result.structured_content is not None, result.content
    return bool(result.is_error), result.structured_content


def panes_of(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        pane["target"]["id"]: pane
        for session in data["sessions"]
        for window in session["windows"]
        for pane in window["panes"]
    }


async def test_a_server_with_sessions_windows_and_panes(transport_ssh: SshTarget | None) -> None:
    with private_tmux_server("snapshot") as socket_name:
        first = new_pane(socket_name, command="exec sleep 300", width=40, height=10)
        split = tmux(
            socket_name, "split-window", "-h", "-d", "-P", "-F", "#{pane_id}", "-t", first.pane_id,
            "exec cat",
        ).strip()  # fmt: skip
        tmux(socket_name, "new-window", "-d", "-t", f"={first.session_name}:", "-n", "second")
        dead = new_pane(socket_name, command="sleep 0.2; exit 3", remain_on_exit=True)
        tmux(socket_name, "copy-mode", "-t", split)
        failed, result = await snapshot(socket_name, transport_ssh)
        assert not failed
        data = result["data"]
        names = [session["name"] for session in data["sessions"]]
        assert sorted(names) == sorted(["keepalive", first.session_name, dead.session_name])
        [session] = [s for s in data["sessions"] if s["target"]["id"] == first.session_id]
        assert session["name"] == first.session_name
        assert [w["name"] for w in session["windows"]] == [
            pane_format(first, "#{window_name}"),
            "second",
        ]
        panes = panes_of(data)
        assert panes[first.pane_id]["target"] == first.reference()
        assert panes[first.pane_id]["current_command"] == "sleep"
        assert (panes[split]["in_mode"], panes[split]["current_command"]) == (True, "cat")
        assert panes[first.pane_id]["width"] + panes[split]["width"] + 1 == 40
        assert panes[dead.pane_id]["dead"] is True
        # tmux 3.3a can mark a pane dead before it knows the exit status (seconds later,
        # in bursts of quick programs): dead_status is then still empty
        assert panes[dead.pane_id]["dead_status"] in (3, None)
        assert panes[first.pane_id]["dead_status"] is None
        assert all(pane["program_id"] is None for pane in panes.values())
        assert data["server"]["pid"] == int(tmux(socket_name, "display-message", "-p", "#{pid}"))


async def test_references_taken_here_read_the_pane(
    tmux_socket: str, transport_ssh: SshTarget | None, make_context: Contexts
) -> None:
    pane = new_pane(tmux_socket, command="echo found-it; exec sleep 300", width=30, height=3)
    wait_until(lambda: "found-it" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id))
    _, result = await snapshot(tmux_socket, transport_ssh)
    reference = panes_of(result["data"])[pane.pane_id]["target"]
    context = make_context(socket_name=tmux_socket, ssh=transport_ssh)
    read = await call_bound_tool(BINDINGS["tmux_capture"], context, {"target": reference})
    assert read.structured_content is not None
    assert read.structured_content["data"]["rows"][0] == "found-it\n"


async def test_no_server_is_an_envelope_that_sent_nothing(
    tmux_socket: str, transport_ssh: SshTarget | None, make_context: Contexts
) -> None:
    # only the configured server is started when it is not running: a named one is not
    context = make_context(socket_name=tmux_socket, ssh=transport_ssh)
    arguments = {"socket_name": "schemux-test-no-server-for-snapshot"}
    called = await call_bound_tool(BINDINGS["tmux_snapshot"], context, arguments)
    assert called.is_error
    result = called.structured_content
    assert result is not None
    assert result["error"]["code"] == "server_unavailable"
    assert result["error"]["delivery"] == "not_sent"
