"""The tmux boundary: hostile values through every tool argument that reaches tmux.

Each value goes through a real MCP client to a real tmux server. Whatever it is, nothing
runs (a ``#(touch FILE)`` never makes FILE, the tmux server keeps running, a bystander
pane and the sessions stay as they were), and the value either arrives exactly (the
session of that very name, the server on that very socket, the command's own text) or
is refused with an error that names the field and quotes at most a short prefix of it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from schemux.errors import UnsendableArgument, preview
from schemux.host_settings import SshTarget
from schemux.hosts import Host
from schemux.names import OWNED_SESSION, socket_directory, socket_name_problem
from schemux.tmux.command import THEN, command_line
from schemux.tmux.control.framing import FrameReader
from schemux.tmux.format import SANITIZED_SINCE, decode, field, readable
from schemux.tmux.server import ServerAddress, TmuxServer
from schemux.versions import parse_version
from tests.contexts import Contexts, client_of
from tests.support import (
    SHELL,
    new_pane,
    private_tmux_server,
    remove_server,
    tagged_socket_name,
    tmux,
    wait_for_shell,
)

pytestmark = pytest.mark.anyio

LONG = "x" * 10_000
MARK = "{mark}"  # replaced by the path of a file that must never appear

HOSTILE = [
    ";",
    "\\;",
    "a ; kill-server",
    "#{pane_id}",
    f"#(touch {MARK})",
    "##",
    "#",
    "-t",
    "--",
    "-",
    "a\nb",
    "'",
    '"',
    'it\'s "q"',
    "\x1f",
    "a\tb",
    LONG,
    "\udcff\udcfe",
    "%",
    "%end 1796044169 269 1",
    "%exit",
    "{last}",
    "=",
    "~",
    "!",
    "$HOME",
    "$(touch {mark})",
]
IDS = [repr(value)[:24] for value in HOSTILE]


class Observer:
    """What no call may change, read through one control client of the module's server:
    the server (its pid), the sessions but schemux's own, and the bystander pane's
    screen and options. It is read twice around each of the module's thousand calls; a
    tmux client each time cost 2,400 processes a run."""

    def __init__(self, socket: str, bystander: str) -> None:
        self._client = subprocess.Popen(
            ["tmux", "-L", socket, "-C", "attach-session", "-f", "no-output,ignore-size",
             "-t", "=keepalive"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        commands = (
            "display-message", "-p", "#{pid}", THEN,
            "list-sessions", "-F", "#{session_id} #{session_windows}",
            "-f", f"#{{!=:#{{session_name}},{OWNED_SESSION}}}", THEN,
            "capture-pane", "-p", "-t", bystander, THEN,
            "show-options", "-p", "-t", bystander,
        )  # fmt: skip
        self._line = command_line(commands)
        self._commands = commands.count(THEN) + 1
        # schemux's own reader of control mode: with no answer queued, each block is
        # handed over whole (a block ends only at the %end that repeats its %begin)
        self._blocks: list[list[str]] = []
        self._frames = FrameReader(notification=lambda line: None, block=self._took, broken=_broke)
        self._read_blocks(1)  # the attach's own answer, before any command of ours

    def __call__(self) -> list[list[str]]:
        """Each command's answer (its lines, ``%error`` last if it failed)."""
        assert self._client.stdin is not None
        self._client.stdin.write(self._line)
        self._client.stdin.flush()
        return self._read_blocks(self._commands)

    def _read_blocks(self, count: int) -> list[list[str]]:
        self._blocks = []
        while len(self._blocks) < count:
            self._frames.feed(self._read())
        return self._blocks

    def _took(self, error: bool, lines: list[str]) -> None:
        self._blocks.append([*lines, "%error"] if error else lines)

    def _read(self) -> str:
        assert self._client.stdout is not None
        line = self._client.stdout.readline()
        if not line:
            raise AssertionError("the observing control client ended: the server is gone")
        return line.decode("utf-8", "surrogateescape").removesuffix("\n")

    def close(self) -> None:
        assert self._client.stdin is not None
        self._client.stdin.close()  # control mode's end
        try:
            self._client.wait(5)
        except subprocess.TimeoutExpired:
            self._client.kill()
            self._client.wait()
        assert self._client.stdout is not None
        self._client.stdout.close()


