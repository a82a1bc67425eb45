"""The teardown tools (served only when asked for) against real tmux, through the
in-memory MCP client: each closes exactly what it names (a session by its exact name,
never a prefix), never schemux's own session, a held pane or what this MCP server runs
in; kill_server kills only a running server it has identified, and the configured one
comes back at the next call."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import FAMILIES
from schemux.names import OWNED_SESSION
from schemux.panes.claims import BUSY_OPTION
from schemux.serving.selection import select
from schemux.serving.state import ServingState
from schemux.shell.abandoned import PANE_OPTION
from schemux.system.processes import this_process
from schemux.tmux.references import ServerIdentity
from tests.contexts import Contexts, client_of
from tests.support import (
    call,
    call_error,
    new_pane,
    remove_server,
    server_identity,
    spares_started,
    tagged_socket_name,
    tmux,
    until,
)

pytestmark = pytest.mark.anyio

TEARDOWN = FAMILIES["teardown"]


def sessions(socket: str) -> list[str]:
    return tmux(socket, "list-sessions", "-F", "#{session_name}", check=False).split("\n")[:-1]


def kill_session(socket: str, session_id: str) -> None:
    tmux(socket, "kill-session", "-t", session_id, check=False)


async def test_they_are_served_only_when_asked_for() -> None:
    assert set(TEARDOWN) == {"kill_pane", "kill_window", "kill_session", "kill_server"}
    assert not set(TEARDOWN) & set(select(BINDINGS, [], several_hosts=False))
    for family in FAMILIES:
        if family != "teardown":
            assert not set(TEARDOWN) & set(select(BINDINGS, [family], several_hosts=False))
    assert set(TEARDOWN) <= set(select(BINDINGS, ["teardown"], several_hosts=False))


async def test_each_closes_what_it_names(socket_client: Client, socket: str) -> None:
    pane = new_pane(socket)
    second = tmux(socket, "split-window", "-d", "-P", "-F", "#{pane_id}", "-t", pane.pane_id,
                  "cat").strip()  # fmt: skip
    window = tmux(socket, "new-window", "-d", "-P", "-F", "#{window_id}", "-t",
                  f"{pane.session_id}:", "cat").strip()  # fmt: skip
    try:
        killed = await call(socket_client, "kill_pane", pane_id=second)
        assert killed == {"result": f"Pane killed: {second}"}
        assert second not in tmux(socket, "list-panes", "-a", "-F", "#{pane_id}").split()
        again = await call_error(socket_client, "kill_pane", pane_id=second)
        assert f"no pane matches pane_id='{second}'" in again
        assert (await call(socket_client, "kill_window", window_id=window))["result"] == (
            f"Window killed: {window}"
        )
        assert window not in tmux(socket, "list-windows", "-a", "-F", "#{window_id}").split()
        assert f"no window '{window}'" in await call_error(
            socket_client, "kill_window", window_id=window
        )
        result = await call(socket_client, "kill_session", session_id=pane.session_id)
        assert result["result"] == f"Session killed: {pane.session_id} ('{pane.session_name}')"
        assert pane.session_name not in sessions(socket)
    finally:
        kill_session(socket, pane.session_id)


async def test_a_session_is_killed_by_its_exact_name(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    """tmux's -t would take a name as a prefix, or read ':', '.' and '=' in it; schemux
    compares names, so only the session with that very name goes."""
    marker = tmp_path / "ran"
    names = ["a", "ab", "-t", "#{session_name}", f"$(touch {marker})", "x ; kill-server"]
    made = {}
    for name in names:
        made[name] = tmux(socket, "new-session", "-d", "-P", "-F", "#{session_id}", "-s",
                          name.replace("#", "##"), "cat").strip()  # fmt: skip
    try:
        for name in names:
            await call(socket_client, "kill_session", session_name=name)
            left = sessions(socket)
            assert name not in left
            assert all(other in left for other in names[names.index(name) + 1 :])
        assert "keepalive" in sessions(socket)
        assert not marker.exists()
    finally:
        for session_id in made.values():
            kill_session(socket, session_id)


async def test_schemux_own_session_and_held_panes_are_never_closed(
    socket_client: Client, socket: str
) -> None:
    await call(socket_client, "get_server_info")
    await call(socket_client, "list_sessions")  # the owned session made
    control = tmux(socket, "display-message", "-p", "-t", f"={OWNED_SESSION}:",
                   "#{pane_id} #{window_id} #{session_id}").split()  # fmt: skip
    program = tmux(socket, "new-window", "-d", "-P", "-F", "#{window_id} #{pane_id}",
                   "-t", f"={OWNED_SESSION}:", "cat").split()  # fmt: skip
    held = new_pane(socket)
    try:
        for tool, arguments in (
            ("kill_pane", {"pane_id": control[0]}),
            ("kill_pane", {"pane_id": program[1]}),
            ("kill_window", {"window_id": control[1]}),
            ("kill_window", {"window_id": program[0]}),
            ("kill_session", {"session_name": OWNED_SESSION}),
            ("kill_session", {"session_id": control[2]}),
        ):
            error = await call_error(socket_client, tool, **arguments)
            # the control clients' window is none a tool sees; the rest are refused
            assert any(
                said in error for said in ("schemux's own session", "control clients", control[1])
            ), error
        claim = f"{this_process().tag} {'0' * 12}"  # a live run_command call's
        tmux(socket, "set-option", "-p", "-t", held.pane_id, BUSY_OPTION, claim)
        for tool, arguments in (
            ("kill_pane", {"pane_id": held.pane_id}),
            ("kill_window", {"window_id": held.window_id}),
            ("kill_session", {"session_id": held.session_id}),
            ("kill_server", {}),
        ):
            error = await call_error(socket_client, tool, **arguments)
            assert f"pane {held.pane_id} runs a run_command call now" in error, (tool, error)
        tmux(socket, "set-option", "-p", "-u", "-t", held.pane_id, BUSY_OPTION)
        tmux(socket, "set-option", "-p", "-t", held.pane_id, PANE_OPTION, "someone")
        error = await call_error(socket_client, "kill_session", session_id=held.session_id)
        assert f"pane {held.pane_id} runs a program schemux started" in error
        assert held.session_name in sessions(socket)
        assert OWNED_SESSION in sessions(socket)
        assert tmux(socket, "display-message", "-p", "alive").strip() == "alive"
    finally:
        tmux(socket, "kill-window", "-t", program[0], check=False)
        kill_session(socket, held.session_id)


async def test_what_this_mcp_server_runs_in_is_never_closed(
    socket_client: Client, socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if schemux ran in a pane of this server (its TMUX and TMUX_PANE)."""
    pane = new_pane(socket)
    socket_path = tmux(socket, "display-message", "-p", "#{socket_path}").strip()
    pid = tmux(socket, "display-message", "-p", "#{pid}").strip()
    monkeypatch.setenv("TMUX", f"{socket_path},{pid},0")
    monkeypatch.setenv("TMUX_PANE", pane.pane_id)
    try:
        for tool, arguments in (
            ("kill_pane", {"pane_id": pane.pane_id}),
            ("kill_window", {"window_id": pane.window_id}),
            ("kill_session", {"session_id": pane.session_id}),
        ):
            error = await call_error(socket_client, tool, **arguments)
            assert "holds the pane this MCP server runs in" in error, (tool, error)
        error = await call_error(socket_client, "kill_server")
        assert "this MCP server runs inside the tmux server" in error
        assert pane.session_name in sessions(socket)
    finally:
        kill_session(socket, pane.session_id)


