"""send_keys against real tmux through the in-memory MCP client: exactly the bytes a
program reads, for text and for key names; hostile text stays text; history
suppression; a started program's pane.

A test of ``transport_client`` runs twice: on this machine, and over ssh (``tests.ssh_server``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.support import Pane, call, call_error, new_pane, pane_format, tmux, wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture
def transport_client(shared_transport_client: Client) -> Client:
    """The module's calls start no program: its tests share a context a transport."""
    return shared_transport_client


HOSTILE = [
    ";",
    "\\;",
    "a ; kill-server",
    "#{pane_id}",
    "#(echo owned)",
    "##",
    "-x",
    "--",
    "-l",
    "-t %0",
    'it\'s "quoted"',
    "\x1f",
    "a\tb",
    "line one\nline two",
    "$HOME ~ `id`",
    "héllo wörld ✓",
    "x" * 20_000,
]


def raw_reader(socket_name: str, output: Path) -> Pane:
    """A pane whose program writes every byte it reads to ``output``: no echo, no line
    editing, no signals (``stty raw``), so the file holds exactly what the keys sent."""
    pane = new_pane(socket_name, command=f"sh -c 'stty raw -echo; exec cat > {output}'")
    wait_until(lambda: output.exists())
    return pane


def received(output: Path, before: int, count: int) -> bytes:
    wait_until(lambda: output.stat().st_size >= before + count)
    return output.read_bytes()[before:]


@pytest.mark.parametrize("literal", [False, True])
async def test_text_arrives_byte_for_byte(
    transport_client: Client, transport_socket: str, tmp_path: Path, literal: bool
) -> None:
    output = tmp_path / "keys"
    pane = raw_reader(transport_socket, output)
    for text in HOSTILE:
        before = output.stat().st_size
        await call(transport_client, "send_keys", keys=text, pane_id=pane.pane_id, literal=literal)
        expected = text.encode() + b"\r"  # Enter in a raw terminal
        assert received(output, before, len(expected)) == expected, text
    assert tmux(transport_socket, "has-session", "-t", pane.session_name) == ""


@pytest.mark.parametrize(
    ("keys", "literal", "expected"),
    [
        ("C-c", False, b"\x03"),
        ("Enter", False, b"\r"),
        ("Escape", False, b"\x1b"),
        ("Up", False, b"\x1b[A"),
        ("F1", False, b"\x1bOP"),
        ("BSpace", False, b"\x7f"),
        ("C-c", True, b"C-c"),
        ("Enter", True, b"Enter"),
        ("C-c Enter", False, b"C-c Enter"),  # one argument: never a list of keys
    ],
)
async def test_key_names_only_without_literal(
    transport_client: Client,
    transport_socket: str,
    tmp_path: Path,
    keys: str,
    literal: bool,
    expected: bytes,
) -> None:
    output = tmp_path / "keys"
    pane = raw_reader(transport_socket, output)
    await call(
        transport_client, "send_keys", keys=keys, pane_id=pane.pane_id, literal=literal, enter=False
    )
    assert received(output, 0, len(expected)) == expected


async def test_suppress_history_prepends_a_space(
    transport_client: Client, transport_socket: str, tmp_path: Path
) -> None:
    output = tmp_path / "keys"
    pane = raw_reader(transport_socket, output)
    await call(
        transport_client, "send_keys", keys="ls", pane_id=pane.pane_id, suppress_history=True
    )
    assert received(output, 0, 4) == b" ls\r"


async def test_history_kept_or_suppressed_in_a_shell(
    transport_client: Client, transport_socket: str
) -> None:
    pane = new_pane(transport_socket)  # bash with HISTCONTROL=ignorespace
    await call(transport_client, "send_keys", keys="echo kept-1", pane_id=pane.pane_id)
    await call(
        transport_client,
        "send_keys",
        keys="echo hidden-1",
        pane_id=pane.pane_id,
        suppress_history=True,
    )
    wait_until(
        lambda: "hidden-1\n" in tmux(transport_socket, "capture-pane", "-p", "-t", pane.pane_id)
    )
    history = await call(transport_client, "run_command", command="history", pane_id=pane.pane_id)
    lines = "\n".join(history["output"])
    assert "echo kept-1" in lines
    assert "hidden-1" not in lines