def _broke(reason: str) -> None:
    raise AssertionError(f"the observing control client is out of step: {reason}")


@dataclass(frozen=True)
class World:
    socket: str
    bystander: str  # a pane running cat that no call may change
    mark: Path
    observe: Observer

    def value(self, template: str) -> str:
        return template.replace(MARK, str(self.mark))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with private_tmux_server("boundary") as socket:
        bystander = new_pane(socket, command="cat")
        tmux(socket, "send-keys", "-t", bystander.pane_id, "-l", "bystander text")
        tmux(socket, "set-option", "-p", "-t", bystander.pane_id, "@guard", "unchanged")
        mark = tmp_path_factory.mktemp("boundary") / "ran"
        observer = Observer(socket, bystander.pane_id)
        try:
            yield World(socket, bystander.pane_id, mark, observer)
        finally:
            observer.close()


@pytest.fixture(scope="module")
async def shared_contexts(anyio_backend: str, world: World) -> AsyncIterator[Contexts]:
    """One context per transport for the module's tables (hundreds of values, each a
    test): over ssh, one master and one control client instead of one per value. Closed
    before ``world``'s server goes."""
    async with Contexts() as contexts:
        yield contexts


@pytest.fixture
async def client(
    anyio_backend: str, world: World, transport_ssh: SshTarget | None, shared_contexts: Contexts
) -> AsyncIterator[Client]:
    """A new MCP session of the transport's shared context, whose cursors a test's calls
    leave behind are forgotten after it; nothing else a call changes stays in the
    context (``observe`` checks the server after every call)."""
    async with shared_contexts.shared_client(socket_name=world.socket, ssh=transport_ssh) as mcp:
        yield mcp


@pytest.fixture
async def program_client(
    request: pytest.FixtureRequest,
    make_context: Contexts,
    world: World,
    transport_ssh: SshTarget | None,
) -> AsyncIterator[tuple[Client, str]]:
    """For the program tools, with the socket of their tmux server: over ssh one started
    over ssh, in the ssh session's pid namespace as on a real remote host (a server that
    is not is refused for programs, ``tests.test_programs_ssh``). A context of its own:
    programs outlive calls."""
    socket = (
        world.socket if transport_ssh is None else request.getfixturevalue("remote_tmux_socket")
    )
    async with client_of(make_context(socket_name=socket, ssh=transport_ssh)) as mcp_client:
        yield mcp_client, socket


async def call_checked(
    client: Client, world: World, tool: str, arguments: dict[str, Any]
) -> tuple[bool, str, dict[str, Any] | None]:
    """The call, with the proof that nothing else happened: (is_error, text, result)."""
    before = world.observe()
    result = await client.call_tool(tool, arguments)
    assert world.observe() == before
    assert not world.mark.exists()
    text = "\n".join(block.text for block in result.content if block.type == "text")
    assert "Traceback" not in text
    if result.is_error:  # an error never echoes a 10 kB value whole
        assert len(text) < 4000
        assert LONG not in text
    return bool(result.is_error), text, result.structured_content


def names_field(text: str, *names: str) -> bool:
    return any(name in text for name in names)


