"""The inspect tools (the family served on request) against real tmux, through the
in-memory MCP client, on a tmux server of this module's own: what they list is what tmux
says, hostile names stay names (compared by schemux, or given to tmux as one argument)
and nothing in them runs, no target means the agent's pane, socket_name reads another
server, host another host, and bad input is refused before any tmux work."""

from __future__ import annotations

import functools
import os
import shutil
import socket as sockets
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from schemux.config import Settings
from schemux.domain import server_scan
from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import FAMILIES
from schemux.host_settings import ExecTarget, FleetSettings, NamedHost
from schemux.names import OWNED_SESSION
from schemux.serving.selection import select
from schemux.serving.server import build_server
from schemux.serving.state import ServingState
from schemux.tmux.agent_session import AGENT_MARK
from schemux.tmux.owned_session import CONTROL_MARK
from tests.contexts import Contexts, client_of
from tests.support import (
    call,
    call_error,
    new_pane,
    remove_server,
    screen,
    tagged_socket_name,
    tmux,
    until,
)

pytestmark = pytest.mark.anyio

INSPECT = FAMILIES["inspect"]


def hostile_names(marker: Path) -> list[str]:
    return [
        'it\'s "quoted"',
        "a;b ; kill-server",
        "#{pane_id}",
        f"$(touch {marker})",
        f"#(touch {marker})",
        "-t",
        "--",
        "`id` x",
    ]


def made_session(socket: str, name: str, window: str = "w") -> str:
    """A session named ``name`` (tmux expands a format in -s and -n: ``##`` is a ``#``),
    its window named ``window``; its id."""
    return tmux(
        socket, "new-session", "-d", "-P", "-F", "#{session_id}", "-s", name.replace("#", "##"),
        "-n", window.replace("#", "##"), "-x", "80", "-y", "24", "cat",
    ).strip()  # fmt: skip


def shows(socket: str, pane_id: str, text: str) -> bool:
    return text in tmux(socket, "capture-pane", "-p", "-t", pane_id)


def kill_session(socket: str, session_id: str) -> None:
    tmux(socket, "kill-session", "-t", session_id, check=False)


async def test_the_default_selection_serves_none_of_them() -> None:
    assert INSPECT
    assert set(INSPECT) <= set(BINDINGS)
    assert not set(INSPECT) & set(select(BINDINGS, [], several_hosts=False))
    assert set(INSPECT) <= set(select(BINDINGS, ["inspect"], several_hosts=False))


async def test_what_they_list_is_what_tmux_lists(socket_client: Client, socket: str) -> None:
    pane = new_pane(socket, width=90, height=20)
    # named: the window of the split would take its active pane's command's name (cat)
    # when tmux's automatic rename comes round, whenever that is
    tmux(socket, "rename-window", "-t", pane.window_id, "first")
    tmux(socket, "split-window", "-h", "-t", pane.pane_id, "cat")
    tmux(socket, "new-window", "-d", "-t", pane.session_id, "-n", "second", "cat")
    panes = tmux(
        socket, "list-panes", "-s", "-t", pane.session_id, "-F",
        "#{pane_id} #{window_id} #{pane_left} #{pane_right} #{pane_at_left} #{pane_active}",
    ).split("\n")[:-1]  # fmt: skip
    listed = (await call(socket_client, "list_panes", session_id=pane.session_id))["result"]
    assert [
        f"{p['pane_id']} {p['window_id']} {p['pane_left']} {p['pane_right']} "
        f"{int(p['pane_at_left'])} {p['pane_active']}"
        for p in listed
    ] == panes
    windows = (await call(socket_client, "list_windows", session_id=pane.session_id))["result"]
    assert [(w["window_name"], w["pane_count"], w["window_active"]) for w in windows] == [
        ("first", 2, "1"),
        ("second", 1, "0"),
    ]
    assert (
        windows[0]["window_layout"]
        == tmux(socket, "display-message", "-p", "-t", pane.window_id, "#{window_layout}").strip()
    )
    (session,) = (
        await call(socket_client, "list_sessions", filters={"session_id": pane.session_id})
    )["result"]
    assert session["window_count"] == 2
    assert session["active_pane_id"] == windows[0]["active_pane_id"]
    # schemux's control window, and its session holding only it, are never listed
    control = tmux(
        socket,
        "list-windows",
        "-t",
        f"={OWNED_SESSION}",
        "-F",
        f"#{{window_id}} #{{{CONTROL_MARK}}}",
    )
    control_window = next(line.split()[0] for line in control.splitlines() if line.endswith(" 1"))
    everything = (await call(socket_client, "list_windows"))["result"]
    assert control_window not in {window["window_id"] for window in everything}
    sessions = (await call(socket_client, "list_sessions"))["result"]
    assert OWNED_SESSION not in {s["session_name"] for s in sessions}
    info = await call(socket_client, "get_server_info")
    assert info["session_count"] == len(sessions)
    assert info["socket_name"] == socket
    assert info["version"] == tmux(socket, "display-message", "-p", "#{version}").strip()