async def test_kill_server_kills_another_server_it_identified(
    make_context: Contexts, socket: str
) -> None:
    other = tagged_socket_name("teardown-other")
    tmux(other, "-f", "/dev/null", "new-session", "-d", "cat")
    try:
        async with client_of(make_context(socket_name=socket)) as client:
            pid = server_identity(other).pid
            result = await call(client, "kill_server", socket_name=other)
            assert result["result"] == (
                f"Server killed: socket name '{other}' (pid {pid}, 1 sessions)"
            )
            assert tmux(other, "list-sessions", check=False) == ""
            again = await call_error(client, "kill_server", socket_name=other)
            assert f"no tmux server is running on socket name '{other}'" in again
            assert tmux(other, "list-sessions", check=False) == ""  # never started
            error = await call_error(client, "kill_server", socket_name="../x")
            assert "socket_name '../x' is not a tmux socket name" in error
        assert tmux(socket, "display-message", "-p", "alive").strip() == "alive"
    finally:
        remove_server(other)


async def test_a_server_whose_socket_is_not_the_one_meant_is_not_killed(
    make_context: Contexts,
) -> None:
    """A server started on one path and reached on another (its socket moved there)
    reports its first path: it cannot be told to be the server the address means (nor
    can a control client reach it by that path), and it is left running."""
    directory = Path(tempfile.mkdtemp(prefix="sxk", dir="/tmp"))
    first, moved = directory / "first", directory / "moved"
    await anyio.run_process(
        ["tmux", "-S", str(first), "-f", "/dev/null", "new-session", "-d", "cat"]
    )
    try:
        first.rename(moved)
        async with client_of(make_context(socket_path=str(moved))) as client:
            error = await call_error(client, "kill_server")
        assert "Server killed" not in error
        alive = await anyio.run_process(["tmux", "-S", str(moved), "display-message", "-p", "ok"])
        assert alive.stdout == b"ok\n"
    finally:
        await anyio.run_process(["tmux", "-S", str(moved), "kill-server"], check=False)
        for path in (first, moved):
            path.unlink(missing_ok=True)
        directory.rmdir()