def is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text (JSON can also spell lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def refused_as_not_text(failed: bool, text: str, tool: str, field: str) -> bool:
    return failed and text.startswith(f"Invalid arguments for {tool}: {field}: contains U+")


@pytest.mark.parametrize("field", ["pane_id", "window_id", "session_id"])
@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
async def test_ids_are_refused_unless_they_are_ids(
    client: Client, world: World, field: str, value: str
) -> None:
    failed, text, _ = await call_checked(
        client, world, "run_command", {"command": "true", field: world.value(value)}
    )
    assert failed
    if is_text(value):
        assert f"{field} " in text
        assert "is not a tmux" in text
    else:
        assert refused_as_not_text(failed, text, "run_command", field)


@pytest.mark.parametrize(
    ("tool", "arguments", "names"),
    [
        ("capture_pane", lambda v: {"pane_id": v}, ("pane_id",)),
        ("run_shell_command", lambda v: {"command": "true", "paneId": v}, ("paneId", "pane_id")),
        ("start_program", lambda v: {"argv": ["true"], "fromPaneId": v}, ("fromPaneId",)),
        (
            "tmux_capture",
            lambda v: {"target": {"kind": "pane", "id": v, "generation": "g"}},
            ("target.id", "target"),
        ),
        ("capture_since", lambda v: {"pane_id": v}, ("pane_id",)),
        ("snapshot_pane", lambda v: {"pane_id": v}, ("pane_id",)),
    ],
    ids=[
        "capture_pane",
        "run_shell_command",
        "start_program",
        "tmux_capture",
        "capture_since",
        "snapshot_pane",
    ],
)
@pytest.mark.parametrize("value", [*HOSTILE, "%0\n", "%0;"], ids=[*IDS, "nl", "semi"])
async def test_pane_id_fields_refuse_anything_but_an_id(
    client: Client,
    world: World,
    tool: str,
    arguments: Any,
    names: tuple[str, ...],
    value: str,
) -> None:
    failed, text, _ = await call_checked(client, world, tool, arguments(world.value(value)))
    assert failed
    assert names_field(text, *names), text


@pytest.mark.parametrize("value", [*HOSTILE, "%0\n", "%0;"], ids=[*IDS, "nl", "semi"])
async def test_a_batch_operation_refuses_a_pane_id_that_is_not_one(
    client: Client, world: World, value: str
) -> None:
    operations = [{"keys": "x", "pane_id": world.value(value)}]
    failed, text, result = await call_checked(
        client, world, "send_keys_batch", {"operations": operations}
    )
    if not is_text(value):
        assert refused_as_not_text(failed, text, "send_keys_batch", "operations[0].pane_id")
        return
    assert not failed, text
    assert result is not None
    assert result["failed"] == 1
    assert result["stopped_at"] == 0
    assert "pane_id" in result["results"][0]["error"]


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
async def test_a_channel_is_a_name_or_refused(client: Client, world: World, value: str) -> None:
    """A channel name reaches tmux's wait-for as exactly that name (even ``-t`` or
    ``--``), or is refused naming it; a cursor never reaches tmux at all."""
    name = world.value(value)
    failed, text, _ = await call_checked(client, world, "signal_channel", {"channel": name})
    if failed:
        assert "channel" in text
        failed, text, _ = await call_checked(
            client, world, "wait_for_channel", {"channel": name, "timeout": 0.1}
        )
        assert failed
        assert "channel" in text
    else:
        assert text == f"Channel {name!r} signalled"
        # the signal is kept on exactly that channel: a wait on it returns at once
        failed, text, _ = await call_checked(
            client, world, "wait_for_channel", {"channel": name, "timeout": 5}
        )
        assert not failed, text
    failed, text, _ = await call_checked(client, world, "capture_since", {"cursor": name})
    assert failed


def make_session(world: World, name: str) -> str | None:
    """A session named exactly ``name`` with an idle shell, when tmux can hold that name
    (it changes ':' and '.', and escapes tabs and newlines); its pane id, or None."""
    if not name or "\x00" in name or len(name) > 1000:
        return None
    escaped = name.replace("#", "##")  # new-session -s expands formats
    created = subprocess_tmux(
        world.socket,
        [
            *("new-session", "-d", "-s", escaped, "-x", "100", "-y", "10", "-P", "-F"),
            *("#{pane_id}", "-e", "HISTFILE=/dev/null", "-e", "LANG=C.UTF-8", SHELL),
        ],
    )
    if created is None:
        return None
    pane_id = created.strip()
    stored = subprocess_tmux(
        world.socket, ["display-message", "-p", "-t", pane_id, "#{session_name}"]
    )
    if stored is None or stored.removesuffix("\n") != name:
        subprocess_tmux(world.socket, ["kill-pane", "-t", pane_id])
        return None
    return pane_id


def subprocess_tmux(socket: str, args: list[str]) -> str | None:
    import subprocess

    done = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, check=False)
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
async def test_session_name_is_matched_exactly(client: Client, world: World, value: str) -> None:
    name = world.value(value)
    pane_id = make_session(world, name)
    if value in ("#{pane_id}", f"#(touch {MARK})", "-t", "%exit", "{last}", "a ; kill-server"):
        assert pane_id is not None  # so the table does try names that do exist
    try:
        if pane_id is not None:
            wait_for_shell_in(world, pane_id)
        failed, text, result = await call_checked(
            client, world, "run_command", {"command": "echo here", "session_name": name}
        )
        if not is_text(name):
            assert refused_as_not_text(failed, text, "run_command", "session_name")
        elif pane_id is None:  # no session can have this name: nothing matches it
            assert failed
            assert "no pane matches session_name=" in text
        else:
            assert not failed, text
            assert result is not None
            assert result["pane_id"] == pane_id
            assert result["output"] == ["here"]
    finally:
        if pane_id is not None:
            tmux(world.socket, "kill-pane", "-t", pane_id)


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
async def test_the_inspect_tools_match_a_session_name_exactly(
    client: Client, world: World, value: str
) -> None:
    """A session's name is compared by schemux (never a tmux target): the session that
    has it, or none."""
    name = world.value(value)
    pane_id = make_session(world, name)
    try:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("get_session_info", {}),
            ("list_windows", {}),
            ("show_environment", {}),
            ("search_panes", {"pattern": "no such text"}),
        ]
        for tool, arguments in calls:
            failed, text, result = await call_checked(
                client, world, tool, {**arguments, "session_name": name}
            )
            if not is_text(name):
                assert refused_as_not_text(failed, text, tool, "session_name")
            elif pane_id is None:
                assert failed
                assert "session_name" in text, text
            else:
                assert not failed, text
                assert result is not None
        if pane_id is not None:
            failed, text, result = await call_checked(
                client, world, "get_session_info", {"session_name": name}
            )
            assert result is not None
            assert result["active_pane_id"] == pane_id
    finally:
        if pane_id is not None:
            tmux(world.socket, "kill-pane", "-t", pane_id)


