"""pipe_pane (served on request) against real tmux, through the in-memory MCP client: a
pane's output reaches the file, whatever the path holds (it is one word of a fixed
command, nothing in it runs), the file is private, a pipe is stopped when asked, a
pane piped already and a program's pane are refused (a program's copy stays whole), no
target means the agent's pane, and bad input is refused before any tmux work."""

from __future__ import annotations

import stat
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from schemux.errors import preview
from schemux.generated.bindings import BINDINGS
from schemux.serving.selection import select
from schemux.tmux.agent_session import AGENT_MARK
from tests.contexts import Contexts, client_of
from tests.support import (
    Pane,
    call,
    call_error,
    new_pane,
    pane_format,
    remove_server,
    tagged_socket_name,
    tmux,
    until,
)

pytestmark = pytest.mark.anyio


def say(pane: Pane, text: str) -> None:
    """Make the pane's shell print ``text`` (typed as a command that prints it)."""
    tmux(pane.socket_name, "send-keys", "-t", pane.pane_id, "-l", f"echo {text}-$((1+1))")
    tmux(pane.socket_name, "send-keys", "-t", pane.pane_id, "Enter")


def holds(path: Path, text: str) -> bool:
    return path.exists() and text.encode() in path.read_bytes()


async def test_the_default_selection_does_not_serve_it() -> None:
    assert "pipe_pane" in BINDINGS
    assert "pipe_pane" not in select(BINDINGS, [], several_hosts=False)
    assert "pipe_pane" in select(BINDINGS, ["pipes"], several_hosts=False)


