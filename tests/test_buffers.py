"""The buffer tools (load_buffer, show_buffer, paste_buffer, delete_buffer, paste_text;
served on request) against real tmux, through the in-memory MCP client: content comes
back and reaches a pane's program byte for byte (NUL, control characters, lines that look
like control-mode framing), only buffers of schemux's names are read, pasted or deleted,
paste_text leaves no buffer, no target means the agent's pane, socket_name and host
reach other servers, and bad input is refused before any tmux work."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.lowlevel
import pytest
from mcp import Client

from schemux.config import Settings
from schemux.domain.buffers import paste_once
from schemux.errors import TmuxCommandError
from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import FAMILIES
from schemux.host_settings import ExecTarget, FleetSettings, NamedHost
from schemux.panes.targets import PaneInfo
from schemux.serving.selection import select
from schemux.serving.state import ServingState
from schemux.tmux.agent_session import AGENT_MARK
from schemux.tmux.server import TmuxServer
from tests.contexts import Contexts, client_of
from tests.support import (
    call,
    call_error,
    new_pane,
    remove_server,
    tagged_socket_name,
    tmux,
    until,
)

pytestmark = pytest.mark.anyio

BUFFERS = FAMILIES["buffers"]
SCHEMUX_NAME = re.compile(r"schemux_[0-9a-f]{32}_[A-Za-z0-9_.-]+")
CONTENTS = [
    "plain",
    "two\nlines\n",
    "nul\x00inside and \x01\x02\x1b[31m control \x7f",
    "%end 1700000000 1 0\n%begin 1 2 0\n%exit\n",  # control-mode framing, as data
    "quotes ' \" ` $(touch x) #{pane_id} #(true) ; kill-server",
    "é ☃ 𝄞 \u200b",
    "\r\n\r",
    "x" * 200_000 + "\n" + "y" * 10,
]


def raw_buffer(socket: str, name: str) -> bytes:
    """The buffer's bytes, as tmux itself writes them out."""
    done = subprocess.run(
        ["tmux", "-L", socket, "save-buffer", "-b", name, "-"], capture_output=True, check=True
    )
    return done.stdout


def buffer_names(socket: str) -> list[str]:
    return tmux(socket, "list-buffers", "-F", "#{buffer_name}").split()


def recording_pane(socket: str, record: Path, *, bracketed: bool = False) -> str:
    """A pane whose program writes every byte it is given into ``record`` (its terminal
    raw: no line discipline between), having asked for bracketed paste if ``bracketed``;
    its id once it reads."""
    ask = "printf '\\033[?2004h'; " if bracketed else ""
    script = f"{ask}stty raw -echo; echo ready; exec cat > {shlex.quote(str(record))}"
    pane = new_pane(socket, command=f"sh -c {shlex.quote(script)}")
    record.touch()
    return pane.pane_id


async def test_the_default_selection_serves_none_of_them() -> None:
    assert set(BUFFERS) == {
        "load_buffer", "show_buffer", "paste_buffer", "delete_buffer", "paste_text",
    }  # fmt: skip
    assert not set(BUFFERS) & set(select(BINDINGS, [], several_hosts=False))


@pytest.mark.parametrize("content", CONTENTS, ids=range(len(CONTENTS)))
async def test_content_comes_back_exactly(socket_client: Client, socket: str, content: str) -> None:
    loaded = await call(socket_client, "load_buffer", content=content, logical_name="exact")
    name = loaded["buffer_name"]
    assert SCHEMUX_NAME.fullmatch(name)
    assert name.endswith("_exact")
    assert raw_buffer(socket, name) == content.encode()
    shown = await call(socket_client, "show_buffer", buffer_name=name, max_lines=None)
    assert shown == {
        "buffer_name": name, "content": content, "content_truncated": False,
        "content_truncated_lines": 0,
    }  # fmt: skip
    await call(socket_client, "delete_buffer", buffer_name=name)
    assert name not in buffer_names(socket)