async def test_hostile_names_are_found_by_comparing_and_nothing_in_them_runs(
    socket_client: Client, socket: str, marker: Path
) -> None:
    for name in hostile_names(marker):
        session_id = made_session(socket, name, window=name)
        try:
            (found,) = (await call(socket_client, "list_sessions", filters={"session_name": name}))[
                "result"
            ]
            assert (found["session_id"], found["session_name"]) == (session_id, name)
            info = await call(socket_client, "get_session_info", session_name=name)
            assert info["session_id"] == session_id
            (window,) = (await call(socket_client, "list_windows", session_name=name))["result"]
            assert (window["window_name"], window["session_name"]) == (name, name)
            window_info = await call(
                socket_client, "get_window_info", session_name=name, window_index="0"
            )
            assert window_info["window_id"] == window["window_id"]
            (pane,) = (await call(socket_client, "list_panes", session_name=name))["result"]
            assert pane["session_id"] == session_id
            environment = await call(socket_client, "show_environment", session_name=name)
            assert "PATH" in environment["variables"]
            option = await call(
                socket_client, "show_option", option="history-limit", scope="session", target=name
            )
            assert isinstance(option["value"], int)
            searched = await call(socket_client, "search_panes", pattern="x", session_name=name)
            assert searched["total_panes_matched"] == 0
        finally:
            kill_session(socket, session_id)
    assert not marker.exists()


@pytest.mark.parametrize(
    "name", ["no such", "x\ny", "-t", "a;b", "#{session_name}", "$(touch {marker})", "*", ""]
)
async def test_a_session_name_that_matches_none_is_an_error_and_runs_nothing(
    socket_client: Client, socket: str, marker: Path, name: str
) -> None:
    name = name.replace("{marker}", str(marker))
    for tool, arguments in (
        ("get_session_info", {}),
        ("list_windows", {}),
        ("list_panes", {}),
        ("get_window_info", {}),
        ("show_environment", {}),
        ("search_panes", {"pattern": "x"}),
        ("get_pane_info", {}),
        ("display_message", {"format_string": "#{pane_id}"}),
    ):
        error = await call_error(socket_client, tool, session_name=name, **arguments)
        assert "session_name" in error or "no session matches" in error or "no pane" in error, (
            tool,
            error,
        )
    assert not marker.exists()
    assert tmux(socket, "display-message", "-p", "alive").strip() == "alive"


@pytest.mark.parametrize(
    "name",
    [
        "no-such-option",
        "-g",
        "a;b",
        "a ; kill-server",
        "#{pane_id}",
        "#(touch {marker})",
        "$(touch {marker})",
        "'quoted'",
    ],
)
async def test_option_and_hook_names_reach_tmux_as_one_argument_and_never_run(
    socket_client: Client, socket: str, marker: Path, name: str
) -> None:
    """tmux expands an option or hook name as a format: ``#(...)`` in one ran as a shell
    command, and ``#{pane_id}`` was read as a pane's id, before the name was escaped."""
    name = name.replace("{marker}", str(marker))
    pane = new_pane(socket)
    option = await call_error(
        socket_client, "show_option", option=name, scope="pane", target=pane.pane_id
    )
    assert option == f"tmux show-options failed: invalid option: {name}"
    hook = await call_error(socket_client, "show_hook", hook_name=name, scope="session")
    assert hook == f"tmux show-hooks failed: invalid option: {name}"
    # tmux named the name as given: it expanded nothing in it, so ran no job
    assert not marker.exists()
    assert tmux(socket, "display-message", "-p", "alive").strip() == "alive"


