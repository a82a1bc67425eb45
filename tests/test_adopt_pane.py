"""adopt_pane: a bash, zsh or fish pane schemux did not start takes the agent pane's
hooks by one line the person sees once; run_command there is then exact and served by
the hooks (no wrapper on the screen); what is not such a shell is refused, nothing typed;
a schemux killed mid-call leaves the adopted shell at its prompt within the bound."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from schemux.hooks import SHELL, HookedShell
from tests.support import SHELL as SHELL_COMMAND
from tests.support import (
    Pane,
    call,
    new_pane,
    pane_format,
    screen,
    shell_holds_terminal,
    tmux,
    until,
    without_fish_man_page_scan,
)

pytestmark = pytest.mark.anyio

SHELLS = ["bash", "zsh", "fish"]
# what a person's pane runs: the shell, none of schemux's files
COMMANDS = {
    "bash": "bash --norc --noprofile",
    "zsh": "zsh -f",
    "fish": "env HOME={home} fish --no-config",
}
# typed inside single quotes (fish's take no backslash here)
HOSTILE = ["a'b\"c $HOME `id` ; tmux kill-server", "é 日本  two  spaces", "#{pane_id} %1 ~"]
# how long a killed schemux's hook may hold the shell after its command ended
BOUND_SECONDS = 5.0


@pytest.fixture
def home() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="adopt-") as directory:
        without_fish_man_page_scan(Path(directory))
        yield Path(directory)


def person_pane(socket_name: str, shell: str, home: Path) -> Pane:
    pane = new_pane(socket_name, command=COMMANDS[shell].format(home=home))
    return pane


async def at_prompt(pane: Pane) -> None:
    await until(lambda: screen(pane).strip() != "" and shell_holds_terminal(pane), timeout=15)


def quoted(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"


@pytest.mark.parametrize("shell", SHELLS)
async def test_an_adopted_pane_runs_commands_exactly_with_one_line_shown(
    client: Client, main_tmux_socket: str, home: Path, shell: str
) -> None:
    pane = person_pane(main_tmux_socket, shell, home)
    try:
        await at_prompt(pane)
        adopted = await call(client, "adopt_pane", pane_id=pane.pane_id)
        assert adopted["pane_id"] == pane.pane_id
        assert adopted["shell"] == shell
        assert adopted["adopted"] is True
        line = adopted["line"]
        assert line.startswith("source " if shell == "fish" else ". ")
        reported = HookedShell.parse(pane_format(pane, f"#{{{SHELL}}}"))
        assert reported is not None
        assert reported.name == shell
        assert reported.pid == int(pane_format(pane, "#{pane_pid}"))
        # once more: nothing typed
        again = await call(client, "adopt_pane", pane_id=pane.pane_id)
        assert (again["adopted"], again["line"]) == (False, None)
        for value in HOSTILE:
            ran = await call(client, "run_command", pane_id=pane.pane_id,
                             command=f"printf '%s\\n' {quoted(value)}")  # fmt: skip
            assert (ran["exit_status"], ran["output"]) == (0, [value])
        failed = await call(client, "run_command", pane_id=pane.pane_id, command="false")
        assert (failed["exit_status"], failed["output"]) == (1, [])
        # the shell's own state is kept (no subshell, no wrapper block)
        await call(client, "run_command", pane_id=pane.pane_id, command="cd /")
        where = await call(client, "run_command", pane_id=pane.pane_id, command="pwd")
        assert where["output"] == ["/"]
        # the install, once (its rows joined: zsh wraps a long line by itself, and tmux
        # drops a row's trailing spaces)
        shown = "".join(screen(pane, history=True).split())
        assert shown.count("".join(line.split())) == 1
        rest = shown.replace("".join(line.split()), "")
        assert "schemux" not in rest
        assert "wait-for" not in rest
    finally:
        tmux(main_tmux_socket, "kill-session", "-t", pane.session_id, check=False)


@pytest.mark.parametrize(
    ("command", "refusal"),
    [
        ("cat", "not a shell at its prompt"),
        ("dash", "only bash, zsh and fish"),
        ("sleep", "not a shell at its prompt"),  # a job of an idle bash's
    ],
)
async def test_a_pane_that_is_not_an_idle_bash_zsh_or_fish_is_refused_untouched(
    client: Client, main_tmux_socket: str, command: str, refusal: str
) -> None:
    pane = new_pane(main_tmux_socket, command=command if command != "sleep" else SHELL_COMMAND)
    try:
        if command == "sleep":
            tmux(main_tmux_socket, "send-keys", "-t", pane.pane_id, "sleep 300", "Enter")
        await until(lambda: pane_format(pane, "#{pane_current_command}") == command)
        before = screen(pane)
        result = await client.call_tool("adopt_pane", {"pane_id": pane.pane_id, "timeout": 3})
        assert result.is_error
        assert refusal in result.content[0].text  # type: ignore[union-attr]
        assert screen(pane) == before
        assert pane_format(pane, f"#{{{SHELL}}}") == ""
    finally:
        tmux(main_tmux_socket, "kill-session", "-t", pane.session_id, check=False)


@pytest.mark.parametrize(
    "arguments",
    [
        {"pane_id": "%1; kill-server"},
        {"pane_id": "$(touch /tmp/adopt-pwned)"},
        {"session_name": "x'; kill-server; '"},
        {"pane_id": "%0", "timeout": 0},
        {"pane_id": "%0", "timeout": -1},
    ],
)
async def test_hostile_arguments_are_refused(
    client: Client, main_tmux_socket: str, arguments: dict[str, object]
) -> None:
    result = await client.call_tool("adopt_pane", arguments)
    assert result.is_error
    assert tmux(main_tmux_socket, "list-sessions")  # the server lives
    assert not Path("/tmp/adopt-pwned").exists()


async def test_schemux_killed_mid_call_leaves_the_adopted_shell_within_the_bound(
    client: Client, main_tmux_socket: str
) -> None:
    """A stdio schemux killed with SIGKILL while its call's command runs in an adopted
    bash: the command ends, the hooks find their call's pipes gone and the prompt comes
    back at once; a later call there is exact."""
    pane = new_pane(main_tmux_socket)
    await call(client, "adopt_pane", pane_id=pane.pane_id)
    process = calling_schemux(main_tmux_socket, pane, "sleep 2")
    try:
        await until(lambda: pane_format(pane, "#{pane_current_command}") == "sleep", timeout=15)
        killed(process)
        await until(lambda: pane_format(pane, "#{pane_current_command}") == "bash", timeout=5)
        await until(lambda: shell_holds_terminal(pane), timeout=BOUND_SECONDS)
        ran = await call(client, "run_command", pane_id=pane.pane_id,
                         command=f"echo {shlex.quote('after $kill')}")  # fmt: skip
        assert (ran["exit_status"], ran["output"]) == (0, ["after $kill"])
    finally:
        killed(process)
        tmux(main_tmux_socket, "kill-session", "-t", pane.session_id, check=False)


def calling_schemux(socket_name: str, pane: Pane, command: str) -> subprocess.Popen[bytes]:
    """A ``schemux serve`` over stdio, initialized, that was sent run_command of
    ``command`` in ``pane`` (its answer never read)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "schemux", "serve", "--socket-name", socket_name],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None
    for message in (
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "run_command", "arguments": {"command": command, "pane_id": pane.pane_id}}},
    ):  # fmt: skip
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
    return process


def killed(process: subprocess.Popen[bytes]) -> None:
    """``process`` killed with SIGKILL, and reaped."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait()