async def test_each_load_is_a_buffer_of_its_own(socket_client: Client, socket: str) -> None:
    first = (await call(socket_client, "load_buffer", content="1"))["buffer_name"]
    second = (await call(socket_client, "load_buffer", content="2"))["buffer_name"]
    assert first != second
    assert first.endswith("_buf")
    assert second.endswith("_buf")
    assert (await call(socket_client, "show_buffer", buffer_name=first))["content"] == "1"
    for name in (first, second):
        await call(socket_client, "delete_buffer", buffer_name=name)


async def test_show_keeps_the_last_lines(socket_client: Client) -> None:
    name = (await call(socket_client, "load_buffer", content="a\nb\nc\nd"))["buffer_name"]
    try:
        for max_lines, content, dropped in ((2, "c\nd", 2), (4, "a\nb\nc\nd", 0), (0, "", 4)):
            shown = await call(socket_client, "show_buffer", buffer_name=name, max_lines=max_lines)
            assert (shown["content"], shown["content_truncated_lines"]) == (content, dropped)
            assert shown["content_truncated"] is (dropped > 0)
    finally:
        await call(socket_client, "delete_buffer", buffer_name=name)


async def test_a_person_s_buffers_are_never_read_pasted_or_deleted(
    socket_client: Client, socket: str
) -> None:
    pane = new_pane(socket)
    for name in ("secret", "schemux_0123_x", "buffer0", "schemux_" + "0" * 32 + "_a b"):
        tmux(socket, "set-buffer", "-b", name, "a person's")
        for tool, arguments in (
            ("show_buffer", {}),
            ("delete_buffer", {}),
            ("paste_buffer", {"pane_id": pane.pane_id}),
        ):
            error = await call_error(socket_client, tool, buffer_name=name, **arguments)
            assert "is not a buffer name load_buffer gave" in error, (tool, error)
        assert raw_buffer(socket, name) == b"a person's"
        tmux(socket, "delete-buffer", "-b", name)