@pytest.mark.parametrize(
    ("tool", "field", "command"),
    [("show_option", "option", "show-options"), ("show_hook", "hook_name", "show-hooks")],
)
@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
async def test_an_option_or_hook_name_is_one_argument_never_a_format(
    client: Client, world: World, tool: str, field: str, command: str, value: str
) -> None:
    """tmux expands the name of show-options and show-hooks as a format (``#(...)`` in
    one ran as a command before schemux escaped it): the name reaches tmux whole, and
    tmux says it is no option by that very name."""
    name = world.value(value)
    arguments = {field: name, "scope": "pane", "target": world.bystander}
    failed, text, _ = await call_checked(client, world, tool, arguments)
    assert failed
    if not is_text(name):
        assert refused_as_not_text(failed, text, tool, field)
    elif "\n" in name:
        assert text.startswith(f"{field} {preview(name)} holds a newline"), text
    else:
        assert text.startswith(f"tmux {command} failed: invalid option: "), text
        if name.isprintable() and len(name) < 100:
            assert text == f"tmux {command} failed: invalid option: {name}"


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
async def test_a_window_name_or_pane_title_is_one_argument_never_a_format(
    client: Client, world: World, value: str
) -> None:
    """rename-window and select-pane -T expand their text as a format (``#(...)`` ran a
    command before schemux escaped it), and a name beginning with ``-`` would be a flag:
    the text reaches tmux whole, and tmux keeps it (escaping a backslash, a control
    character or a ``$`` before a name in a window's name, keeping a title's printable
    characters)."""
    name = world.value(value)
    pane_id = make_session(world, "boundary-names")
    assert pane_id is not None
    try:
        for tool, arguments, shown in (
            ("rename_window", {"new_name": name}, "#{window_name}"),
            ("set_pane_title", {"title": name}, "#{pane_title}"),
        ):
            failed, text, result = await call_checked(
                client, world, tool, {**arguments, "pane_id": pane_id}
                if tool == "set_pane_title" else {**arguments, "session_name": "boundary-names"}
            )  # fmt: skip
            if not is_text(name):
                assert refused_as_not_text(failed, text, tool, next(iter(arguments)))
                continue
            assert not failed, text
            assert result is not None
            stored = tmux(world.socket, "display-message", "-p", "-t", pane_id, shown)[:-1]
            assert result["window_name" if tool == "rename_window" else "pane_title"] == stored
            if name.isprintable() and not re.search(r"\\|\$[A-Za-z{]", name):
                assert stored == name
    finally:
        tmux(world.socket, "kill-pane", "-t", pane_id)


