"""What a start says: one stderr line (version, tmux, server, transport), a hint for a
person at a terminal, and ``--help`` naming every environment variable with its default."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from schemux import __version__
from schemux.cli.environment import VARIABLES, help_text
from schemux.hosts.local import check_tmux
from schemux.names import socket_directory
from tests.http_serving import free_port

RUNTIME = Path(__file__).resolve().parent.parent / "schemux"
NAME = re.compile(r"\bSCHEMUX_[A-Z0-9_]*[A-Z0-9]\b")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "start-test", "version": "1"},
    },
}


def serve(*args: str, stdin: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "schemux", "serve", *args],
        stdin=stdin if stdin is not None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def server_text(tmux_socket: str) -> str:
    return f"{check_tmux()}, server -L {tmux_socket} ({socket_directory()}/{tmux_socket})"


def test_a_stdio_start_says_one_line_and_keeps_stdout_for_mcp(tmux_socket: str) -> None:
    process = serve("-L", tmux_socket)
    stdout, stderr = process.communicate(json.dumps(INITIALIZE) + "\n", timeout=30)
    assert stderr.splitlines() == [
        f"schemux {__version__}: serving MCP on stdio; {server_text(tmux_socket)}"
    ]
    assert [json.loads(line)["id"] for line in stdout.splitlines()] == [1]


def test_two_host_names_for_one_server_are_said_at_start(tmux_socket: str) -> None:
    process = serve("-L", tmux_socket, "--host", "a=local", "--host", "b=local")
    stdout, stderr = process.communicate(json.dumps(INITIALIZE) + "\n", timeout=30)
    assert stderr.splitlines() == [
        f"schemux {__version__}: serving MCP on stdio; 2 hosts (a, b), server -L {tmux_socket}",
        "schemux: hosts a, b name the same target, so the same tmux server: a pane there "
        "runs one run_command call at a time, whichever name it comes by",
    ]
    assert [json.loads(line)["id"] for line in stdout.splitlines()] == [1]


def test_a_person_at_a_terminal_is_told_what_this_is(tmux_socket: str) -> None:
    """stdin a terminal: the hint says it is an MCP server and how to try a tool."""
    controller, terminal = os.openpty()
    try:
        process = serve("-L", tmux_socket, stdin=terminal)
        try:
            os.write(controller, b"\x04")  # Ctrl-D at the start of a line: end of input
            _, stderr = process.communicate(timeout=30)
        finally:
            process.kill()
            process.wait()
    finally:
        os.close(controller)
        os.close(terminal)
    lines = stderr.splitlines()
    assert lines[0] == f"schemux {__version__}: serving MCP on stdio; {server_text(tmux_socket)}"
    hint = "\n".join(lines[1:])
    assert "this is an MCP server" in hint
    assert """schemux call run_command '{"command": "uname -a"}'""" in hint


def test_an_http_start_says_one_line(tmux_socket: str) -> None:
    process = serve("-L", tmux_socket, "--http", str(free_port()))
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        process.send_signal(signal.SIGTERM)
        _, rest = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert first.startswith(f"schemux {__version__}: serving MCP at http://127.0.0.1:")
    assert first.rstrip("\n").endswith(server_text(tmux_socket))
    assert "schemux" not in rest  # the one line, not a second for stdio


@pytest.mark.parametrize("command", [[], ["serve"], ["call"]])
def test_help_lists_every_environment_variable_with_its_default(command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "schemux", *command, "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    _, _, section = done.stdout.partition("\nenvironment (")
    lines = section.splitlines()[1:]
    assert len(lines) == len(VARIABLES)
    for variable, line in zip(VARIABLES, lines, strict=True):
        columns = (re.escape(text) for text in (variable.name, variable.default, variable.meaning))
        assert re.fullmatch(r"  {} +{} +{}".format(*columns), line), line
    assert help_text() in done.stdout


# runs a command as ``schemux`` would, then prints what it imported of the MCP SDK
SDK_IMPORTED = """
import sys
from schemux.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sdk = sorted(name for name in sys.modules if name.split(".")[0] in ("mcp", "mcp_types"))
print("SDK:", *sdk)
"""


@pytest.mark.parametrize(
    "command",
    [["--version"], ["--help"], ["serve", "--help"], ["doctor", "-L", "{socket}"],
     ["audit", "--audit-log", "{log}"]],
    ids=["version", "help", "serve-help", "doctor", "audit"],
)  # fmt: skip
def test_commands_that_serve_nothing_do_not_load_the_mcp_sdk(
    command: list[str], tmux_socket: str, tmp_path: Path
) -> None:
    """The SDK takes about a second to import; a person's doctor or audit (and a
    launcher's ``--version``) answer without it."""
    log = tmp_path / "audit.jsonl"
    log.write_text("")
    words = [word.format(socket=tmux_socket, log=log) for word in command]
    done = subprocess.run(
        [sys.executable, "-c", SDK_IMPORTED, *words], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "SDK:", done.stdout[-2000:]


def test_the_table_names_exactly_the_variables_the_runtime_reads() -> None:
    """Every SCHEMUX_ name mentioned in schemux/ is documented, and nothing more."""
    mentioned = {
        name
        for path in RUNTIME.rglob("*.py")
        if path != RUNTIME / "cli" / "environment.py"
        for name in NAME.findall(path.read_text())
    }
    assert mentioned == {variable.name for variable in VARIABLES}
    assert len(VARIABLES) == len({variable.name for variable in VARIABLES})