async def test_paste_reaches_the_program_exactly(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    text = "one\ntwo \x00\x01\x1b[0m é ; $(touch x)\n"
    typed = text.replace("\n", "\r").encode()  # a paste's line feed is Enter
    plain = recording_pane(socket, tmp_path / "plain")
    await until(lambda: "ready" in tmux(socket, "capture-pane", "-p", "-t", plain))
    name = (await call(socket_client, "load_buffer", content=text))["buffer_name"]
    await call(socket_client, "paste_buffer", buffer_name=name, pane_id=plain)
    await until(lambda: (tmp_path / "plain").read_bytes() == typed)
    await call(socket_client, "paste_buffer", buffer_name=name, pane_id=plain, bracket=False)
    await until(lambda: (tmp_path / "plain").read_bytes() == typed * 2)  # the buffer is kept
    bracketed = recording_pane(socket, tmp_path / "bracketed", bracketed=True)
    await until(lambda: "ready" in tmux(socket, "capture-pane", "-p", "-t", bracketed))
    await call(socket_client, "paste_text", text=text, pane_id=bracketed)
    wrapped = b"\x1b[200~" + typed + b"\x1b[201~"
    await until(lambda: (tmp_path / "bracketed").read_bytes() == wrapped)
    await call(socket_client, "paste_text", text=text, pane_id=bracketed, bracket=False)
    await until(lambda: (tmp_path / "bracketed").read_bytes() == wrapped + typed)
    await call(socket_client, "delete_buffer", buffer_name=name)
    assert not [n for n in buffer_names(socket) if n.startswith("schemux_")]


async def test_paste_text_leaves_no_buffer_whatever_happens(
    socket_client: Client, socket: str
) -> None:
    dead = new_pane(socket, command="true", remain_on_exit=True)
    error = await call_error(socket_client, "paste_text", text="x", pane_id=dead.pane_id)
    assert error.startswith(f"pane {dead.pane_id} is dead")
    name = (await call(socket_client, "load_buffer", content="y"))["buffer_name"]
    error = await call_error(socket_client, "paste_buffer", buffer_name=name, pane_id=dead.pane_id)
    assert error.startswith(f"pane {dead.pane_id} is dead")
    await call(socket_client, "delete_buffer", buffer_name=name)
    live = new_pane(socket)
    await call(socket_client, "paste_text", text="# pasted", pane_id=live.pane_id)
    assert not [n for n in buffer_names(socket) if n.startswith("schemux_")]


async def test_a_buffer_that_is_not_there_is_not_found(socket_client: Client, socket: str) -> None:
    pane = new_pane(socket)
    name = (await call(socket_client, "load_buffer", content="gone"))["buffer_name"]
    await call(socket_client, "delete_buffer", buffer_name=name)
    for tool, arguments in (
        ("show_buffer", {}),
        ("delete_buffer", {}),
        ("paste_buffer", {"pane_id": pane.pane_id}),
    ):
        error = await call_error(socket_client, tool, buffer_name=name, **arguments)
        assert error.startswith(f"no buffer {name} on socket name"), (tool, error)


async def test_no_target_means_the_agent_pane(
    socket_client: Client, socket: str, tmp_path: Path
) -> None:
    agent = recording_pane(socket, tmp_path / "agent")
    tmux(socket, "set-option", "-p", "-t", agent, AGENT_MARK, "1")
    later = new_pane(socket)
    try:
        await until(lambda: "ready" in tmux(socket, "capture-pane", "-p", "-t", agent))
        await call(socket_client, "paste_text", text="mine")
        name = (await call(socket_client, "load_buffer", content=" too"))["buffer_name"]
        await call(socket_client, "paste_buffer", buffer_name=name)
        await until(lambda: (tmp_path / "agent").read_bytes() == b"mine too")
        await call(socket_client, "delete_buffer", buffer_name=name)
    finally:
        tmux(socket, "kill-pane", "-t", agent, check=False)
        tmux(socket, "kill-session", "-t", later.session_id, check=False)


async def test_socket_name_reaches_another_server(
    socket_client: Client, socket: str, other_tmux_socket: str
) -> None:
    loaded = await call(
        socket_client, "load_buffer", content="there", socket_name=other_tmux_socket
    )
    name = loaded["buffer_name"]
    assert raw_buffer(other_tmux_socket, name) == b"there"
    assert name not in buffer_names(socket)
    assert "no buffer" in await call_error(socket_client, "show_buffer", buffer_name=name)
    shown = await call(
        socket_client, "show_buffer", buffer_name=name, socket_name=other_tmux_socket
    )
    assert shown["content"] == "there"
    await call(socket_client, "delete_buffer", buffer_name=name, socket_name=other_tmux_socket)
    assert name not in buffer_names(other_tmux_socket)


@pytest.mark.parametrize(
    ("tool", "arguments", "refusal"),
    [
        ("load_buffer", {"content": "x", "logical_name": "a b"}, "logical_name 'a b' is not"),
        ("load_buffer", {"content": "x", "logical_name": "x" * 65}, "is not a buffer label"),
        ("load_buffer", {"content": "x", "logical_name": "#{pane_id}"}, "is not a buffer label"),
        ("load_buffer", {"content": "\udcff"}, "a lone surrogate"),
        ("load_buffer", {"content": ""}, "content is empty: tmux keeps no empty buffer"),
        ("paste_text", {"text": ""}, "text is empty"),
        ("show_buffer", {"buffer_name": "secret"}, "buffer_name 'secret' is not a buffer name"),
        (
            "show_buffer",
            {"buffer_name": "schemux_" + "0" * 32 + "_x", "max_lines": -1},
            "max_lines",
        ),
        ("paste_buffer", {"buffer_name": "-b"}, "buffer_name '-b' is not a buffer name"),
        ("delete_buffer", {"buffer_name": "x;kill-server"}, "is not a buffer name"),
        ("delete_buffer", {"buffer_name": "schemux_" + "0" * 32 + "_x\n"}, "is not a buffer name"),
        ("paste_text", {"text": "x", "pane_id": "1"}, "pane_id '1' is not a tmux pane id"),
        ("paste_text", {"text": "x", "target": "%1"}, "did you mean pane_id?"),
        (
            "paste_buffer",
            {"buffer_name": "schemux_" + "0" * 32 + "_x", "session_name": ""},
            "session_name is empty",
        ),
    ],
)
async def test_bad_input_is_refused_before_any_tmux_work(
    make_context: Contexts, tool: str, arguments: dict[str, Any], refusal: str
) -> None:
    """On the configured socket, where no server runs: a call that reached tmux would
    start it."""
    never = tagged_socket_name("buffers-never")
    try:
        async with client_of(make_context(socket_name=never)) as client:
            error = await call_error(client, tool, **arguments)
        assert refusal in error
        assert tmux(never, "list-sessions", check=False) == ""  # never started
    finally:
        remove_server(never)


def tmux_there(host: tuple[str, str], *args: str) -> bytes:
    """What tmux prints of ``args`` on the server of ``other_host``."""
    directory, name = host
    there = ["env", f"TMUX_TMPDIR={directory}", "tmux", "-L", name, *args]
    return subprocess.run(there, capture_output=True, check=False).stdout


async def test_a_buffer_name_carries_its_host(other_host: tuple[str, str]) -> None:
    directory, name = other_host
    hosts = (
        NamedHost("here"),
        NamedHost("there", ExecTarget(("env", f"TMUX_TMPDIR={directory}"))),
    )
    context = ServingState(Settings(socket_name=name, fleet=FleetSettings(hosts)))
    try:
        served = dict(select(BINDINGS, ["all"], several_hosts=True))
        async with client_of(context, served) as client:
            loaded = await call(client, "load_buffer", content="on there\x00", host="there")
            stamped = loaded["buffer_name"]
            assert stamped.startswith("there:schemux_")
            plain = stamped.removeprefix("there:")
            assert tmux_there(other_host, "save-buffer", "-b", plain, "-") == b"on there\x00"
            shown = await call(client, "show_buffer", buffer_name=stamped)  # routed by its host
            assert (shown["buffer_name"], shown["content"]) == (stamped, "on there\x00")
            error = await call_error(client, "delete_buffer", buffer_name=stamped, host="here")
            assert "is of host there" in error
            await call(client, "delete_buffer", buffer_name=stamped)
            assert plain.encode() not in tmux_there(other_host, "list-buffers")
    finally:
        await context.close()


class PasteFails:
    """A stand-in server that takes every command, but fails (or, ``hangs``, never
    answers) a paste: what a paste_text left behind is in ``commands``."""

    def __init__(self, *, hangs: bool = False) -> None:
        self.hangs = hangs
        self.commands: list[tuple[str, ...]] = []

    async def exchange(self, *args: str, given: bytes = b"") -> bytes:
        self.commands.append(args)
        return b""

    async def run(self, *args: str) -> list[str]:
        await anyio.lowlevel.checkpoint()  # where a cancelled call stops, unless it is shielded
        self.commands.append(args)
        if "paste-buffer" in args:
            if self.hangs:
                await anyio.sleep_forever()
            raise TmuxCommandError("paste-buffer", "can't find pane: %9")
        return []

    def describe(self) -> str:
        return "a stand-in server"

    def loaded_and_deleted(self) -> bool:
        """Whether the buffer loaded was deleted last."""
        name = self.commands[0][2]
        return self.commands[0][0] == "load-buffer" and self.commands[-1] == (
            "delete-buffer", "-b", name,
        )  # fmt: skip


PANE = PaneInfo("%9", "@9", "$9", "s", False, False, "bash", 1, "/", "/tmp/s")


async def test_a_paste_that_fails_or_is_cancelled_deletes_its_buffer() -> None:
    failing = PasteFails()
    with pytest.raises(TmuxCommandError):
        await paste_once(cast(TmuxServer, failing), PANE, "x", bracket=True)
    assert failing.loaded_and_deleted()
    hanging = PasteFails(hangs=True)
    with anyio.move_on_after(0.2):
        await paste_once(cast(TmuxServer, hanging), PANE, "x", bracket=True)
    assert hanging.loaded_and_deleted()