def wait_for_shell_in(world: World, pane_id: str) -> None:
    from tests.support import Pane

    wait_for_shell(Pane(world.socket, pane_id, "", "", ""))


SOCKET_NAMES = [*HOSTILE, "../../tmp/x", "a/b", "", ".", ".."]


@pytest.mark.parametrize("value", SOCKET_NAMES, ids=[repr(v)[:24] for v in SOCKET_NAMES])
async def test_socket_name_is_a_name(client: Client, world: World, value: str) -> None:
    """A valid name reaches the server on exactly that socket (one started for it here),
    through tmux_snapshot and run_command, one after the other on the same server;
    anything else is refused by both, naming socket_name, before tmux is run."""
    name = world.value(value)
    if name and socket_name_problem(name) is None:
        name = f"{name}-{tagged_socket_name('boundary')}"
    valid = socket_name_problem(name) is None and is_text(name)
    if valid:
        tmux(name, "-f", "/dev/null", "new-session", "-d", "-s", "there", "cat")
    try:
        failed, text, result = await call_checked(
            client, world, "tmux_snapshot", {"socket_name": name}
        )
        if not valid:
            assert failed
            assert "socket_name" in text
        else:
            assert not failed, text
            assert result is not None
            server = result["data"]["server"]
            assert server["socket_path"] == readable(os.path.join(socket_directory(), name))
            names = [session["name"] for session in result["data"]["sessions"]]
            assert names == ["there"]
        failed, text, _ = await call_checked(
            client, world, "run_command",
            {"socket_name": name, "command": "true", "session_name": "nowhere"},
        )  # fmt: skip
        assert failed
        if not valid:
            assert "socket_name" in text
        else:  # that server has no session "nowhere": the call reached it and said so
            assert "no pane matches session_name='nowhere'" in text
    finally:
        if valid:
            remove_server(name)


COMMAND_TEXTS = [
    value for value in HOSTILE if value not in ("a\tb", "\x1f", "\udcff\udcfe", "a\nb")
]


@pytest.mark.parametrize("tool", ["run_command", "run_shell_command"])
@pytest.mark.parametrize("value", COMMAND_TEXTS, ids=[repr(v)[:24] for v in COMMAND_TEXTS])
async def test_command_text_arrives_exactly(
    client: Client, world: World, tool: str, value: str
) -> None:
    """The command is typed as given: printing a quoted hostile value prints it."""
    pane = new_pane(world.socket, width=200)
    try:
        text_value = world.value(value)
        command = f"printf '%s\\n' {shlex.quote(text_value)}"
        if tool == "run_command":
            arguments: dict[str, Any] = {"command": command, "pane_id": pane.pane_id}
        else:
            arguments = {"command": command, "paneId": pane.pane_id}
        failed, text, result = await call_checked(client, world, tool, arguments)
        assert not failed, text
        assert result is not None
        output = result["output"]
        assert (output if tool == "run_command" else output.split("\n")) == [text_value]
    finally:
        tmux(world.socket, "kill-session", "-t", f"={pane.session_name}")


NUL_CALLS = [
    ("run_command", {"command": "echo a\x00b"}, "command"),
    ("run_command", {"command": "true", "session_name": "s\x00"}, "session_name"),
    ("run_command", {"command": "true", "pane_id": "%1\x00"}, "pane_id"),
    ("run_command", {"command": "true", "socket_name": "a\x00b"}, "socket_name"),
    ("tmux_snapshot", {"socket_name": "\x00"}, "socket_name"),
    ("run_shell_command", {"command": "echo \x00", "paneId": "%1"}, "command"),
    ("start_program", {"argv": ["echo", "a\x00"]}, "argv[1]"),
    ("run_program", {"argv": ["\x00"]}, "argv[0]"),
    ("send_keys_batch", {"operations": [{"keys": "a\x00"}]}, "operations[0].keys"),
    (
        "send_keys_batch",
        {"operations": [{"keys": "a", "pane_id": "%\x00"}]},
        "operations[0].pane_id",
    ),
    ("wait_for_channel", {"channel": "a\x00"}, "channel"),
    ("signal_channel", {"channel": "\x00"}, "channel"),
    ("capture_since", {"cursor": "\x00"}, "cursor"),
    ("snapshot_pane", {"session_name": "s\x00"}, "session_name"),
]