async def test_a_nul_is_refused_and_nothing_is_sent(
    transport_client: Client, transport_socket: str, tmp_path: Path
) -> None:
    output = tmp_path / "keys"
    pane = raw_reader(transport_socket, output)
    error = await call_error(transport_client, "send_keys", keys="ab\x00cd", pane_id=pane.pane_id)
    assert "keys: contains a NUL character (at index 2)" in error
    await call(transport_client, "send_keys", keys="after", pane_id=pane.pane_id)
    assert received(output, 0, 6) == b"after\r"


async def test_a_started_programs_pane_takes_keys(memory_client: Client) -> None:
    started = await call(memory_client, "start_program", argv=["cat"])
    await call(memory_client, "send_keys", keys="to the program", pane_id=started["paneId"])
    read = await call(memory_client, "read_program", programId=started["programId"], timeoutMs=5000)
    assert "to the program\n" in read["text"]
    await call(memory_client, "stop_program", programId=started["programId"])


async def test_the_control_window_is_refused(
    transport_client: Client, transport_socket: str
) -> None:
    await call(transport_client, "send_keys", keys="", pane_id=new_pane(transport_socket).pane_id)
    control = tmux(transport_socket, "list-panes", "-t", "=_schemux:0", "-F", "#{pane_id}").split()[
        0
    ]
    error = await call_error(transport_client, "send_keys", keys="x", pane_id=control)
    assert "window of schemux's control clients" in error


async def test_a_lone_surrogate_is_refused_and_nothing_is_sent(
    transport_client: Client, transport_socket: str, tmp_path: Path
) -> None:
    """JSON can spell "\\udcff", which is no text: refused by name, the pane untouched."""
    output = tmp_path / "keys"
    pane = raw_reader(transport_socket, output)
    error = await call_error(
        transport_client, "send_keys", keys="a\udcffb", pane_id=pane.pane_id, literal=True
    )
    assert "keys: contains U+DCFF at index 1, a lone surrogate" in error
    await call(transport_client, "send_keys", keys="after", pane_id=pane.pane_id)
    assert received(output, 0, 6) == b"after\r"
    assert tmux(transport_socket, "has-session", "-t", pane.session_name) == ""


MODES = {
    "copy-mode": ("copy-mode", "-t"),
    "view-mode": ("run-shell", "-t"),  # + a command: its output shows in view mode
    "clock-mode": ("clock-mode", "-t"),
    "tree-mode": ("choose-tree", "-t"),
    "options-mode": ("customize-mode", "-t"),
}


@pytest.mark.parametrize("tool", ["send_keys", "send_keys_batch"])
@pytest.mark.parametrize("mode", list(MODES))
async def test_keys_reach_the_program_in_every_pane_mode(
    transport_client: Client, transport_socket: str, tmp_path: Path, mode: str, tool: str
) -> None:
    """A pane in a mode (a person scrolling back) took keys as the mode's: literal "y"
    ran a copy-mode binding, C-w the copy-command, and the program read nothing. The
    mode is left, and the keys reach the program (a batch's operations type the same
    way)."""
    output, ran = tmp_path / "keys", tmp_path / "ran"
    pane = raw_reader(transport_socket, output)
    tmux(transport_socket, "bind-key", "-T", "copy-mode", "y", "run-shell", f"echo y >> {ran}")
    tmux(transport_socket, "set-option", "-s", "copy-command", f"cat >> {ran}")
    try:
        sent = b""
        for keys, literal, expected in [("y", True, b"y"), ("C-w", False, b"\x17")]:
            tmux(
                transport_socket,
                *MODES[mode],
                pane.pane_id,
                *(["echo"] if mode == "view-mode" else []),
            )
            tmux(
                transport_socket,
                "send-keys",
                "-t",
                pane.pane_id,
                "-X",
                "begin-selection",
                check=False,
            )
            assert pane_format(pane, "#{pane_mode}") == mode
            operation = {"keys": keys, "pane_id": pane.pane_id, "literal": literal, "enter": False}
            if tool == "send_keys":
                await call(transport_client, tool, **operation)
            else:
                result = await call(transport_client, tool, operations=[operation])
                assert result["succeeded"] == 1
            sent += expected
            assert received(output, 0, len(sent)) == sent
            assert pane_format(pane, "#{pane_in_mode}") == "0"
        assert not ran.exists()
    finally:
        tmux(transport_socket, "unbind-key", "-T", "copy-mode", "y")
        tmux(transport_socket, "set-option", "-s", "-u", "copy-command")
