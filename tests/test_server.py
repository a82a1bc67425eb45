"""The server's pipeline and surfaces: tools/list, errors, both protocol eras, HTTP, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from schemux.config import Settings
from schemux.domain.call import Call
from schemux.errors import Created, Effects, Refused
from schemux.generated.bindings import BINDINGS, UNSERVED
from schemux.serving.binding import ToolBinding
from schemux.serving.selection import select
from schemux.serving.server import build_server, json_text
from schemux.serving.state import ServingState
from tests import process_table
from tests.conftest import stdio_parameters
from tests.generated_data import (
    EXTENDED_DOCUMENTS,
    SERVED_DOCUMENTS,
    SERVED_INPUT_SCHEMAS,
    TOOL_DOCUMENTS,
)
from tests.http_serving import free_port
from tests.support import StandInBinding, new_pane, wait_until

pytestmark = pytest.mark.anyio

# what a server of one host serves by default: every tool but those that take several
# hosts and those of the families served only on request
ONE_HOST_TOOLS = list(select(BINDINGS, [], several_hosts=False))


def test_tools_without_a_handler_are_listed() -> None:
    """The gap later issues close; update this list as handlers arrive."""
    assert UNSERVED == ()
    assert set(BINDINGS) | set(UNSERVED) == set(TOOL_DOCUMENTS)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_are_served_as_documented_with_projected_inputs(
    tmux_socket: str, mode: str
) -> None:
    server = build_server(ServingState(Settings(socket_name=tmux_socket)), BINDINGS)
    async with Client(server, mode=mode) as client:
        listed = (await client.list_tools()).tools
    assert [tool.name for tool in listed] == list(BINDINGS)
    assert {"run_command", "run_shell_command", "capture_pane"} <= set(BINDINGS)
    for tool in listed:
        served = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        told = SERVED_DOCUMENTS[tool.name]
        projected = SERVED_INPUT_SCHEMAS.get(tool.name, told["inputSchema"])
        # no _meta (provenance is in docs/tools.md); the outputSchema exactly, which
        # clients check results against
        assert served.keys() == {
            "name", "description", "inputSchema", "outputSchema", "annotations",
        } | ({"title"} & told.keys())  # fmt: skip
        assert served["inputSchema"] == projected
        assert served["outputSchema"] == told["outputSchema"]
        assert served["annotations"] == told["annotations"]
        assert served["description"].startswith(told["description"])
        # the overlay's texts over the exact contract: the same rules, and its own
        # arguments
        assert without_texts(told["inputSchema"]) == without_texts(
            EXTENDED_DOCUMENTS[tool.name]["inputSchema"]
        )


def without_texts(schema: Any) -> Any:
    """``schema`` without descriptions and titles: what validates."""
    if isinstance(schema, dict):
        return {
            key: without_texts(value)
            for key, value in schema.items()
            if not (key in ("description", "title") and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [without_texts(item) for item in schema]
    return schema


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_exact_schemas_serves_the_contracts_rules_with_schemux_texts(
    tmux_socket: str, mode: str
) -> None:
    settings = Settings(socket_name=tmux_socket, schemas="exact")
    async with Client(build_server(ServingState(settings), BINDINGS), mode=mode) as client:
        listed = (await client.list_tools()).tools
    assert "tmux_capture" in SERVED_INPUT_SCHEMAS  # there is a projection to not serve
    for tool in listed:
        served = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        exact = EXTENDED_DOCUMENTS[tool.name]  # the contract, with the overlay's arguments
        assert "_meta" not in served
        for key in ("inputSchema", "outputSchema"):
            assert served[key] == SERVED_DOCUMENTS[tool.name][key]
            assert without_texts(served[key]) == without_texts(exact[key])


async def test_compact_schemas_serve_the_projected_inputs_without_output_schemas(
    tmux_socket: str,
) -> None:
    settings = Settings(socket_name=tmux_socket, schemas="compact")
    async with Client(build_server(ServingState(settings), BINDINGS)) as client:
        listed = (await client.list_tools()).tools
        # the server still checks its result against the outputSchema, and sends it
        called = await client.call_tool("signal_channel", {"channel": "compact-mode"})
    for tool in listed:
        served = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        told = SERVED_DOCUMENTS[tool.name]
        assert "outputSchema" not in served
        assert served["inputSchema"] == SERVED_INPUT_SCHEMAS.get(tool.name, told["inputSchema"])
    assert not called.is_error
    assert called.structured_content == {"result": "Channel 'compact-mode' signalled"}


@pytest.mark.tmux
async def test_schema_violations_come_before_any_tmux_work() -> None:
    # no tmux server runs on this socket, and only the configured server is ever started:
    # any tmux work would fail differently
    settings = Settings(socket_name=f"schemux-test-never-configured-{os.getpid()}")
    never = "schemux-test-never-started"
    async with Client(build_server(ServingState(settings), BINDINGS)) as client:
        result = await client.call_tool("run_command", {"command": 5, "socket_name": never})
        assert result.is_error
        assert result.content[0].text == (  # type: ignore[union-attr]
            "Invalid arguments for run_command: command: 5 is not of type 'string' (rule: type)"
        )
        result = await client.call_tool("run_command", {"command": "true", "socket_name": never})
        assert "no tmux server is running on socket name 'schemux-test-never-started'" in (
            result.content[0].text  # type: ignore[union-attr]
        )


# what a handler cannot take that its contract allows, refused by its overlay's checks
# (schemas/overlays/<tool>.toml) with the contract: the field named, and what to give
CHECKED: list[tuple[str, dict[str, Any], str]] = [
    ("run_command", {"command": "true", "timeout": 0},
     "timeout: 0 is less than or equal to the minimum of 0; give more than 0 "
     "(rule: exclusiveMinimum)"),
    ("run_command", {"command": "true", "max_lines": -1},
     "max_lines: -1 is less than the minimum of 0; give 0 or more (rule: minimum)"),
    ("run_command_on_hosts", {"command": "true", "timeout": -1.5},
     "timeout: -1.5 is less than or equal to the minimum of 0; give more than 0 "
     "(rule: exclusiveMinimum)"),
    ("run_command_on_hosts", {"command": "true", "max_lines": -1},
     "max_lines: -1 is less than the minimum of 0; give 0 or more (rule: minimum)"),
    ("run_command_on_hosts", {"command": "true", "hosts": []},
     "hosts: [] should be non-empty; give at least 1 item (rule: minItems)"),
    ("run_command_on_hosts", {"command": "true", "hosts": ["a"], "group": "g"},
     "(arguments): hosts and group: give one of them, or omit both to run on every host "
     "(rule: not)"),
    ("send_keys_batch", {"operations": [{"keys": "x"}], "timeout": 0},
     "timeout: 0 is less than or equal to the minimum of 0; give more than 0 "
     "(rule: exclusiveMinimum)"),
    ("snapshot_pane", {"max_lines": -1},
     "max_lines: -1 is less than the minimum of 0; give 0 or more (rule: minimum)"),
    ("capture_since", {"max_lines": -1},
     "max_lines: -1 is less than the minimum of 0; give 0 or more (rule: minimum)"),
    ("capture_since", {"max_bytes": -1},
     "max_bytes: -1 is less than the minimum of 0; give 0 or more (rule: minimum)"),
    ("wait_for_channel", {"channel": "c", "timeout": 0},
     "timeout: 0 is less than or equal to the minimum of 0; give more than 0 "
     "(rule: exclusiveMinimum)"),
    ("wait_for_text", {"interval": 0.001},
     "interval: 0.001 is less than the minimum of 0.01; give 0.01 or more (rule: minimum)"),
    ("wait_for_text", {"timeout": 0},
     "timeout: 0 is less than or equal to the minimum of 0; give more than 0 "
     "(rule: exclusiveMinimum)"),
    ("wait_for_text", {"patterns": []},
     "patterns: [] should be non-empty; give at least 1 item (rule: minItems)"),
]  # fmt: skip


@pytest.mark.tmux  # its last call reaches tmux, to show what the checks allow goes on
async def test_the_overlays_checks_refuse_before_any_tmux_work_naming_the_field() -> None:
    # no tmux server runs on this socket, and none is started by a refused call
    settings = Settings(socket_name=f"schemux-test-never-configured-{os.getpid()}")
    async with Client(build_server(ServingState(settings), BINDINGS)) as client:
        for tool, arguments, reason in CHECKED:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            text = result.content[0].text  # type: ignore[union-attr]
            assert text == f"Invalid arguments for {tool}: {reason}"
        # the pair is exclusive only when both are given: a null one is as absent
        result = await client.call_tool(
            "run_command_on_hosts", {"command": "true", "hosts": None, "group": "g"}
        )
        assert "group: 'g' is not a configured group" in result.content[0].text  # type: ignore[union-attr]
        # what the checks allow reaches the call's work: here the missing server
        allowed = {"interval": 0.01, "timeout": 0.1, "socket_name": "schemux-test-never-started"}
        result = await client.call_tool("wait_for_text", allowed)
        assert "no tmux server is running" in result.content[0].text  # type: ignore[union-attr]


def test_the_checks_are_not_served() -> None:
    """tools/list serves the contracts (and overlays' texts) as they were: a check is
    schemux's own reason to refuse, not a change to the contract."""
    for name, binding in BINDINGS.items():
        served = json.dumps(binding.served_document("exact"))
        assert "give one of them" not in served, name
        if binding.checks:
            assert (
                binding.served_document("exact")["inputSchema"]
                == (SERVED_DOCUMENTS[name]["inputSchema"])
            )
            assert binding.input_validator.schema != binding.document["inputSchema"]


def binding_with(call: Any) -> dict[str, ToolBinding]:
    document = TOOL_DOCUMENTS["run_command"]
    return {
        "run_command": StandInBinding(
            document=document, input_model="RunCommandInput", stand_in=call
        )
    }


@pytest.fixture
async def faulty_client() -> AsyncIterator[Client]:
    """run_command bound to a call that raises on "boom" and breaks its contract on "bad"."""

    async def call(ctx: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        if arguments["command"] == "boom":
            raise RuntimeError("kaboom")
        if arguments["command"] == "bad":
            return {"pane_id": "%1", "timed_out": "no"}
        return {"pane_id": "%1", "timed_out": False, "elapsed_seconds": 0, "effective_timeout": 1}

    async with Client(build_server(ServingState(Settings()), binding_with(call))) as client:
        yield client


async def test_unexpected_exception_is_a_short_error_and_the_server_goes_on(
    faulty_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    result = await faulty_client.call_tool("run_command", {"command": "boom"})
    assert result.is_error
    assert "RuntimeError: kaboom" in result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in result.content[0].text  # type: ignore[union-attr]
    [record] = [r for r in caplog.records if r.name == "schemux"]
    assert record.exc_info is not None  # the traceback goes to the log (stderr)
    assert not (await faulty_client.call_tool("run_command", {"command": "ok"})).is_error


async def test_a_result_that_breaks_its_contract_is_never_sent(
    faulty_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    result = await faulty_client.call_tool("run_command", {"command": "bad"})
    assert result.is_error
    assert result.structured_content is None
    text = result.content[0].text  # type: ignore[union-attr]
    assert "breaks its own contract ((result): 'elapsed_seconds' is a required property" in text
    assert any("server bug: run_command" in r.getMessage() for r in caplog.records)


async def test_unknown_tool_is_a_protocol_error_naming_the_served_ones(
    faulty_client: Client,
) -> None:
    with pytest.raises(MCPError, match=r"^Unknown tool: nope; this server serves run_command$"):
        await faulty_client.call_tool("nope", {})
    with pytest.raises(MCPError) as refused:
        await faulty_client.call_tool("n" * 100_000, {})  # the name is cut, never echoed whole
    message = str(refused.value)
    assert message.startswith(f"Unknown tool: {'n' * 80}…({100_000 - 80} more characters); ")
    assert len(message) < 300


async def test_streamable_http(tmux_socket: str) -> None:
    port = free_port()
    command = [sys.executable, "-m", "schemux", "serve", "-L", tmux_socket, "--http", str(port)]
    process = await anyio.open_process(command)
    try:
        pane = new_pane(tmux_socket)
        with anyio.fail_after(15):
            while True:
                try:
                    await anyio.connect_tcp("127.0.0.1", port)
                    break
                except OSError:
                    await anyio.sleep(0.05)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ONE_HOST_TOOLS
            result = await client.call_tool(
                "run_command", {"command": "echo over-http", "pane_id": pane.pane_id}
            )
        assert result.structured_content is not None
        assert result.structured_content["output"] == ["over-http"]
    finally:
        process.terminate()
        await process.wait()


def schemux(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schemux", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_call_prints_the_result_as_json(tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    arguments = json.dumps({"command": "echo from-cli", "pane_id": pane.pane_id})
    done = schemux("call", "-L", tmux_socket, "run_command", arguments)
    assert done.returncode == 0, done.stderr
    # the result once: its structured content (it printed the text of the same JSON too)
    result = json.loads(done.stdout)
    assert result["output"] == ["from-cli"]
    assert result["exit_status"] == 0
    assert done.stdout.count("from-cli") == 1
    assert done.stderr == ""


def test_call_with_a_failing_tool_exits_1(tmux_socket: str) -> None:
    done = schemux("call", "-L", tmux_socket, "run_command", '{"command": ""}')
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == "command must not be empty\nSuggestion: pass the shell command to run\n"


@pytest.mark.tmux
def test_call_with_bad_json_exits_2() -> None:
    done = schemux("call", "run_command", "{nope")
    assert done.returncode == 2
    assert "not JSON" in done.stderr


@pytest.mark.tmux
def test_call_of_an_unknown_tool_exits_2() -> None:
    done = schemux("call", "no_such_tool", "{}")
    assert done.returncode == 2
    assert done.stderr == (
        f"schemux: Unknown tool: no_such_tool; this server serves {', '.join(ONE_HOST_TOOLS)}\n"
    )


def test_version() -> None:
    done = schemux("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("schemux ")


def test_missing_tmux_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))
    done = schemux("serve", env=env)
    assert done.returncode == 2
    assert done.stderr == "schemux: tmux was not found on PATH; install tmux 3.3 or newer\n"


def test_old_tmux_is_one_line_and_exit_2(tmp_path: Path) -> None:
    fake = tmp_path / "tmux"
    fake.write_text("#!/bin/sh\necho 'tmux 3.2a'\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    done = schemux("serve", env=env)
    assert done.returncode == 2
    assert done.stderr == "schemux: tmux 3.2a is too old: schemux needs tmux 3.3 or newer\n"


def test_bad_configuration_is_one_line_and_exit_2() -> None:
    done = schemux("serve", "--wait-ceiling", "0")
    assert done.returncode == 2
    assert done.stderr.startswith("schemux: the wait ceiling must be a positive number")


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line), from /proc."""
    return {process.pid: (process.ppid, process.command) for process in process_table.processes()}


async def test_the_engine_goes_when_the_client_goes(tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    # a wait ceiling no other test uses tells this server from the others on the socket
    ceiling = "59.25"
    async with Client(stdio_parameters("-L", tmux_socket, "--wait-ceiling", ceiling)) as client:
        await client.call_tool("run_command", {"command": "true", "pane_id": pane.pane_id})
        table = processes()
        [server_pid] = [
            pid
            for pid, (_, cmdline) in table.items()
            if "-m schemux serve" in cmdline and ceiling in cmdline
        ]
        children = [pid for pid, (parent, _) in table.items() if parent == server_pid]
        control_clients = [pid for pid in children if " -C attach-session" in table[pid][1]]
        assert len(control_clients) >= 2  # the shared connection and a pooled waiter
    wait_until(lambda: not set(children) & set(processes()), timeout=5)


async def test_a_failure_the_contract_describes_goes_out_as_an_error_result() -> None:
    document = TOOL_DOCUMENTS["tmux_capture"]
    error = {
        "code": "pane_closed",
        "message": "gone",
        "delivery": "observed",
        "effects": {"state": "none", "created": []},
    }

    async def call(ctx: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        failure = Refused("pane_closed", "gone")
        if arguments["target"]["generation"] == "fine":
            failure.effects = Effects("none")
        else:
            # a bug: an effect its own contract rejects (a session id is $N)
            failure.effects = Effects("known", (Created("session", "@1", "g"),))
        raise failure

    binding = StandInBinding(document=document, input_model="TmuxCaptureInput", stand_in=call)
    server = build_server(ServingState(Settings()), {"tmux_capture": binding})
    async with Client(server) as client:
        target = {"kind": "pane", "id": "%1", "generation": "fine"}
        result = await client.call_tool("tmux_capture", {"target": target})
        assert result.is_error
        assert result.structured_content == {"ok": False, "error": error}
        assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
        result = await client.call_tool("tmux_capture", {"target": {**target, "generation": "x"}})
        assert result.is_error
        assert result.structured_content is None  # a broken envelope is never sent
        assert "breaks its own contract" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "value",
    [
        {"text": 'é漢\u2028\x00\x1f\x7f"\\ /\t\n', "rows": [1, 2.5, 10**20, None, True]},
        {"lone surrogate": "\ud800 and on"},  # not UTF-8: the json module's escape
        {"nested": {"deep": [{"k": "v"}, []], "empty": {}}},
        {"page": "x" * 24_000},
    ],
)
def test_a_results_text_is_compact_json_of_it(value: dict[str, Any]) -> None:
    text = json_text(value)
    assert json.loads(text) == value
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