@pytest.mark.parametrize(("tool", "arguments", "field"), NUL_CALLS)
async def test_nul_is_refused_naming_the_field(
    client: Client, world: World, tool: str, arguments: dict[str, Any], field: str
) -> None:
    failed, text, _ = await call_checked(client, world, tool, arguments)
    assert failed
    assert text.startswith(f"Invalid arguments for {tool}: {field}: contains a NUL character")


async def test_a_program_input_may_hold_nul(program_client: tuple[Client, str]) -> None:
    """input never reaches tmux (it is the program's stdin, from a private file, on the
    host that runs it)."""
    client, _ = program_client
    result = await client.call_tool(
        "run_program", {"argv": ["od", "-An", "-c"], "input": "a\x00b", "timeoutMs": 10000}
    )
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.structured_content["output"].split() == ["a", "\\0", "b"]


HUGE = "y" * 10_000_000


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("run_command", {"command": 5, "session_name": HUGE}),  # schema: another field
        ("run_command", {"command": HUGE, "timeout": HUGE}),  # schema: the value itself
        ("tmux_snapshot", {"socket_name": HUGE}),  # schema: maxLength
        ("run_command", {"command": "true", "pane_id": HUGE}),  # the target's shape
        ("run_command", {"command": "true", "session_name": HUGE}),  # no such session
        ("run_command", {"command": "true", "socket_name": HUGE}),  # not a socket name
        ("capture_pane", {"pane_id": "%0", HUGE: 1}),  # an unexpected key
    ],
    ids=["other", "type", "maxLength", "pane_id", "session_name", "socket_name", "key"],
)
async def test_errors_quote_a_short_prefix_of_a_huge_value(
    client: Client, tool: str, arguments: dict[str, Any]
) -> None:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = "\n".join(block.text for block in result.content if block.type == "text")
    assert len(text) < 1000, text[:300]
    assert "y" * 81 not in text
    if "yyy" in text:
        assert "more characters)" in text


# metadata a program or a person can give a pane: process names, paths, session names
ODD_NAME = "a\tb\nc\x1fd%e!09f#{pane_id}"


async def test_hostile_metadata_parses_exactly(
    client: Client, world: World, tmp_path: Path
) -> None:
    """A process named with a tab, newline and 0x1f, a current path holding them, and a
    session name with % and !: the snapshot reads each exactly, and targets resolve."""
    directory = tmp_path / "dir\twith\ntab and newline\x1f%!21"
    directory.mkdir()
    session = "odd%s!21 name"
    created = tmux(
        world.socket, "new-session", "-d", "-s", session.replace("#", "##"), "-c", str(directory),
        "-x", "120", "-y", "20", "-P", "-F", "#{pane_id}",
        "bash", "-c", f"exec -a {shlex.quote(ODD_NAME)} sleep 300",
    ).strip()  # fmt: skip
    try:
        wait_until_named(world, created)
        snapshot = await client.call_tool("tmux_snapshot", {})
        assert not snapshot.is_error, snapshot.content
        assert snapshot.structured_content is not None
        sessions = snapshot.structured_content["data"]["sessions"]
        [odd] = [s for s in sessions if s["name"] == session]
        [pane] = odd["windows"][0]["panes"]
        assert pane["target"]["id"] == created
        # tmux 3.7 and later name a process holding control bytes with nothing at all
        sanitized = parse_version(snapshot.structured_content["data"]["server"]["version"])
        assert pane["current_command"] == ("" if sanitized >= SANITIZED_SINCE else ODD_NAME)
        # the same pane through target resolution: by session name, and by id
        failed, text, _ = await call_checked(
            client, world, "run_command", {"command": "true", "session_name": session}
        )
        assert failed
        assert f"pane {created} is running" in text  # found, and refused as no shell
        screen = await client.call_tool("capture_pane", {"pane_id": created})
        assert not screen.is_error, screen.content
        reference = pane["target"]
        read = await client.call_tool("tmux_capture", {"target": reference})
        assert not read.is_error, read.content
    finally:
        tmux(world.socket, "kill-session", "-t", f"={session}", check=False)