async def test_options_come_back_typed_and_exact(socket_client: Client, socket: str) -> None:
    pane = new_pane(socket)
    value = 'tab\there\nnewline "quotes" ; #{pane_id} $(id)'
    tmux(socket, "set-option", "-p", "-t", pane.pane_id, "@inspect-test", value)
    tmux(socket, "set-option", "-t", pane.session_id, "history-limit", "1234")

    async def shown(**arguments: Any) -> Any:
        return (await call(socket_client, "show_option", **arguments))["value"]

    assert await shown(option="@inspect-test", scope="pane", target=pane.pane_id) == value
    assert await shown(option="history-limit", scope="session", target=pane.session_id) == 1234
    # the value in effect: a pane inherits from its window and the global options
    assert await shown(option="remain-on-exit", scope="pane", target=pane.pane_id) is False
    assert await shown(option="history-limit", global_=True) == 2000
    assert await shown(option="@inspect-unset", scope="pane", target=pane.pane_id) is None
    array = await shown(option="status-format", global_=True)
    assert set(array) == {"0", "1"}
    assert await shown(option="status-format[1]", global_=True) == array["1"]
    for refused, arguments in (
        ("target needs a scope", {"target": pane.pane_id}),
        (
            "target is given with global_",
            {"scope": "pane", "target": pane.pane_id, "global_": True},
        ),
        ("target is given with scope 'server'", {"scope": "server", "target": "x"}),
        ("pane_id '@1' is not a tmux pane id", {"scope": "pane", "target": "@1"}),
        ("target: no window '@99999'", {"scope": "window", "target": "@99999"}),
        ("option 'a\\nb' holds a newline", {"option": "a\nb"}),
        ("option is empty", {"option": ""}),
    ):
        given = {"option": "mouse", **arguments}
        assert refused in await call_error(socket_client, "show_option", **given)


async def test_no_target_means_the_agent_pane(socket_client: Client, socket: str) -> None:
    """The agent's pane (marked as schemux marks the one it starts the server with) is
    every call's default, though a session made after it is the most recent."""
    agent = new_pane(socket)
    tmux(socket, "set-option", "-p", "-t", agent.pane_id, AGENT_MARK, "1")
    later = new_pane(socket)
    try:
        tmux(socket, "set-option", "-p", "-t", agent.pane_id, "@inspect-mine", "agent's")
        tmux(socket, "set-environment", "-t", agent.session_id, "INSPECT_AGENT", "yes")
        tmux(socket, "set-hook", "-t", agent.session_id, "session-renamed[7]", "display-message x")
        assert (await call(socket_client, "get_pane_info"))["pane_id"] == agent.pane_id
        assert (await call(socket_client, "get_window_info"))["window_id"] == agent.window_id
        assert (await call(socket_client, "get_session_info"))["session_id"] == agent.session_id
        shown = await call(
            socket_client, "display_message", format_string="#{pane_id}/#{session_id}"
        )
        assert shown["result"] == f"{agent.pane_id}/{agent.session_id}"
        corner = await call(socket_client, "find_pane_by_position", corner="top-left")
        assert corner["pane_id"] == agent.pane_id
        (listed,) = (await call(socket_client, "list_panes", window_index="0"))["result"]
        assert listed["pane_id"] == agent.pane_id
        option = await call(socket_client, "show_option", option="@inspect-mine", scope="pane")
        assert option["value"] == "agent's"
        variables = (await call(socket_client, "show_environment"))["variables"]
        assert variables["INSPECT_AGENT"] == "yes"
        hooks = (await call(socket_client, "show_hooks"))["entries"]
        assert {"hook_name": "session-renamed", "index": 7, "command": "display-message x"} in hooks
        # a session named alone: its active window, not the agent's
        other = await call(socket_client, "get_window_info", session_id=later.session_id)
        assert other["window_id"] == later.window_id
    finally:
        kill_session(socket, agent.session_id)
        kill_session(socket, later.session_id)