@pytest.mark.parametrize(
    "name",
    [
        "plain.log",
        'it\'s "quoted".log',
        "$(touch {marker})",
        "`touch {marker}`",
        "#(touch {marker})",
        "#{pane_id}",
        "##",
        "a;b ; touch {marker}",
        "-n",
        "two\nlines",
        "é ☃",
        "back\\slash",
    ],
)
async def test_output_reaches_the_file_and_nothing_in_its_path_runs(
    socket_client: Client, socket: str, tmp_path: Path, name: str
) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / name.replace("{marker}", str(marker))
    path.parent.mkdir(parents=True, exist_ok=True)  # the marker's path holds slashes
    pane = new_pane(socket)
    piped = await call(socket_client, "pipe_pane", pane_id=pane.pane_id, output_path=str(path))
    assert piped["result"] == f"Pane {pane.pane_id}'s output is piped into {path} (appended to)"
    assert pane_format(pane, "#{pane_pipe}") == "1"
    tag = uuid.uuid4().hex[:8]
    say(pane, tag)
    await until(lambda: holds(path, f"{tag}-2"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the pane's output is the user's
    stopped = await call(socket_client, "pipe_pane", pane_id=pane.pane_id)
    assert stopped["result"] == f"Pane {pane.pane_id}'s pipe: stopped"
    assert pane_format(pane, "#{pane_pipe}") == "0"
    assert not marker.exists()
    again = await call(socket_client, "pipe_pane", pane_id=pane.pane_id)
    assert again["result"] == f"Pane {pane.pane_id}'s pipe: had none open"


async def test_append_keeps_the_file_and_false_empties_it(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    pane = new_pane(socket)
    for append, kept in ((True, True), (False, False)):
        path = tmp_path / f"{append}.log"
        path.write_text("before\n")
        path.chmod(0o644)
        await call(
            socket_client, "pipe_pane", pane_id=pane.pane_id, output_path=str(path), append=append
        )
        tag = uuid.uuid4().hex[:8]
        say(pane, tag)
        await until(lambda: holds(path, f"{tag}-2"))  # noqa: B023 (awaited here)
        await call(socket_client, "pipe_pane", pane_id=pane.pane_id)
        assert path.read_text().startswith("before\n") is kept
        assert stat.S_IMODE(path.stat().st_mode) == 0o644  # a file there keeps its mode


async def test_a_pane_piped_already_keeps_its_pipe(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    pane = new_pane(socket)
    theirs = tmp_path / "theirs.log"
    tmux(socket, "pipe-pane", "-O", "-t", pane.pane_id, f"cat > {theirs}")
    error = await call_error(
        socket_client, "pipe_pane", pane_id=pane.pane_id, output_path=str(tmp_path / "mine.log")
    )
    assert error.startswith(f"pane {pane.pane_id} pipes its output already")
    tag = uuid.uuid4().hex[:8]
    say(pane, tag)
    await until(lambda: holds(theirs, f"{tag}-2"))
    assert not (tmp_path / "mine.log").exists()


async def test_a_program_s_pane_is_refused_and_its_output_kept(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    """A program's pipe is the copy its output is read from: replaced or stopped, the
    program's output would be lost."""
    started = await call(
        socket_client, "start_program", argv=["sh", "-c", "read line; echo got-$line; sleep 30"]
    )
    program, pane_id = started["programId"], started["paneId"]
    try:
        for arguments in ({"output_path": str(tmp_path / "stolen.log")}, {}):
            error = await call_error(socket_client, "pipe_pane", pane_id=pane_id, **arguments)
            assert error.startswith(f"pane {pane_id} runs a program schemux started"), error
        assert tmux(socket, "display-message", "-p", "-t", pane_id, "#{pane_pipe}") == "1\n"
        tmux(socket, "send-keys", "-t", pane_id, "-l", "it")
        tmux(socket, "send-keys", "-t", pane_id, "Enter")
        text, cursor = "", dict[str, str]()
        for _ in range(5):  # each read waits for output new since the last
            read = await call(socket_client, "read_program", programId=program, timeoutMs=10_000,
                              **cursor)  # fmt: skip
            text, cursor = text + read["text"], {"cursor": read["cursor"]}
            if "got-it" in text:
                break
        assert "got-it" in text
        assert not (tmp_path / "stolen.log").exists()
    finally:
        await call(socket_client, "stop_program", programId=program)


async def test_no_target_means_the_agent_pane(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    agent = new_pane(socket)
    tmux(socket, "set-option", "-p", "-t", agent.pane_id, AGENT_MARK, "1")
    later = new_pane(socket)
    try:
        await call(socket_client, "pipe_pane", output_path=str(tmp_path / "agent.log"))
        assert pane_format(agent, "#{pane_pipe}") == "1"
        assert pane_format(later, "#{pane_pipe}") == "0"
        await call(socket_client, "pipe_pane")
        assert pane_format(agent, "#{pane_pipe}") == "0"
    finally:
        tmux(socket, "kill-session", "-t", agent.session_id, check=False)
        tmux(socket, "kill-session", "-t", later.session_id, check=False)


async def test_socket_name_pipes_a_pane_of_another_server(
    socket_client: Client, other_tmux_socket: str, tmp_path: Path
) -> None:
    there = new_pane(other_tmux_socket)
    path = tmp_path / "there.log"
    await call(socket_client, "pipe_pane", pane_id=there.pane_id, output_path=str(path),
               socket_name=other_tmux_socket)  # fmt: skip
    say(there, "there")
    await until(lambda: holds(path, "there-2"))
    await call(socket_client, "pipe_pane", pane_id=there.pane_id, socket_name=other_tmux_socket)
    assert pane_format(there, "#{pane_pipe}") == "0"


async def test_a_place_no_pipe_can_write_is_refused(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    pane = new_pane(socket)
    for path, problem in (
        (tmp_path / "missing" / "x.log", "its directory does not exist"),
        (tmp_path, "is a directory"),
    ):
        error = await call_error(
            socket_client, "pipe_pane", pane_id=pane.pane_id, output_path=str(path)
        )
        assert error.startswith(f"output_path {preview(str(path))}: {problem}"), error
    dead = new_pane(socket, command="true", remain_on_exit=True)
    error = await call_error(
        socket_client, "pipe_pane", pane_id=dead.pane_id, output_path=str(tmp_path / "dead.log")
    )
    assert error.startswith(f"pane {dead.pane_id} is dead")
    assert pane_format(pane, "#{pane_pipe}") == pane_format(dead, "#{pane_pipe}") == "0"


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        ({"output_path": "pane.log"}, "output_path 'pane.log' is not an absolute path"),
        ({"output_path": "~/pane.log"}, "is not an absolute path"),
        ({"output_path": ""}, "output_path '' is not an absolute path"),
        ({"output_path": "$HOME/x"}, "is not an absolute path"),
        ({"output_path": "/tmp/a\x00b"}, "output_path: contains a NUL"),
        ({"output_path": "/tmp/x", "pane_id": "1"}, "pane_id '1' is not a tmux pane id"),
        ({"outputPath": "/tmp/x"}, "did you mean output_path?"),
        ({"output_path": "/tmp/x", "append": "yes"}, "append"),
        ({"session_name": ""}, "session_name is empty"),
    ],
)
async def test_bad_input_is_refused_before_any_tmux_work(
    make_context: Contexts, arguments: dict[str, Any], refusal: str
) -> None:
    """On the configured socket, where no server runs: a call that reached tmux would
    start it."""
    never = tagged_socket_name("pipes-never")
    try:
        async with client_of(make_context(socket_name=never)) as client:
            error = await call_error(client, "pipe_pane", **arguments)
        assert refusal in error
        assert tmux(never, "list-sessions", check=False) == ""  # never started
    finally:
        remove_server(never)
