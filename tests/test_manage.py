"""The manage tools (the family served on request) against real tmux, through the
in-memory MCP client, on a tmux server of this module's own: what they make and change
is what tmux then says, hostile names and directories reach tmux as one argument each and
nothing in them runs or expands, no target means the agent's pane, socket_name works on
another server and host on another host, schemux's own session is refused, and bad input
is refused before any tmux work."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import FAMILIES
from schemux.host_settings import ExecTarget, FleetSettings, NamedHost
from schemux.names import OWNED_SESSION
from schemux.panes.claims import BUSY_OPTION
from schemux.serving.selection import select
from schemux.serving.server import build_server
from schemux.serving.state import ServingState
from schemux.shell.abandoned import PANE_OPTION
from schemux.shell.idle import TMUX_FORK
from schemux.system.processes import process_name, this_process
from schemux.tmux.agent_session import AGENT_MARK
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

MANAGE = FAMILIES["manage"]


def hostile_names(marker: Path) -> list[str]:
    return [
        'it\'s "quoted"',
        "a;b ; kill-server",
        "a \\; kill-server",
        "#{pane_id}",
        "##{pane_id}",
        f"$(touch {marker})",
        f"#(touch {marker})",
        "-t",
        "--",
        "`id` x",
        "~root",
    ]


def facts(socket: str, target: str, fields: str) -> str:
    return tmux(socket, "display-message", "-p", "-t", target, fields).rstrip("\n")


def environment_of(socket: str, pane_id: str) -> dict[str, str]:
    """The environment of the pane's first process, as /proc has it."""
    pid = facts(socket, pane_id, "#{pane_pid}")
    items = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in items if b"=" in item)


async def environment_once_running(socket: str, pane_id: str) -> dict[str, str]:
    """``environment_of`` once the pane's process has exec'd its program: until then it
    is tmux's fork, with tmux's environment (a clean-clone run read it there once)."""
    pid = int(facts(socket, pane_id, "#{pane_pid}"))
    await until(lambda: not process_name(pid).startswith(TMUX_FORK))
    return environment_of(socket, pane_id)


async def until_in(socket: str, target: str, directory: Path) -> None:
    """Wait until the pane's process runs in ``directory`` (its shell starts after tmux
    has answered)."""
    await until(functools.partial(runs_in, socket, target, str(directory)))


def runs_in(socket: str, target: str, directory: str) -> bool:
    return facts(socket, target, "#{pane_current_path}") == directory


def kill_session(socket: str, session_id: str) -> None:
    tmux(socket, "kill-session", "-t", session_id, check=False)


async def test_the_default_selection_serves_none_of_them() -> None:
    assert MANAGE
    assert set(MANAGE) <= set(BINDINGS)
    assert not set(MANAGE) & set(select(BINDINGS, [], several_hosts=False))
    assert set(MANAGE) <= set(select(BINDINGS, ["manage"], several_hosts=False))


