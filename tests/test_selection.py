"""What a server serves: projections checked by the exact contract, --tools, instructions,
``schemux tools``."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from mcp import Client, MCPError

from schemux.config import Settings, settings_from
from schemux.context import ToolContext
from schemux.errors import ConfigError
from schemux.generated.bindings import BINDINGS
from schemux.generated.serving import SERVED_INPUT_SCHEMAS
from schemux.instructions import instructions
from schemux.selection import FAMILIES, family_of, select
from schemux.server import build_server
from schemux.tool_listing import served_size
from tests.conftest import stdio_parameters

pytestmark = pytest.mark.anyio

# No tmux server runs on this socket: a call that reached tmux would fail differently.
NEVER_STARTED = "schemux-test-never-started"
TARGET = {"kind": "pane", "id": "%1", "generation": "g" * 16}


def test_families_cover_every_tool_once() -> None:
    members = [tool for tools in FAMILIES.values() for tool in tools]
    assert len(members) == len(set(members))
    assert set(BINDINGS) <= set(members)
    assert family_of("tmux_capture") == "capture"
    assert family_of("send_keys") == "keys"
    assert family_of("nope") is None


def test_select_by_names_and_families_keeps_the_bound_order() -> None:
    chosen = select(BINDINGS, ["tmux_capture", "commands"])
    assert list(chosen) == [
        n for n in BINDINGS if n in ("run_command", "run_shell_command", "tmux_capture")
    ]
    assert select(BINDINGS, []) == BINDINGS
    # a family whose tools are not bound yet selects what is bound of it: nothing, here
    assert select({"run_command": 1}, ["keys", "run_command"]) == {"run_command": 1}


@pytest.mark.parametrize("name", ["nope", "send_keys", "Commands", "", "run_command;ls"])
def test_select_refuses_a_name_that_is_no_bound_tool_nor_family(name: str) -> None:
    bound = {"run_command": 1, "tmux_capture": 2}
    with pytest.raises(ConfigError) as refused:
        select(bound, [name or " "])
    assert str(refused.value) == (
        f"unknown tool or family {(name or ' ')!r} in --tools; "
        "valid tools: run_command, tmux_capture; valid families: commands, capture"
    )


def test_settings_read_tools_and_exact_schemas_from_the_environment() -> None:
    env = {"SCHEMUX_TOOLS": " commands, tmux_capture ,", "SCHEMUX_EXACT_SCHEMAS": "1"}
    settings = settings_from(env)
    assert settings.tools == ("commands", "tmux_capture")
    assert settings.exact_schemas is True
    assert settings_from(env, tools="programs").tools == ("programs",)
    assert settings_from({}).exact_schemas is False
    with pytest.raises(ConfigError, match="SCHEMUX_EXACT_SCHEMAS='maybe': expected 1 or 0"):
        settings_from({"SCHEMUX_EXACT_SCHEMAS": "maybe"})


def test_instructions_name_only_served_tools() -> None:
    everything = instructions(FAMILIES["commands"] + FAMILIES["keys"] + FAMILIES["capture"])
    lines = everything.splitlines()
    assert lines[1].startswith("Authored shell commands")
    assert "run_command (" in lines[1]
    assert "run_shell_command (" in lines[1]
    assert lines[2].startswith("Interactive input")
    assert "send_keys (type text or keys), send_keys_batch (" in lines[2]
    assert "wait_for_channel (wait for the signal a line you typed sends)" in lines[2]
    assert lines[3].startswith("Screens: tmux_snapshot (")
    for tool in FAMILIES["programs"]:
        assert tool not in everything
    only_capture = instructions(["tmux_capture"])
    assert only_capture.splitlines()[1:] == [
        "Screens: tmux_capture (a pane's exact rows, with cursors for what changed)."
    ]
    for tool in set(BINDINGS) - {"tmux_capture"}:
        assert tool not in only_capture


async def call_text(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    return result.is_error, result.content[0].text  # type: ignore[union-attr]


async def test_projected_tmux_capture_refuses_a_forbidden_combination_with_the_rule() -> None:
    context = ToolContext(Settings(socket_name=NEVER_STARTED))
    async with Client(build_server(context, BINDINGS)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        served = listed["tmux_capture"].input_schema
        assert {"cursor", "track"} <= set(served["properties"])  # the projection allows both
        failed, text = await call_text(
            client, "tmux_capture", {"target": TARGET, "cursor": "a" * 32, "track": True}
        )
    assert failed
    assert text == (
        "Invalid arguments for tmux_capture: (arguments): matches none of the 2 forms "
        "(rule: oneOf): form 1: (arguments): Additional properties are not allowed ('cursor' "
        "was unexpected) (rule: additionalProperties); form 2: (arguments): Additional "
        "properties are not allowed ('track' was unexpected) (rule: additionalProperties)"
    )


async def test_a_served_subset_over_stdio_lists_and_calls_only_what_it_serves() -> None:
    parameters = stdio_parameters("--socket-name", NEVER_STARTED, "--tools", "capture")
    async with Client(parameters) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed == [
            "capture_pane",
            "capture_since",
            "snapshot_pane",
            "tmux_capture",
            "tmux_snapshot",
        ]
        guide = client.instructions or ""
        assert "tmux_capture" in guide
        assert "run_command" not in guide
        with pytest.raises(MCPError) as refused:
            await client.call_tool("run_command", {"command": "true"})
        assert refused.value.error.message == (
            "Unknown tool: run_command; this server serves capture_pane, capture_since, "
            "snapshot_pane, tmux_capture, tmux_snapshot"
        )
        failed, text = await call_text(
            client, "tmux_capture", {"target": TARGET, "cursor": "a" * 32, "max_lines": 5}
        )
    assert failed
    assert "(rule: oneOf): form 1: (arguments): Additional properties are not allowed" in text
    assert "('max_lines' was unexpected)" in text


async def test_exact_schemas_over_stdio_serve_the_root_one_of() -> None:
    parameters = stdio_parameters(
        "--socket-name", NEVER_STARTED, "--tools", "tmux_capture", "--exact-schemas"
    )
    async with Client(parameters) as client:
        (tool,) = (await client.list_tools()).tools
    assert "oneOf" in tool.input_schema
    assert "properties" not in tool.input_schema


def schemux(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schemux", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_serve_with_an_unknown_tool_stops_at_start_listing_the_valid_ones() -> None:
    done = schemux("serve", "--socket-name", NEVER_STARTED, "--tools", "commands,bogus")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "schemux: unknown tool or family 'bogus' in --tools; "
        f"valid tools: {', '.join(BINDINGS)}; "
        f"valid families: {', '.join(f for f in FAMILIES if set(FAMILIES[f]) & set(BINDINGS))}\n"
    )


def test_tools_prints_every_tool_with_family_size_and_summary() -> None:
    done = schemux("tools", "--tools", "commands")
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert header.split() == ["TOOL", "FAMILY", "BYTES", "SERVED", "SUMMARY"]
    assert [row.split()[0] for row in rows] == sorted(BINDINGS)
    for row in rows:
        name, family, size, served, *summary = row.split()
        binding = BINDINGS[name]
        assert family == family_of(name)
        assert int(size) == served_size(binding, exact=False)
        assert served == ("yes" if family == "commands" else "no")
        assert " ".join(summary) == " ".join(binding.summary.split())
    exact = schemux("tools", "--exact-schemas").stdout.splitlines()[1:]
    sizes = {row.split()[0]: int(row.split()[2]) for row in exact}
    for name in SERVED_INPUT_SCHEMAS:
        assert sizes[name] == served_size(BINDINGS[name], exact=True)
        assert sizes[name] != served_size(BINDINGS[name], exact=False)


def test_served_size_is_the_bytes_of_the_tools_list_entry() -> None:
    binding = BINDINGS["tmux_capture"]
    document = binding.served_document()
    compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    assert served_size(binding, exact=False) == len(compact.encode("utf-8"))
