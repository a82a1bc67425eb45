"""Replays every example kept with the served tools' schemas (schemas/examples/) through a
real MCP client over stdio, against a real tmux server on a private socket.

An example is ``{name, arguments, setup?, result | error}``: each gets a fresh session
whose pane runs an idle bash (or ``setup.pane_command``), on the configured tmux server
or, with ``setup.server: "other"``, on a second one; ``{pane_id}``, ``{window_id}``,
``{session_id}``, ``{session_name}``, ``{socket_name}`` and ``{generation}`` (of its
reference) in it name that pane; ``setup.width``/``height`` size it, ``setup.wait_for``
is text to wait for on its screen before the call (``setup.wait_for_command``, the
command it must be running), and ``prepare`` below tells the rest of ``setup``.
``result`` is a JSON Schema (2020-12) that structuredContent must match; ``error`` is
text that the error result must contain, or a JSON Schema that the structuredContent an
error result carries must match. Every result is also checked against the outputSchema
by the client itself.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from schemux.config import ENV_HOST, ENV_PROGRAM_GATE
from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import SEVERAL_HOSTS_TOOLS
from tests.conftest import STDIO_WAIT_CEILING, stdio_parameters
from tests.support import SHELL, fill, new_pane, pane_format, tmux, until

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "schemas" / "examples"


def load_examples() -> list[tuple[str, dict[str, Any]]]:
    examples = []
    for path in sorted(EXAMPLES_DIR.glob("*.json")):
        document = json.loads(path.read_text())
        examples += [(document["tool"], example) for example in document["examples"]]
    return examples


EXAMPLES = load_examples()


def test_every_served_tool_has_examples() -> None:
    covered = {tool for tool, _ in EXAMPLES}
    assert set(BINDINGS) <= covered


@pytest.mark.parametrize(
    ("tool", "example"),
    [pytest.param(tool, ex, id=f"{tool}: {ex['name']}") for tool, ex in EXAMPLES],
)
def test_expected_results_are_json_schemas(tool: str, example: dict[str, Any]) -> None:
    expected = example["result"] if "result" in example else example["error"]
    if not isinstance(expected, str):
        Draft202012Validator.check_schema(expected)


def violations(expected: Any, actual: Any) -> list[str]:
    """Where ``actual`` breaks the JSON Schema ``expected``: ``path: message`` each."""
    return [
        f"{error.json_path}: {error.message}"
        for error in Draft202012Validator(expected).iter_errors(actual)
    ]


def examples_of(chosen: Callable[[str], bool]) -> list[Any]:
    """The examples of the tools ``chosen`` takes, as test parameters named by tool and
    example."""
    return [
        pytest.param(tool, example, id=f"{tool}: {example['name']}")
        for tool, example in EXAMPLES
        if chosen(tool)
    ]


def test_example_names_are_unique() -> None:
    names = [(tool, example["name"]) for tool, example in EXAMPLES]
    assert len(names) == len(set(names))


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "example"), examples_of(lambda tool: tool not in SEVERAL_HOSTS_TOOLS)
)
async def test_example(
    stdio_client: Client,
    tmux_socket: str,
    other_tmux_socket: str,
    tool: str,
    example: dict[str, Any],
) -> None:
    if tool not in BINDINGS:
        pytest.skip(f"{tool} has no handler yet")
    await replay(stdio_client, tmux_socket, other_tmux_socket, tool, example)


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "example"), examples_of(lambda tool: tool in SEVERAL_HOSTS_TOOLS))
async def test_example_with_several_hosts(
    fleet_stdio_client: Client,
    tmux_socket: str,
    other_tmux_socket: str,
    tool: str,
    example: dict[str, Any],
) -> None:
    """A tool served only with several hosts configured, replayed where it is."""
    await replay(fleet_stdio_client, tmux_socket, other_tmux_socket, tool, example)


@pytest.fixture(scope="module")
async def fleet_stdio_client(anyio_backend: str, tmux_socket: str) -> AsyncIterator[Client]:
    """schemux over stdio serving two hosts: ``here``, this machine (its server is
    ``tmux_socket``, where each example's pane is made, so the pane a call without a
    target takes there), and ``there``, an exec-kind host on this machine with a tmux
    directory and an (empty) home of its own, whose server schemux starts with the
    agent's session."""
    directory = Path(tempfile.mkdtemp(prefix="sxex", dir="/tmp"))  # a socket path is short
    (directory / "home").mkdir()
    prefix = f"env TMUX_TMPDIR={directory} HOME={directory}/home"
    parameters = stdio_parameters(
        "--socket-name", tmux_socket, "--wait-ceiling", str(STDIO_WAIT_CEILING),
        env={ENV_HOST: f"here=local;there=exec:{prefix}"},
    )  # fmt: skip
    try:
        async with Client(parameters) as client:
            yield client
    finally:
        there = ["env", f"TMUX_TMPDIR={directory}", "tmux", "-L", tmux_socket, "kill-server"]
        await anyio.run_process(there, check=False)
        shutil.rmtree(directory, ignore_errors=True)


PROGRAM_TOOLS = {"start_program", "read_program", "stop_program", "run_program"}