async def test_a_killed_servers_clients_are_known_ended_when_the_kill_returns(
    make_context: Contexts,
) -> None:
    """The kill returns once schemux's own control clients of that server have ended
    too: a call right after it starts the server again, rather than send its first
    command on a client that has not read its end yet (which failed a call once, on a
    loaded machine: "the tmux server ... exited or detached schemux's control client")."""
    socket = tagged_socket_name("teardown-clients")
    tmux(socket, "new-session", "-d")
    try:
        await kill_with_slow_clients(make_context(socket_name=socket), socket)
    finally:
        remove_server(socket)


async def kill_with_slow_clients(context: ServingState, socket: str) -> None:
    from schemux.domain.teardown import kill_identified

    server = context.services.tmux()
    await spares_started(server)  # the shared client and its spares
    await until(lambda: len(client_pids(socket)) >= 2)
    # schemux's clients slow to see the end, as on a loaded machine: stopped a while
    stopped = client_pids(socket)

    def go_on() -> None:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    handle = asyncio.get_running_loop().call_later(0.5, go_on)
    try:
        await kill_identified(server, server_identity(socket))
        assert not server.engine.connected()
    finally:
        handle.cancel()
        go_on()


def client_pids(socket: str) -> list[int]:
    listed = tmux(socket, "list-clients", "-F", "#{client_pid}", check=False)
    return [int(pid) for pid in listed.split()]


async def test_a_server_started_anew_is_not_killed_for_the_one_identified(
    make_context: Contexts, socket: str
) -> None:
    """The kill is tmux's own test of the identified pid and start time: a server that
    is another (here: one identified with another pid) is left running."""
    from schemux.domain.teardown import kill_identified

    context = make_context(socket_name=socket)
    server = context.services.tmux()
    real = server_identity(socket)
    wrong = ServerIdentity(real.pid + 1, real.start_time, real.socket_path)
    with pytest.raises(Exception, match="is another than the one identified"):
        await kill_identified(server, wrong)
    assert server_identity(socket) == real


async def test_the_configured_server_comes_back_after_it_is_killed(
    make_context: Contexts,
) -> None:
    """schemux's engine loses its control client with the server; the next call starts
    the server again, with a new agent's session, and works in it."""
    socket = tagged_socket_name("teardown-configured")
    try:
        async with client_of(make_context(socket_name=socket)) as client:
            first = await call(client, "run_command", command="echo before")
            assert first["output"] == ["before"]
            started = await call(client, "start_program", argv=["sleep", "30"])
            error = await call_error(client, "kill_server")
            assert "runs a program schemux started" in error
            await call(client, "stop_program", programId=started["programId"])
            before = server_identity(socket)
            result = await call(client, "kill_server")
            assert result["result"].startswith(f"Server killed: socket name '{socket}' (pid ")
            assert result["result"].endswith(
                "schemux starts it again, with a new agent's session, at the next call"
            )
            assert tmux(socket, "list-sessions", check=False) == ""
            again = await call(client, "run_command", command="echo after")
            assert again["output"] == ["after"]
            assert server_identity(socket) != before
            info = await call(client, "get_server_info")
            assert info["is_alive"] is True
    finally:
        remove_server(socket)


@pytest.mark.parametrize(
    ("tool", "arguments", "refusal"),
    [
        ("kill_pane", {}, "Invalid arguments for kill_pane"),
        ("kill_pane", {"pane_id": "1"}, "pane_id '1' is not a tmux pane id"),
        ("kill_window", {"window_id": "%1"}, "window_id '%1' is not a tmux window id"),
        ("kill_session", {"session_id": "@1"}, "session_id '@1' is not a tmux session id"),
        ("kill_session", {"session_name": ""}, "session_name is empty"),
        ("kill_server", {"socket_name": "a/b"}, "socket_name 'a/b' is not a tmux socket"),
    ],
)
async def test_bad_input_is_refused_before_any_tmux_work(
    make_context: Contexts, tool: str, arguments: dict[str, Any], refusal: str
) -> None:
    never = tagged_socket_name("teardown-never")
    async with client_of(make_context(socket_name=never)) as client:
        error = await call_error(client, tool, **arguments)
    assert refusal in error
    assert "no tmux server is running" not in error
    assert tmux(never, "list-sessions", check=False) == ""