async def test_socket_name_reads_another_server(
    socket_client: Client, socket: str, other_tmux_socket: str
) -> None:
    there = new_pane(other_tmux_socket)
    sessions = (await call(socket_client, "list_sessions", socket_name=other_tmux_socket))["result"]
    names = tmux(other_tmux_socket, "list-sessions", "-F", "#{session_name}").split()
    assert sorted(s["session_name"] for s in sessions) == sorted(
        name for name in names if name != OWNED_SESSION
    )
    info = await call(
        socket_client, "get_pane_info", pane_id=there.pane_id, socket_name=other_tmux_socket
    )
    assert info["session_id"] == there.session_id
    here = await call(socket_client, "get_server_info")
    other = await call(socket_client, "get_server_info", socket_name=other_tmux_socket)
    assert other["socket_path"].endswith(other_tmux_socket)
    assert other["socket_path"] != here["socket_path"]


async def test_a_server_that_is_not_running_is_reported_and_never_started(
    make_context: Contexts,
) -> None:
    """Not even the configured one, which any other call would start."""
    configured, other = tagged_socket_name("inspect-none"), tagged_socket_name("inspect-none")
    try:
        async with client_of(make_context(socket_name=configured)) as client:
            info = await call(client, "get_server_info")
            assert info == {
                "is_alive": False, "socket_name": configured, "socket_path": None,
                "session_count": 0, "version": None,
            }  # fmt: skip
            error = await call_error(client, "list_sessions", socket_name=other)
            assert error.startswith(f"no tmux server is running on socket name '{other}'")
            servers = (await call(client, "list_servers"))["result"]
            assert configured not in {server["socket_name"] for server in servers}
        for name in (configured, other):  # still not running
            assert tmux(name, "list-sessions", "-F", "#{session_name}", check=False) == ""
    finally:
        remove_server(configured)
        remove_server(other)


@pytest.mark.parametrize(
    ("tool", "arguments", "refusal"),
    [
        (
            "list_sessions",
            {"filters": {"session_name__like": "x"}},
            "filters['session_name__like']",
        ),
        ("list_panes", {"filters": "{nope"}, "filters '{nope' is not JSON"),
        ("list_windows", {"session_id": "1"}, "session_id '1' is not a tmux session id"),
        ("get_window_info", {"window_index": "x"}, "window_index 'x' is not a window index"),
        ("get_pane_info", {"pane_id": "%1;kill-server"}, "pane_id '%1;kill-server' is not"),
        ("display_message", {"format_string": "#{E:x}"}, "holds tmux format syntax"),
        ("search_panes", {"pattern": "(", "regex": True}, "pattern '(' is not a valid"),
        ("search_panes", {"pattern": "x", "offset": -1}, "offset: -1 is less than the minimum"),
        ("search_panes", {"pattern": "x", "limit": -1}, "limit: -1 is less than the minimum"),
        (
            "search_panes",
            {"pattern": "x", "max_matched_lines_per_pane": -1},
            "max_matched_lines_per_pane: -1 is less than the minimum",
        ),
        ("show_option", {"option": "mouse", "target": "%1"}, "target needs a scope"),
        ("show_hook", {"hook_name": ""}, "hook_name is empty"),
        ("show_hooks", {"scope": "everywhere"}, "Invalid arguments for show_hooks: scope"),
        ("find_pane_by_position", {"corner": "left"}, "Invalid arguments"),
        ("get_server_info", {"socket_name": "../x"}, "socket_name '../x' is not a tmux socket"),
        (
            "list_servers",
            {"extra_socket_paths": ["/tmp/s", "tmux-0/default"]},
            "extra_socket_paths[1] 'tmux-0/default' is not an absolute path",
        ),
        ("list_servers", {"extra_socket_paths": ["/x"] * 257}, "at most 256 are probed"),
        ("list_servers", {"extra_socket_paths": "/tmp/s"}, "Invalid arguments for list_servers"),
    ],
)
async def test_bad_input_is_refused_before_any_tmux_work(
    make_context: Contexts, tool: str, arguments: dict[str, Any], refusal: str
) -> None:
    """On a socket where no server runs: a call that reached tmux would say so instead."""
    never = tagged_socket_name("inspect-never")
    async with client_of(make_context(socket_name=never)) as client:
        error = await call_error(client, tool, **arguments)
    assert refusal in error
    assert "no tmux server is running" not in error