async def test_what_they_make_is_what_tmux_lists(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    session = await call(
        socket_client, "create_session", session_name="made-here", window_name="first",
        x=120, y=40, environment={"MANAGE_SESSION": "kept"}, start_directory=str(tmp_path),
    )  # fmt: skip
    try:
        session_id = session["session_id"]
        assert session["session_name"] == "made-here"
        assert session["window_count"] == 1
        assert session["active_pane_id"] == facts(socket, session_id, "#{pane_id}")
        assert facts(socket, session_id, "#{window_name} #{window_width}x#{window_height}") == (
            "first 120x40"
        )
        await until_in(socket, session_id, tmp_path)
        shown = tmux(socket, "show-environment", "-t", session_id, "MANAGE_SESSION")
        assert shown == "MANAGE_SESSION=kept\n"
        window = await call(
            socket_client, "create_window", session_id=session_id, window_name="second",
            environment='{"MANAGE_WINDOW": "only here"}',
        )  # fmt: skip
        assert (window["window_name"], window["window_index"], window["window_active"]) == (
            "second", "1", "0",
        )  # fmt: skip
        assert window["session_id"] == session_id
        assert window["active_pane_id"] == facts(socket, window["window_id"], "#{pane_id}")
        # read once the pane's process has exec'd: until then it is tmux's fork, with
        # tmux's environment (a loaded machine read it there once)
        pane = window["active_pane_id"]
        await until(lambda: "MANAGE_WINDOW" in environment_of(socket, pane))
        assert environment_of(socket, pane)["MANAGE_WINDOW"] == "only here"
        # the session's environment is left as it was
        assert "MANAGE_WINDOW" not in tmux(socket, "show-environment", "-t", session_id)
        before = await call(
            socket_client, "create_window", session_name="made-here", window_name="before",
            direction="before", attach=True,
        )  # fmt: skip
        assert (before["window_index"], before["window_active"]) == ("0", "1")
        split = await call(
            socket_client, "split_window", window_id=window["window_id"], direction="right",
            size="30%", shell="exec sleep 300",
        )  # fmt: skip
        pane_id = split["pane_id"]
        assert split["window_id"] == window["window_id"]
        assert split["pane_active"] == "0"  # the pane split stays active
        width = int(facts(socket, window["window_id"], "#{window_width}"))
        assert abs(int(split["pane_width"]) - width * 0.3) <= 1
        assert split["pane_left"] > 0
        await until(lambda: facts(socket, pane_id, "#{pane_current_command}") == "sleep")
        below = await call(socket_client, "split_window", pane_id=pane_id, size=5)
        assert below["pane_height"] == "5"
        assert below["pane_top"] > split["pane_top"]
    finally:
        kill_session(socket, session["session_id"])


async def test_hostile_names_and_directories_arrive_exactly_and_nothing_runs(
    socket_client: Client, socket: str, marker: Path, tmp_path: Path
) -> None:
    """tmux expands a format in new-session's -s, -n and -c and new-window's -n and -c:
    ``#(...)`` there would run, ``#{pane_id}`` be replaced."""
    for name in hostile_names(marker):
        directory = tmp_path / name.replace("/", "_")
        directory.mkdir()
        value = f"{name}\nsecond line"
        session = await call(
            socket_client, "create_session", session_name=name, window_name=name,
            start_directory=str(directory), environment={"MANAGE_VALUE": value},
        )  # fmt: skip
        try:
            session_id = session["session_id"]
            # tmux escapes a backslash in a session's name (not in a window's)
            assert session["session_name"] == name.replace("\\", "\\\\")
            assert facts(socket, session_id, "#{session_name}") == session["session_name"]
            assert facts(socket, session_id, "#{window_name}") == name
            await until_in(socket, session_id, directory)
            pane_id = session["active_pane_id"]
            assert (await environment_once_running(socket, pane_id))["MANAGE_VALUE"] == value
            window = await call(
                socket_client, "create_window", session_name=session["session_name"],
                window_name=name, start_directory=str(directory),
                environment={"MANAGE_VALUE": value},
            )  # fmt: skip
            assert window["window_name"] == name
            await until_in(socket, window["window_id"], directory)
            split = await call(
                socket_client, "split_window", session_name=session["session_name"],
                start_directory=str(directory),
                environment={name.replace("=", "_") or "x": value},
            )  # fmt: skip
            await until_in(socket, split["pane_id"], directory)
            split_environment = await environment_once_running(socket, split["pane_id"])
            assert split_environment[name.replace("=", "_")] == value
        finally:
            kill_session(socket, session["session_id"])
    broken = "line\nbreak"  # a window keeps it (a session's name, tmux escapes)
    window = await call(
        socket_client, "create_window", window_name=broken, session_name="keepalive"
    )
    assert facts(socket, window["window_id"], "#{window_name}") == broken
    assert window["window_name"] == broken
    tmux(socket, "kill-window", "-t", window["window_id"])
    assert not marker.exists()
    assert tmux(socket, "display-message", "-p", "alive").strip() == "alive"


async def test_no_target_means_the_agent_pane(socket_client: Client, socket: str) -> None:
    agent = new_pane(socket)
    tmux(socket, "set-option", "-p", "-t", agent.pane_id, AGENT_MARK, "1")
    later = new_pane(socket)  # the most recent session, which no call means
    try:
        window = await call(socket_client, "create_window", window_name="agent's")
        assert window["session_id"] == agent.session_id
        split = await call(socket_client, "split_window")
        assert split["window_id"] == agent.window_id
        assert split["session_id"] == agent.session_id
        indexed = await call(socket_client, "split_window", window_index=window["window_index"])
        assert indexed["window_id"] == window["window_id"]
    finally:
        kill_session(socket, agent.session_id)
        kill_session(socket, later.session_id)


async def test_history_is_kept_out_of_files_when_asked(socket_client: Client, socket: str) -> None:
    session = await call(socket_client, "create_session", suppress_persistent_history=True)
    try:
        first = await environment_once_running(socket, session["active_pane_id"])
        assert (first["HISTFILE"], first["fish_private_mode"]) == ("/dev/null", "1")
        # only the first shell: the session's later panes keep their history
        shown = tmux(socket, "show-environment", "-t", session["session_id"])
        assert "HISTFILE" not in shown
        assert "fish_private_mode" not in shown
        window = await call(
            socket_client, "create_window", session_id=session["session_id"],
            suppress_persistent_history=True, environment={"HISTFILE": "/tmp/mine"},
        )  # fmt: skip
        assert (await environment_once_running(socket, window["active_pane_id"]))[
            "HISTFILE"
        ] == "/tmp/mine"
        split = await call(socket_client, "split_window", pane_id=session["active_pane_id"])
        assert "fish_private_mode" not in await environment_once_running(socket, split["pane_id"])
    finally:
        kill_session(socket, session["session_id"])


async def test_schemux_own_session_is_refused(socket_client: Client, socket: str) -> None:
    await call(socket_client, "list_sessions")  # the owned session made
    control = facts(socket, f"={OWNED_SESSION}:", "#{pane_id}")
    windows = tmux(socket, "list-windows", "-t", f"={OWNED_SESSION}", "-F", "#{window_id}")
    for name in (OWNED_SESSION, ":schemux", ".schemux"):
        error = await call_error(socket_client, "create_session", session_name=name)
        assert "is schemux's own session's name" in error
    error = await call_error(socket_client, "create_window", session_name=OWNED_SESSION)
    assert "no session matches" in error or "schemux's own session" in error
    error = await call_error(socket_client, "split_window", pane_id=control)
    assert "schemux's control clients" in error
    assert tmux(socket, "list-windows", "-t", f"={OWNED_SESSION}", "-F", "#{window_id}") == windows
    sessions = tmux(socket, "list-sessions", "-F", "#{session_name}").split("\n")
    assert sessions.count(OWNED_SESSION) == 1


async def test_tmux_failures_are_clear_errors(socket_client: Client, socket: str) -> None:
    made = await call(socket_client, "create_session", session_name="twice")
    try:
        error = await call_error(socket_client, "create_session", session_name="twice")
        assert "duplicate session: twice" in error
    finally:
        kill_session(socket, made["session_id"])
    error = await call_error(socket_client, "create_window", session_id="$99999")
    assert "no session matches session_id='$99999'" in error
    error = await call_error(socket_client, "split_window", pane_id="%99999")
    assert "no pane matches pane_id='%99999'" in error


async def test_socket_name_works_on_another_server(
    socket_client: Client, other_tmux_socket: str
) -> None:
    made = await call(socket_client, "create_session", socket_name=other_tmux_socket)
    try:
        names = tmux(other_tmux_socket, "list-sessions", "-F", "#{session_id}").split()
        assert made["session_id"] in names
        window = await call(
            socket_client,
            "create_window",
            session_id=made["session_id"],
            socket_name=other_tmux_socket,
        )
        assert window["window_id"] in tmux(other_tmux_socket, "list-windows", "-a", "-F",
                                           "#{window_id}").split()  # fmt: skip
    finally:
        kill_session(other_tmux_socket, made["session_id"])


async def test_what_they_change_is_what_tmux_then_says(socket_client: Client, socket: str) -> None:
    session = await call(socket_client, "create_session", session_name="arranged", x=100, y=30)
    session_id, first = session["session_id"], session["active_pane_id"]
    try:
        renamed = await call(
            socket_client, "rename_session", session_id=session_id, new_name="renamed"
        )
        assert renamed["session_name"] == "renamed"
        assert facts(socket, session_id, "#{session_name}") == "renamed"
        window = await call(socket_client, "rename_window", session_name="renamed", new_name="main")
        window_id = window["window_id"]
        assert facts(socket, window_id, "#{window_name}") == "main"
        right = (await call(socket_client, "split_window", pane_id=first, direction="right"))[
            "pane_id"
        ]
        layout = await call(
            socket_client, "select_layout", window_id=window_id, layout="even-vertical"
        )
        assert layout["window_layout"] == facts(socket, window_id, "#{window_layout}")
        assert int(facts(socket, right, "#{pane_top}")) > 0  # now below the first
        again = await call(
            socket_client, "select_layout", window_id=window_id, layout="even-horizontal"
        )
        custom = await call(
            socket_client, "select_layout", window_id=window_id, layout=layout["window_layout"]
        )
        assert custom["window_layout"] == layout["window_layout"] != again["window_layout"]
        chosen = await call(socket_client, "select_pane", pane_id=right)
        assert (chosen["pane_id"], chosen["pane_active"]) == (right, "1")
        back = await call(socket_client, "select_pane", window_id=window_id, direction="last")
        assert back["pane_id"] == first
        upward = await call(socket_client, "select_pane", pane_id=right, direction="up")
        assert upward["pane_id"] == first
        resized = await call(socket_client, "resize_pane", pane_id=first, height=8)
        assert resized["pane_height"] == "8"
        zoomed = await call(socket_client, "resize_pane", pane_id=first, zoom=True)
        assert facts(socket, first, "#{window_zoomed_flag}") == "1"
        assert zoomed["pane_height"] == "30"
        await call(socket_client, "resize_pane", pane_id=first, zoom=True)  # stays zoomed
        assert facts(socket, first, "#{window_zoomed_flag}") == "1"
        await call(socket_client, "resize_pane", pane_id=first, zoom=False)
        assert facts(socket, first, "#{window_zoomed_flag}") == "0"
        window_size = await call(
            socket_client, "resize_window", window_id=window_id, width=60, height=20
        )
        assert (window_size["window_width"], window_size["window_height"]) == ("60", "20")
        swapped = await call(socket_client, "swap_pane", source_pane_id=first, target_pane_id=right)
        assert swapped["pane_top"] > 0  # the first pane is below now
        assert facts(socket, first, "#{pane_active}") == "1"  # the active pane stays
        titled = await call(socket_client, "set_pane_title", pane_id=first, title="a title")
        assert titled["pane_title"] == facts(socket, first, "#{pane_title}") == "a title"
        second = await call(socket_client, "create_window", session_id=session_id)
        selected = await call(socket_client, "select_window", window_id=second["window_id"])
        assert (selected["window_id"], selected["window_active"]) == (second["window_id"], "1")
        previous = await call(
            socket_client, "select_window", session_id=session_id, direction="previous"
        )
        assert previous["window_id"] == window_id
        moved = await call(
            socket_client, "move_window", window_id=second["window_id"], destination_index="7"
        )
        assert moved["window_index"] == "7"
        other = await call(socket_client, "create_session", session_name="other-of-arranged")
        try:
            across = await call(
                socket_client, "move_window", window_id=second["window_id"],
                destination_session="other-of-arranged",
            )  # fmt: skip
            assert (across["session_id"], across["window_index"]) == (other["session_id"], "1")
            occupied = await call_error(
                socket_client, "move_window", window_id=window_id,
                destination_session=other["session_id"], destination_index="0",
            )  # fmt: skip
            assert "index in use: 0" in occupied
        finally:
            kill_session(socket, other["session_id"])
        alone = await call_error(
            socket_client, "select_window", session_id=session_id, direction="next"
        )
        assert "no next window" in alone
        taken = await call_error(
            socket_client, "rename_session", session_id=session_id, new_name="keepalive"
        )
        assert "duplicate session: keepalive" in taken
    finally:
        kill_session(socket, session_id)


async def test_names_and_titles_are_one_argument_never_a_format(
    socket_client: Client, socket: str, marker: Path
) -> None:
    """rename-session, rename-window and select-pane -T expand their text as a format:
    ``#(...)`` ran a command, ``#{pane_id}`` was replaced, and a name beginning with
    ``-`` was read as a flag, before schemux doubled each # and ended the flags."""
    session = await call(socket_client, "create_session")
    session_id, pane_id = session["session_id"], session["active_pane_id"]
    destination = await call(socket_client, "create_session")
    mover = (await call(socket_client, "create_window", session_id=session_id))["window_id"]
    try:
        for name in [*hostile_names(marker), "line\nbreak"]:
            renamed = await call(
                socket_client, "rename_session", session_id=session_id, new_name=name
            )
            assert renamed["session_name"] == facts(socket, session_id, "#{session_name}")
            if "\\" not in name and "\n" not in name:  # tmux escapes those in a session's
                assert renamed["session_name"] == name
            window = await call(
                socket_client, "rename_window", session_id=session_id, new_name=name
            )
            assert window["window_name"] == facts(socket, session_id, "#{window_name}")
            if "\\" not in name and "\n" not in name:  # rename-window escapes those too
                assert window["window_name"] == name
            titled = await call(socket_client, "set_pane_title", pane_id=pane_id, title=name)
            assert facts(socket, pane_id, "#{pane_title}") == titled["pane_title"]
            if "\n" not in name:  # tmux keeps a title's first line
                assert titled["pane_title"] == name
            # a destination session found by its hostile name, compared
            await call(socket_client, "rename_session", session_id=destination["session_id"],
                       new_name=f"to {name}")  # fmt: skip
            moved = await call(
                socket_client, "move_window", window_id=mover,
                destination_session=facts(socket, destination["session_id"], "#{session_name}"),
            )  # fmt: skip
            assert moved["session_id"] == destination["session_id"]
            await call(
                socket_client, "move_window", window_id=mover, destination_session=session_id
            )
    finally:
        kill_session(socket, session_id)
        kill_session(socket, destination["session_id"])
    assert not marker.exists()
    assert tmux(socket, "display-message", "-p", "alive").strip() == "alive"


@pytest.mark.parametrize(
    "layout",
    ["tiledx", "nonsense", "#", "-t", "#(touch {marker})", "zzzz,80x24,0,0,0",
     "0000,80x24,0,0,0", "tiled;x", "main-horizontal-mirrored", "main-vertical-mirrored"],
)  # fmt: skip
async def test_a_layout_tmux_would_die_of_is_refused(
    socket_client: Client, socket: str, marker: Path, layout: str
) -> None:
    """tmux 3.3a's server exits on each of these; a mirrored layout's name is tmux 3.5's,
    which applies it."""
    layout = layout.replace("{marker}", str(marker))
    version = tmux(socket, "display-message", "-p", "#{version}").strip()
    pane = new_pane(socket)
    if layout.endswith("-mirrored") and version >= "3.5":
        await call(socket_client, "select_layout", window_id=pane.window_id, layout=layout)
    else:
        error = await call_error(
            socket_client, "select_layout", window_id=pane.window_id, layout=layout
        )
        assert "is not a layout" in error or "is not one tmux" in error
    assert tmux(socket, "display-message", "-p", "alive").strip() == "alive"
    assert not marker.exists()
    kill_session(socket, pane.session_id)


async def test_they_default_to_the_agent_pane(socket_client: Client, socket: str) -> None:
    agent = new_pane(socket)
    tmux(socket, "set-option", "-p", "-t", agent.pane_id, AGENT_MARK, "1")
    later = new_pane(socket)
    try:
        beside = (await call(socket_client, "split_window", direction="right"))["pane_id"]
        window = await call(socket_client, "rename_window", new_name="agent's window")
        assert window["window_id"] == agent.window_id
        session = await call(
            socket_client, "rename_session", new_name=f"agent-{agent.session_name}"
        )
        assert session["session_id"] == agent.session_id
        right = await call(socket_client, "select_pane", direction="right")
        assert right["pane_id"] == beside
        titled = await call(socket_client, "set_pane_title", title="agent's")
        assert titled["pane_id"] == agent.pane_id
        zoomed = await call(socket_client, "resize_pane", zoom=True)
        assert zoomed["pane_id"] == agent.pane_id
        assert facts(socket, agent.window_id, "#{window_zoomed_flag}") == "1"
        layout = await call(socket_client, "select_layout", layout="even-horizontal")
        assert layout["window_id"] == agent.window_id
        sized = await call(socket_client, "resize_window", width=50)
        assert (sized["window_id"], sized["window_width"]) == (agent.window_id, "50")
        current = await call(socket_client, "select_window")
        assert current["window_id"] == agent.window_id
        moved = await call(socket_client, "move_window", destination_index="5")
        assert (moved["window_id"], moved["window_index"]) == (agent.window_id, "5")
    finally:
        kill_session(socket, agent.session_id)
        kill_session(socket, later.session_id)


async def test_schemux_own_session_is_never_changed(socket_client: Client, socket: str) -> None:
    """A window of ``_schemux`` other than the control clients' (a program's, as tools
    list it) is refused by every tool, and so is ``_schemux`` as a destination."""
    await call(socket_client, "list_sessions")  # the owned session made
    owned = f"={OWNED_SESSION}:"
    made = tmux(
        socket, "new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}", "-t", owned, "cat"
    )
    window_id, pane_id = made.split()
    session = await call(socket_client, "create_session")
    try:
        before = tmux(socket, "list-windows", "-t", f"={OWNED_SESSION}", "-F",
                      "#{window_id} #{window_index} #{window_name} #{window_layout}")  # fmt: skip
        refused: list[tuple[str, dict[str, Any]]] = [
            ("rename_session", {"session_name": OWNED_SESSION, "new_name": "x"}),
            ("rename_window", {"window_id": window_id, "new_name": "x"}),
            ("select_window", {"window_id": window_id}),
            ("select_window", {"session_name": OWNED_SESSION, "direction": "next"}),
            ("select_pane", {"pane_id": pane_id}),
            ("select_layout", {"window_id": window_id, "layout": "tiled"}),
            ("resize_pane", {"pane_id": pane_id, "height": 5}),
            ("resize_window", {"window_id": window_id, "width": 40}),
            ("move_window", {"window_id": window_id, "destination_index": "9"}),
            ("move_window", {"session_id": session["session_id"],
                             "destination_session": OWNED_SESSION}),
            ("swap_pane", {"source_pane_id": session["active_pane_id"], "target_pane_id": pane_id}),
            ("set_pane_title", {"pane_id": pane_id, "title": "x"}),
            ("create_window", {"session_name": OWNED_SESSION}),
            ("split_window", {"pane_id": pane_id}),
        ]  # fmt: skip
        for tool, arguments in refused:
            error = await call_error(socket_client, tool, **arguments)
            assert "schemux's own session" in error, (tool, error)
        after = tmux(socket, "list-windows", "-t", f"={OWNED_SESSION}", "-F",
                     "#{window_id} #{window_index} #{window_name} #{window_layout}")  # fmt: skip
        assert after == before
        assert facts(socket, session["session_id"], "#{session_windows}") == "1"
    finally:
        tmux(socket, "kill-window", "-t", window_id)
        kill_session(socket, session["session_id"])


async def test_respawn_clear_and_copy_mode_do_what_tmux_then_says(
    socket_client: Client, socket: str, tmp_path: Path, marker: Path
) -> None:
    pane = new_pane(socket)
    other = new_pane(socket, command="sleep 300")
    try:
        tmux(socket, "send-keys", "-t", pane.pane_id, "seq 1 200", "Enter")
        # seq's last line, not the typed line (which holds "200" as soon as it is echoed)
        await until(lambda: "200" in screen(pane).splitlines())
        copy = await call(socket_client, "enter_copy_mode", pane_id=pane.pane_id, scroll_up=20)
        assert copy["pane_id"] == pane.pane_id
        assert facts(socket, pane.pane_id, "#{pane_in_mode} #{scroll_position}") == "1 20"
        await call(socket_client, "exit_copy_mode", pane_id=pane.pane_id)
        assert facts(socket, pane.pane_id, "#{pane_in_mode}") == "0"
        await call(socket_client, "exit_copy_mode", pane_id=pane.pane_id)  # in no mode: nothing
        tmux(socket, "copy-mode", "-t", pane.pane_id)
        cleared = await call(socket_client, "clear_pane", pane_id=pane.pane_id)
        assert cleared == {"result": f"Pane cleared: {pane.pane_id}"}
        assert facts(socket, pane.pane_id, "#{pane_in_mode} #{history_size}") == "0 0"
        assert "200" not in screen(pane, history=True)
        ran = await call(socket_client, "run_command", pane_id=pane.pane_id, command="echo after")
        assert ran["output"] == ["after"]  # the shell takes commands as before
        before = facts(socket, other.pane_id, "#{pane_pid}")
        busy = await call_error(socket_client, "respawn_pane", pane_id=other.pane_id, kill=False)
        assert f"pane {other.pane_id} still runs 'sleep'" in busy
        directory = tmp_path / "#{pane_id} #(true) -t"  # arrives exactly: never expanded
        directory.mkdir()
        respawned = await call(
            socket_client, "respawn_pane", pane_id=other.pane_id, shell="exec sleep 200",
            start_directory=str(directory), environment={"MANAGE_RESPAWN": "#{pane_id}"},
        )  # fmt: skip
        assert respawned["pane_id"] == other.pane_id
        assert respawned["pane_pid"] != before
        await until_in(socket, other.pane_id, directory)
        respawned_environment = await environment_once_running(socket, other.pane_id)
        assert respawned_environment["MANAGE_RESPAWN"] == "#{pane_id}"
        again = await call(socket_client, "respawn_pane", pane_id=other.pane_id)  # its first argv
        assert again["pane_pid"] != respawned["pane_pid"]
        await until(lambda: facts(socket, other.pane_id, "#{pane_current_command}") == "sleep")
        assert not marker.exists()
    finally:
        kill_session(socket, pane.session_id)
        kill_session(socket, other.session_id)


async def test_a_pane_held_by_a_call_or_a_program_is_refused(
    socket_client: Client, socket: str
) -> None:
    """What a run_command call types and reads, or a program's output, would be lost."""
    pane = new_pane(socket)
    try:
        claim = f"{this_process().tag} {'0' * 12}"  # a live caller's
        tmux(socket, "set-option", "-p", "-t", pane.pane_id, BUSY_OPTION, claim)
        for tool in ("respawn_pane", "clear_pane", "enter_copy_mode"):
            error = await call_error(socket_client, tool, pane_id=pane.pane_id)
            assert f"pane {pane.pane_id} runs a run_command call" in error, tool
        tmux(socket, "set-option", "-p", "-u", "-t", pane.pane_id, BUSY_OPTION)
        tmux(socket, "set-option", "-p", "-t", pane.pane_id, PANE_OPTION, "someone")
        for tool in ("respawn_pane", "clear_pane", "enter_copy_mode"):
            error = await call_error(socket_client, tool, pane_id=pane.pane_id)
            assert f"pane {pane.pane_id} runs a program schemux started" in error, tool
        assert facts(socket, pane.pane_id, "#{pane_in_mode}") == "0"
    finally:
        kill_session(socket, pane.session_id)


async def test_the_agent_shell_respawned_takes_commands_once_its_prompt_shows(
    make_context: Contexts,
) -> None:
    """The agent's pane, whose shell schemux started with its hooks: tmux starts the
    same shell with its hooks again, and a call is typed into it (not into a subshell,
    as in a shell without hooks)."""
    socket = tagged_socket_name("manage-agent")
    try:
        async with client_of(make_context(socket_name=socket)) as client:
            first = await call(client, "run_command", command="echo $$")
            agent = (await call(client, "get_pane_info"))["pane_id"]
            await call(client, "respawn_pane", pane_id=agent)
            ran = await call(client, "run_command", command="echo $$; cd /")
            assert ran["output"][0] != first["output"][0]  # another shell
            # typed into the hooked shell itself (not a subshell): its directory stays
            assert (await call(client, "run_command", command="pwd"))["output"] == ["/"]
            assert (await call(client, "get_pane_info"))["pane_id"] == agent
    finally:
        remove_server(socket)


@pytest.mark.parametrize(
    ("tool", "arguments", "refusal"),
    [
        ("create_session", {"session_name": ""}, "session_name is empty"),
        ("create_session", {"session_name": OWNED_SESSION}, "schemux's own session's name"),
        ("create_session", {"x": 0}, "x: 0 is less than the minimum of 1"),
        ("create_session", {"environment": "{nope"}, "environment '{nope' is not JSON"),
        ("create_session", {"environment": '{"A": 1}'}, "is not a JSON object of strings"),
        ("create_session", {"environment": {"A=B": "c"}}, "environment: 'A=B' is not a"),
        ("create_session", {"environment": {"": "c"}}, "environment: '' is not a"),
        ("create_session", {"start_directory": "/nonexistent-dir"}, "start_directory '/nonex"),
        ("create_session", {"start_directory": ""}, "start_directory is empty"),
        ("create_window", {"session_id": "1"}, "session_id '1' is not a tmux session id"),
        ("create_window", {"direction": "up"}, "Invalid arguments for create_window: direction"),
        ("split_window", {"size": "half"}, "size 'half' is not a size"),
        ("split_window", {"size": "150%"}, "size '150%' is not a size"),
        ("split_window", {"size": 0}, "size 0 is not a size"),
        ("split_window", {"window_index": "x"}, "window_index 'x' is not a window index"),
        ("split_window", {"pane_id": "%1;kill-server"}, "pane_id '%1;kill-server' is not"),
        ("split_window", {"cwd": "/tmp"}, "did you mean start_directory"),
        ("rename_session", {"new_name": ""}, "new_name is empty"),
        ("rename_session", {"new_name": ".schemux"}, "schemux's own session's name"),
        ("rename_window", {"new_name": "x", "window_index": "-1"}, "window_index '-1' is not"),
        ("select_window", {"window_id": "@1", "direction": "next"}, "direction is given with"),
        ("select_pane", {"direction": "sideways"}, "Invalid arguments for select_pane"),
        ("select_layout", {"layout": "tiledx"}, "layout 'tiledx' is not a layout"),
        ("select_layout", {"layout": "b25d,80x24,0,0,1"}, "is not a layout"),
        ("resize_pane", {}, "resize_pane needs height, width or zoom"),
        ("resize_pane", {"height": 0}, "height: 0 is less than the minimum of 1"),
        ("resize_window", {"width": 10001}, "width: 10001 is greater than the maximum"),
        ("resize_window", {}, "resize_window needs height or width"),
        ("move_window", {"destination_index": "+1"}, "destination_index '+1' is not"),
        ("swap_pane", {"source_pane_id": "%1", "target_pane_id": "1"}, "pane_id '1' is not"),
        ("set_pane_title", {"title": "x", "window_id": "1"}, "window_id '1' is not"),
        ("respawn_pane", {}, "Invalid arguments for respawn_pane"),
        ("respawn_pane", {"pane_id": "%1", "environment": {"=": "x"}}, "environment: '='"),
        ("respawn_pane", {"pane_id": "1"}, "pane_id '1' is not a tmux pane id"),
        ("clear_pane", {"session_id": "x"}, "session_id 'x' is not"),
        ("enter_copy_mode", {"scroll_up": -1}, "scroll_up: -1 is less than the minimum of 0"),
        ("exit_copy_mode", {"pane_id": "%x"}, "pane_id '%x' is not"),
    ],
)
async def test_bad_input_is_refused_before_any_tmux_work(
    make_context: Contexts, tool: str, arguments: dict[str, Any], refusal: str
) -> None:
    """On a socket where no server runs: a call that reached tmux would say so instead."""
    never = tagged_socket_name("manage-never")
    async with client_of(make_context(socket_name=never)) as client:
        error = await call_error(client, tool, **arguments)
    assert refusal in error
    assert "no tmux server is running" not in error
    assert tmux(never, "list-sessions", check=False) == ""


async def test_host_works_on_the_host_named(other_host: tuple[str, str]) -> None:
    directory, name = other_host
    hosts = (
        NamedHost("here"),
        NamedHost("there", ExecTarget(("env", f"TMUX_TMPDIR={directory}"))),
    )
    context = ServingState(Settings(socket_name=name, fleet=FleetSettings(hosts)))
    there = ["env", f"TMUX_TMPDIR={directory}", "tmux", "-L", name]
    try:
        async with Client(build_server(context, select_all())) as client:
            listed = await client.list_tools()
            for tool in listed.tools:
                if tool.name in MANAGE:
                    assert tool.input_schema["properties"]["host"]["enum"] == ["here", "there"]
            made = await call(
                client, "create_session", session_name="made-there", host="there",
                start_directory="~",
            )  # fmt: skip
            assert made["session_id"].startswith("$")
            window = await call(client, "create_window", session_name="on-there", host="there")
            assert window["session_name"] == "on-there"
            listing = await anyio.run_process([*there, "list-sessions", "-F", "#{session_name}"])
            assert "made-there" in listing.stdout.decode().split()
            shown = await anyio.run_process(
                [*there, "display-message", "-p", "-t", made["session_id"], "#{pane_current_path}"]
            )
            path = shown.stdout.decode().strip()
            assert path == os.path.expanduser("~")
    finally:
        await context.close()


def select_all() -> dict[str, Any]:
    return dict(select(BINDINGS, ["all"], several_hosts=True))