@pytest.fixture(scope="module")
async def python_gate_client(anyio_backend: str, tmux_socket: str) -> AsyncIterator[Client]:
    """schemux over stdio with the Python gate (the one test_example sees is Perl's, where
    perl runs): the program examples hold under the fallback too."""
    parameters = stdio_parameters(
        "--socket-name", tmux_socket, "--wait-ceiling", str(STDIO_WAIT_CEILING)
    )
    parameters.env = {**os.environ, ENV_PROGRAM_GATE: "python"}
    async with Client(parameters) as client:
        yield client


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "example"), examples_of(lambda tool: tool in PROGRAM_TOOLS))
async def test_program_example_under_the_python_gate(
    python_gate_client: Client,
    tmux_socket: str,
    other_tmux_socket: str,
    tool: str,
    example: dict[str, Any],
) -> None:
    await replay(python_gate_client, tmux_socket, other_tmux_socket, tool, example)


async def replay(
    client: Client, tmux_socket: str, other_tmux_socket: str, tool: str, example: dict[str, Any]
) -> None:
    """One example, on a fresh pane, through ``client``."""
    setup = example.get("setup", {})
    socket_name = other_tmux_socket if setup.get("server") == "other" else tmux_socket
    pane = new_pane(
        socket_name,
        command=setup.get("pane_command", SHELL),
        remain_on_exit=setup.get("remain_on_exit", False),
        width=setup.get("width", 100),
        height=setup.get("height", 30),
    )
    if "wait_for_command" in setup:  # the program the pane's shell starts, once it runs
        wanted = setup["wait_for_command"]
        await until(lambda: pane_format(pane, "#{pane_current_command}") == wanted)
    if "wait_for" in setup:  # text the pane's program prints before the call
        await until(
            lambda: setup["wait_for"] in tmux(socket_name, "capture-pane", "-p", "-t", pane.pane_id)
        )
    values: dict[str, Any] = dict(pane.placeholders())
    await prepare(client, tool, setup, values)
    await start_program(client, setup, values)
    result = await client.call_tool(tool, fill(example["arguments"], values))
    text = "\n".join(block.text for block in result.content if block.type == "text")
    if "error" in example:
        assert result.is_error, f"expected an error, got {result.structured_content}"
        expected = fill(example["error"], values)
        if result.structured_content is not None:
            check_envelope(tool, result.structured_content, text)
        if isinstance(expected, str):
            assert expected in text
            if result.structured_content is not None:  # said as the error, not elsewhere
                assert expected in result.structured_content["error"]["message"]
        else:  # an error result of the contract's own (an envelope)
            assert result.structured_content is not None, text
            assert violations(expected, result.structured_content) == []
    else:
        assert not result.is_error, text
        assert result.structured_content is not None
        wrapped = result.structured_content.get("result")
        if BINDINGS[tool].wraps_result and isinstance(wrapped, str):  # the value itself
            assert text == wrapped
        elif BINDINGS[tool].wraps_result:  # a list, say: its JSON
            assert json.loads(text) == wrapped
        else:
            assert json.loads(text) == result.structured_content
        assert violations(fill(example["result"], values), result.structured_content) == []


def check_envelope(tool: str, envelope: dict[str, Any], text: str) -> None:
    """An error result that carries structured content is the error envelope of the
    tool's contract (the ``tmux_*`` family's ``{ok: false, error}``): the tool has one,
    the content is its error branch of the outputSchema, and the text is the same JSON,
    as a result's is. (An error refused before any tmux work is text only.)"""
    binding = BINDINGS[tool]
    assert binding.error_envelope, f"{tool} has no error envelope, yet its error carried one"
    assert violations(binding.document["outputSchema"], envelope) == []
    assert envelope["ok"] is False
    assert json.loads(text) == envelope


async def start_program(client: Client, setup: dict[str, Any], values: dict[str, Any]) -> None:
    """``setup.start_program``: start one (its ids become ``{program_id}`` and
    ``{program_pane_id}``); with ``await_end``, wait until it ended and its pane went;
    ``first_read``: read it once (its cursor becomes ``{program_cursor}``)."""
    if "start_program" not in setup:
        return
    started = await client.call_tool("start_program", fill(setup["start_program"], values))
    assert started.structured_content is not None, started.content
    values["program_id"] = started.structured_content["programId"]
    values["program_pane_id"] = started.structured_content["paneId"]
    if setup.get("await_end"):
        socket_name = values["socket_name"]
        await until(
            lambda: (
                values["program_pane_id"]
                not in tmux(socket_name, "list-panes", "-a", "-F", "#{pane_id}").split()
            )
        )
    if "first_read" in setup:
        arguments = {"programId": values["program_id"], **setup["first_read"]}
        first = await client.call_tool("read_program", arguments)
        assert first.structured_content is not None, first.content
        values["program_cursor"] = first.structured_content["cursor"]


async def prepare(client: Client, tool: str, setup: dict[str, Any], values: dict[str, Any]) -> None:
    """The rest of an example's setup, in this order: call the tool with ``prior_call``
    (its ``data.next_cursor`` and ``data.capture_id``, or its ``cursor``, become
    ``{cursor}`` and ``{capture_id}``); run each tmux command of ``then``; wait until the pane shows
    ``wait_for_after``."""
    socket_name = values["socket_name"]

    def shows(text: str) -> bool:
        return text in tmux(socket_name, "capture-pane", "-p", "-t", values["pane_id"])

    if "prior_call" in setup:
        prior = await client.call_tool(tool, fill(setup["prior_call"], values))
        assert not prior.is_error, prior.content
        assert prior.structured_content is not None
        # tmux_capture's cursor is in its data, capture_since's in the result itself
        data = prior.structured_content.get("data", prior.structured_content)
        values["cursor"] = data.get("next_cursor", data.get("cursor", ""))
        values["capture_id"] = data.get("capture_id", "")
    for command in setup.get("then", []):
        tmux(socket_name, *fill(command, values))
    if "wait_for_after" in setup:
        await until(lambda: shows(setup["wait_for_after"]))