async def test_search_pages_panes_and_keeps_their_last_lines(
    socket_client: Client, socket: str
) -> None:
    tag = uuid.uuid4().hex[:8]
    session = made_session(socket, f"search-{tag}")
    first = tmux(socket, "list-panes", "-t", session, "-F", "#{pane_id}").strip()
    try:
        for _ in range(3):  # each 5 rows of the first pane's
            tmux(socket, "split-window", "-d", "-t", first, "-l", "5", "sh", "-c",
                 f"for i in 1 2 3; do echo {tag}-$i; done; exec sleep 300")  # fmt: skip
        panes = tmux(socket, "list-panes", "-s", "-t", session, "-F", "#{pane_id}").split()
        showing = sorted(panes[1:], key=lambda pane_id: int(pane_id[1:]))
        for pane_id in showing:
            await until(functools.partial(shows, socket, pane_id, f"{tag}-3"))
        page = await call(
            socket_client, "search_panes", pattern=tag, limit=1, max_matched_lines_per_pane=2
        )
        assert page["total_panes_matched"] == 3
        assert [match["pane_id"] for match in page["matches"]] == showing[:1]
        assert page["matches"][0]["matched_lines"] == [f"{tag}-2", f"{tag}-3"]
        assert page["truncated"] is True
        assert page["truncated_panes"] == showing[1:]
        rest = await call(socket_client, "search_panes", pattern=tag, offset=1, session_id=session)
        assert [match["pane_id"] for match in rest["matches"]] == showing[1:]
        assert rest["matches"][0]["matched_lines"] == [f"{tag}-1", f"{tag}-2", f"{tag}-3"]
        assert rest["truncated"] is False
        none = await call(socket_client, "search_panes", pattern=f"{tag}-9")
        assert none == {
            "matches": [], "truncated": False, "truncated_panes": [], "total_panes_matched": 0,
            "offset": 0, "limit": 500,
        }  # fmt: skip
    finally:
        kill_session(socket, session)


async def test_search_reads_history_when_asked_and_refuses_a_runaway_expression(
    socket_client: Client, socket: str
) -> None:
    pane = new_pane(socket, height=5)
    tmux(socket, "send-keys", "-t", pane.pane_id, "seq 1 50; echo " + "a" * 40 + "!", "Enter")
    await until(lambda: "a!" in screen(pane))
    visible = await call(
        socket_client, "search_panes", pattern="^7$", regex=True, session_id=pane.session_id
    )
    assert visible["total_panes_matched"] == 0
    history = await call(
        socket_client, "search_panes", pattern="^7$", regex=True, session_id=pane.session_id,
        content_start=-100,
    )  # fmt: skip
    assert history["matches"][0]["matched_lines"] == ["7"]
    # refused by the pattern's own time limit (no wall-clock bound here: a loaded machine
    # stretches the call, the refusal says what stopped it)
    error = await call_error(
        socket_client, "search_panes", pattern="^(a|aa)+$", regex=True, session_id=pane.session_id
    )
    assert "backtracks catastrophically" in error


async def test_display_message_reads_values_exactly(socket_client: Client, socket: str) -> None:
    pane = new_pane(socket)
    value = "tab\there\nnew line 100% #{pane_id} $(id)"
    tmux(socket, "set-option", "-p", "-t", pane.pane_id, "@inspect-shown", value)
    shown = await call(
        socket_client,
        "display_message",
        format_string="<#{@inspect-shown}> %s %%",
        pane_id=pane.pane_id,
    )
    assert shown["result"] == f"<{value}> %s %%"
    tmux(socket, "kill-pane", "-t", pane.pane_id)
    error = await call_error(
        socket_client, "display_message", format_string="#{x}", pane_id=pane.pane_id
    )
    assert error.startswith(f"no pane matches pane_id='{pane.pane_id}'")


