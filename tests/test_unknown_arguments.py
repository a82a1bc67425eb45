"""An argument a tool does not have is refused before any work, with the one meant."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.arguments import likely_meant, unknown_arguments
from schemux.serving.state import ServingState
from tests.contexts import client_of

pytestmark = pytest.mark.anyio

NO_SERVER = "schemux-test-unknown-arguments-no-server"  # never started: no tmux work can pass

RUN_PROGRAM = ("argv", "fromPaneId", "input", "startDirectory", "timeoutMs")
RUN_COMMAND = ("command", "max_lines", "pane_id", "socket_name", "timeout")


@pytest.mark.parametrize(
    ("name", "declared", "meant"),
    [
        ("cwd", RUN_PROGRAM, "startDirectory"),  # a synonym (schemas/families.toml)
        ("working-directory", RUN_PROGRAM, "startDirectory"),
        ("start_directory", RUN_PROGRAM, "startDirectory"),  # another case and separator
        ("paneId", RUN_COMMAND, "pane_id"),
        ("PANE_ID", RUN_COMMAND, "pane_id"),
        ("timeout_seconds", RUN_COMMAND, "timeout"),
        ("cmd", RUN_COMMAND, "command"),
        ("command", RUN_PROGRAM, "argv"),  # the first group one of whose words it has
        ("argv", RUN_COMMAND, "command"),
        ("comand", RUN_COMMAND, "command"),  # a near spelling
        ("max_line", RUN_COMMAND, "max_lines"),
        ("cwd", RUN_COMMAND, None),  # nothing like it
        ("colour", RUN_COMMAND, None),
        ("", RUN_COMMAND, None),
    ],
)
def test_the_argument_meant(name: str, declared: tuple[str, ...], meant: str | None) -> None:
    assert likely_meant(name, declared) == meant


def test_a_name_far_longer_than_every_argument_is_not_compared_with_them() -> None:
    """Two names are close when difflib's ratio of them reaches the cutoff, and that ratio
    is at most twice the shorter's length over both lengths: a name of megabytes can be
    close to no argument, and comparing it took seconds of the server's CPU (0.9-3.3 s
    for 10 MB; 0.03 s without). CPU time, not wall time: the machine's load does not
    move it much."""
    started = time.process_time()
    assert likely_meant("y" * 10_000_000, RUN_COMMAND) is None
    assert time.process_time() - started < 0.2


def test_every_unknown_argument_is_named_with_the_tool_s_arguments() -> None:
    problem = unknown_arguments("run_program", {"argv": ["x"], "cwd": "/", "env": {}}, RUN_PROGRAM)
    assert problem == (
        "'cwd': run_program has no such argument; did you mean startDirectory?; "
        "'env': run_program has no such argument "
        "(its arguments: argv, fromPaneId, input, startDirectory, timeoutMs) "
        "(rule: additionalProperties)"
    )
    assert unknown_arguments("run_program", {"argv": ["x"]}, RUN_PROGRAM) is None


@pytest.mark.parametrize(
    "name",
    [
        "a\nb",  # a line break
        "\x1b]52;c;aGk=\x07",  # a terminal's clipboard sequence
        "x" * 100_000,  # long
        "$(touch /tmp/schemux-pwned)",
        "'; kill-server; '",
    ],
)
def test_a_hostile_name_is_shown_escaped_and_cut(name: str) -> None:
    problem = unknown_arguments("run_command", {name: 1}, RUN_COMMAND)
    assert problem is not None
    assert "\n" not in problem
    assert "\x1b" not in problem
    assert "\x07" not in problem
    assert len(problem) < 400


async def test_a_call_with_an_unknown_argument_is_refused_before_any_work(tmp_path: Path) -> None:
    """run_program's contract allows more arguments, where the program once ran in
    schemux's own directory with its ``cwd`` ignored; now nothing runs (the server is
    never started, so any tmux work would fail otherwise), and the error names the field
    and the argument meant."""
    marker = tmp_path / "ran"
    context = ServingState(Settings(socket_name=NO_SERVER))
    try:
        async with client_of(context, BINDINGS) as client:
            result = await client.call_tool(
                "run_program", {"argv": ["touch", str(marker)], "cwd": str(tmp_path)}
            )
    finally:
        await context.close()
    assert result.is_error
    assert result.content[0].text.startswith(  # type: ignore[union-attr]
        "Invalid arguments for run_program: 'cwd': run_program has no such argument; "
        "did you mean startDirectory?"
    )
    assert not marker.exists()