def wait_until_named(world: World, pane_id: str) -> None:
    from tests.support import wait_until

    def named() -> bool:
        current = subprocess_tmux(
            world.socket, ["display-message", "-p", "-t", pane_id, "#{pane_current_command}"]
        )
        # the name's end, after the 0x1f that tmux 3.4 and 3.5 print escaped (tmux 3.7 and
        # later print it empty); the line ends in a newline, so it is never just "bash"
        return current is not None and (
            current.strip() == "" or ODD_NAME.split("\x1f")[-1] in current
        )

    wait_until(named)


# tabs, newlines and 0x1f split rows; control bytes, DEL and bytes that are not UTF-8 come
# back as octal text from tmux 3.4 and 3.5 (and $NAME as \$NAME from 3.4); a backslash of
# the name must not be taken for such an escape
CURRENT_PATHS = [
    "p\tq\nr\x1fs%!0A",
    "a\x01b\x1ec\x7fd\x07",
    "e\\001f\\$HOME\\",
    "$HOME ${x}!5C",
    os.fsdecode(b"g\xffh\xc3("),
]


@pytest.mark.parametrize("name", CURRENT_PATHS, ids=range(len(CURRENT_PATHS)))
async def test_current_path_of_any_bytes_reaches_a_program(
    program_client: tuple[Client, str], tmp_path: Path, name: str
) -> None:
    """fromPaneId's current path, read through the encoded query, is the directory the
    program starts in, byte for byte, whichever tmux version escapes what it prints."""
    client, socket = program_client
    directory = tmp_path / name
    directory.mkdir()
    pane = tmux(
        socket, "new-session", "-d", "-c", str(directory), "-P", "-F", "#{pane_id}",
        "sleep 300",
    ).strip()  # fmt: skip
    try:
        result = await client.call_tool(
            "run_program",
            {
                "argv": [sys.executable, "-c", "import os; print(os.getcwdb().hex())"],
                "fromPaneId": pane,
                "timeoutMs": 10000,
            },
        )
        assert not result.is_error, result.content
        assert result.structured_content is not None
        assert result.structured_content["output"] == os.fsencode(directory).hex()
    finally:
        tmux(socket, "kill-pane", "-t", pane, check=False)


SUBPROCESS_VALUES = [
    *(value for value in HOSTILE if value not in ("\udcff\udcfe",)),
    "a;",
    "a\\;",
    "a\\\\;",
    ";;",
    " ; ",
]


@pytest.mark.parametrize("value", SUBPROCESS_VALUES, ids=[repr(v)[:24] for v in SUBPROCESS_VALUES])
async def test_subprocess_arguments_arrive_verbatim(
    world: World, transport_ssh: SshTarget | None, shared_contexts: Contexts, value: str
) -> None:
    """A tmux client's own command line ends a command at an argument ending in ';':
    run_subprocess passes every argument but THEN verbatim (over ssh too, where the
    remote shell is given each one quoted). On the host of the transport's shared
    context (over ssh, its master)."""
    context = shared_contexts.shared(socket_name=world.socket, ssh=transport_ssh)
    await subprocess_arguments_arrive(world, context.services.host, value)


async def subprocess_arguments_arrive(world: World, host: Host, value: str) -> None:
    server = TmuxServer(ServerAddress(socket_name=world.socket, host=host))
    before = world.observe()
    text = world.value(value)
    await server.run_subprocess(
        "set-option", "-g", "@sub", text, THEN, "set-option", "-g", "@after", "1"
    )
    # through tmux_format's field: tmux 3.4 and 3.5 escape what show-options prints
    shown = await server.run_subprocess("display-message", "-p", field("@sub"))
    assert [decode(line) for line in shown] == [text]
    assert await server.run_subprocess("show-options", "-gv", "@after") == ["1"]
    assert world.observe() == before
    assert not world.mark.exists()
    with pytest.raises(UnsendableArgument):
        await server.run_subprocess("set-option", "-g", "@sub", f"{text}\x00")