async def test_host_reads_the_host_named(other_host: tuple[str, str]) -> None:
    directory, name = other_host
    hosts = (
        NamedHost("here"),
        NamedHost("there", ExecTarget(("env", f"TMUX_TMPDIR={directory}"))),
    )
    context = ServingState(Settings(socket_name=name, fleet=FleetSettings(hosts)))
    try:
        async with Client(build_server(context, select_all())) as client:
            listed = await client.list_tools()
            for tool in listed.tools:
                if tool.name in INSPECT:
                    assert tool.input_schema["properties"]["host"]["enum"] == ["here", "there"]
            sessions = (await call(client, "list_sessions", host="there"))["result"]
            assert [s["session_name"] for s in sessions] == ["on-there"]
            info = await call(client, "get_session_info", session_name="on-there", host="there")
            assert info["window_count"] == 1
            (server,) = (await call(client, "list_servers", host="there"))["result"]
            socket_directory = f"{os.path.realpath(directory)}/tmux-{os.getuid()}"
            assert server == {
                "is_alive": True, "socket_name": name, "socket_path": f"{socket_directory}/{name}",
                "session_count": 1, "version": server["version"],
            }  # fmt: skip
            assert server["version"]
            error = await call_error(client, "get_server_info", host="nowhere")
            assert "host: 'nowhere' is not a configured host" in error
    finally:
        await context.close()


def select_all() -> dict[str, Any]:
    return dict(select(BINDINGS, ["all"], several_hosts=True))


async def test_list_servers_lists_the_live_servers_and_leaves_out_the_rest(
    socket_client: Client, socket: str, marker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the socket directory: the configured server by its name, one with a hidden
    name and no session, one with a hostile name, a stale socket (left out). Given as
    extra paths: a server outside it (no socket name), a link to the configured one
    (listed once), a socket nothing answers on and paths that are no socket (left out),
    hostile text that never runs."""
    monkeypatch.setattr(server_scan, "ANSWER_SECONDS", 1.0)
    configured = (await call(socket_client, "get_server_info"))["socket_path"]
    directory = os.path.dirname(configured)
    empty = "." + tagged_socket_name("scan-empty")
    hostile = tagged_socket_name("scan") + f" a;b $(touch {marker.name}) `id`"
    stale = f"{directory}/{tagged_socket_name('scan-stale')}"
    short = Path(tempfile.mkdtemp(prefix="sxl-", dir="/tmp"))  # a socket path has 107 bytes
    ran = short / "ran"
    (short / "o d").mkdir()
    outside = f"{short}/o d/$(touch ran);k"
    link = short / "link"
    link.symlink_to(configured)
    silent = sockets.socket(sockets.AF_UNIX)  # listens, never answers
    silent_path = f"{short}/silent"
    try:
        tmux(empty, "-f", "/dev/null", "new-session", "-d", ";", "set", "-g", "exit-empty", "off")
        tmux(empty, "kill-session")
        tmux(hostile, "-f", "/dev/null", "new-session", "-d", "cat")
        tmux_at(outside, "-f", "/dev/null", "new-session", "-d", "cat")
        with sockets.socket(sockets.AF_UNIX) as dead:
            dead.bind(stale)  # closed: the socket file stays, nothing listens
        silent.bind(silent_path)
        silent.listen()
        extra = [
            outside, str(link), silent_path, f"/$(touch {marker})", "/etc/passwd",
            f"{short}/missing", str(short),
        ]  # fmt: skip
        servers = (await call(socket_client, "list_servers", extra_socket_paths=extra))["result"]
        by_path = {server["socket_path"]: server for server in servers}
        assert len(by_path) == len(servers)
        assert by_path[configured]["socket_name"] == socket
        assert by_path[configured]["session_count"] >= 1
        assert by_path[f"{directory}/{empty}"]["socket_name"] == empty
        assert by_path[f"{directory}/{empty}"]["session_count"] == 0
        assert by_path[f"{directory}/{hostile}"]["socket_name"] == hostile
        assert by_path[f"{directory}/{hostile}"]["session_count"] == 1
        assert by_path[outside] == {
            "is_alive": True, "socket_name": None, "socket_path": outside, "session_count": 1,
            "version": by_path[configured]["version"],
        }  # fmt: skip
        assert not {stale, silent_path, str(link), "/etc/passwd"} & set(by_path)
        assert not marker.exists()
        assert not ran.exists()
        assert not Path(marker.name).exists()
    finally:
        silent.close()
        for name in (empty, hostile):
            remove_server(name)
        tmux_at(outside, "kill-server", check=False)
        Path(stale).unlink(missing_ok=True)
        shutil.rmtree(short, ignore_errors=True)


def tmux_at(path: str, *args: str, check: bool = True) -> None:
    """A tmux command to the server on the socket ``path`` (``-S``)."""
    subprocess.run(["tmux", "-S", path, *args], capture_output=True, check=check)
