"""What a server serves: projections checked by the exact contract, --tools, instructions,
``schemux tools``."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from typing import Any

import pytest
from mcp import Client, MCPError

from codegen.provider_rules import lint_openai_strict
from schemux.config import SchemaMode, Settings, settings_from
from schemux.errors import ConfigError
from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import FAMILIES, ON_REQUEST_FAMILIES
from schemux.serving.instructions import instructions
from schemux.serving.selection import family_of, select
from schemux.serving.state import ServingState
from schemux.serving.tool_listing import model_tokens, served_size
from tests.conftest import stdio_parameters
from tests.contexts import client_of
from tests.generated_data import SERVED_INPUT_SCHEMAS

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
    chosen = select(BINDINGS, ["tmux_capture", "commands"], several_hosts=False)
    assert list(chosen) == [
        n for n in BINDINGS if n in ("run_command", "run_shell_command", "tmux_capture")
    ]
    assert select(BINDINGS, ["all"], several_hosts=True) == BINDINGS
    # a family whose tools are not bound yet selects what is bound of it: nothing, here
    bound = {"run_command": 1}
    assert select(bound, ["keys", "run_command"], several_hosts=True) == bound


def test_the_default_leaves_out_the_families_served_on_request_and_all_serves_them() -> None:
    assert ON_REQUEST_FAMILIES == (
        "pictures", "inspect", "manage", "teardown", "settings", "buffers", "pipes", "shells",
    )  # fmt: skip
    on_request = {tool for family in ON_REQUEST_FAMILIES for tool in FAMILIES[family]}
    assert on_request  # the families have tools to leave out
    default = select(BINDINGS, [], several_hosts=True)
    assert set(BINDINGS) - set(default) == on_request
    assert list(default) == [name for name in BINDINGS if name not in on_request]
    everything = select(BINDINGS, ["all"], several_hosts=True)
    assert list(everything) == list(BINDINGS)
    assert select(BINDINGS, ["all", "keys"], several_hosts=True) == everything
    asked = select(BINDINGS, ["inspect", "run_command"], several_hosts=False)
    assert set(asked) == set(FAMILIES["inspect"]) | {"run_command"}
    # all with one host: still not the tools that need several
    assert set(BINDINGS) - set(select(BINDINGS, ["all"], several_hosts=False)) == {
        "run_command_on_hosts"
    }


def test_a_tool_for_several_hosts_is_served_only_with_several() -> None:
    one_host = select(BINDINGS, ["all"], several_hosts=False)
    assert set(BINDINGS) - set(one_host) == {"run_command_on_hosts"}
    with_commands = select(BINDINGS, ["commands"], several_hosts=True)
    assert "run_command_on_hosts" in with_commands
    with pytest.raises(ConfigError, match="run_command_on_hosts in --tools: served only with"):
        select(BINDINGS, ["run_command_on_hosts"], several_hosts=False)


@pytest.mark.parametrize("name", ["nope", "send_keys", "Commands", "", "run_command;ls"])
def test_select_refuses_a_name_that_is_no_bound_tool_nor_family(name: str) -> None:
    bound = {"run_command": 1, "tmux_capture": 2}
    with pytest.raises(ConfigError) as refused:
        select(bound, [name or " "], several_hosts=True)
    assert str(refused.value) == (
        f"unknown tool or family {(name or ' ')!r} in --tools; "
        "valid tools: run_command, tmux_capture; valid families: commands, capture; or all"
    )


def test_settings_read_tools_and_the_schema_mode_from_the_environment() -> None:
    env = {"SCHEMUX_TOOLS": " commands, tmux_capture ,", "SCHEMUX_EXACT_SCHEMAS": "1"}
    settings = settings_from(env)
    assert settings.tools == ("commands", "tmux_capture")
    assert settings.schemas == "exact"  # the older spelling
    assert settings_from(env, tools="programs").tools == ("programs",)
    assert settings_from({}).schemas == "projected"
    assert settings_from({"SCHEMUX_SCHEMAS": "openai-strict"}).schemas == "openai-strict"
    assert settings_from({"SCHEMUX_SCHEMAS": "compact"}).schemas == "compact"
    # the new variable wins over the old one, and an option over both
    both = {"SCHEMUX_SCHEMAS": "projected", "SCHEMUX_EXACT_SCHEMAS": "1"}
    assert settings_from(both).schemas == "projected"
    assert settings_from(both, schemas="openai-strict").schemas == "openai-strict"
    with pytest.raises(ConfigError, match="SCHEMUX_EXACT_SCHEMAS='maybe': expected 1 or 0"):
        settings_from({"SCHEMUX_EXACT_SCHEMAS": "maybe"})
    with pytest.raises(
        ConfigError,
        match="SCHEMUX_SCHEMAS='strict': expected projected or compact or exact or openai-strict",
    ):
        settings_from({"SCHEMUX_SCHEMAS": "strict"})


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
    context = ServingState(Settings(socket_name=NEVER_STARTED))
    async with client_of(context, BINDINGS) as client:
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


@pytest.mark.tmux
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


@pytest.mark.tmux
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
    one_host = select(BINDINGS, ["all"], several_hosts=False)  # run_command_on_hosts is not valid
    assert done.stderr == (
        "schemux: unknown tool or family 'bogus' in --tools; "
        f"valid tools: {', '.join(one_host)}; "
        f"valid families: {', '.join(f for f in FAMILIES if set(FAMILIES[f]) & set(BINDINGS))}; "
        "or all\n"
    )


def test_tools_prints_every_tool_with_family_size_tokens_and_summary() -> None:
    done = schemux("tools", "--tools", "commands")
    assert done.returncode == 0, done.stderr
    header, *rows, total = done.stdout.splitlines()
    assert header.split() == ["TOOL", "FAMILY", "BYTES", "TOKENS", "SERVED", "SUMMARY"]
    assert [row.split()[0] for row in rows] == sorted(BINDINGS)
    served_bytes = served_tokens = 0
    commands = select(BINDINGS, ["commands"], several_hosts=False)
    for row in rows:
        name, family, size, tokens, served, *summary = row.split()
        binding = BINDINGS[name]
        assert family == family_of(name)
        assert int(size) == served_size(binding, "projected", commands)
        assert int(tokens) == model_tokens(binding, "projected", commands)
        assert 0 < int(tokens) < int(size) / 3  # name, description and inputSchema only
        assert served == ("yes" if name in commands else "no")
        assert " ".join(summary) == " ".join(binding.summary.split())
        if served == "yes":
            served_bytes, served_tokens = served_bytes + int(size), served_tokens + int(tokens)
    totals = ["served", str(served_bytes), str(served_tokens), "--schemas", "projected"]
    assert total.split() == totals
    for mode in ("compact", "exact", "openai-strict"):
        listed = schemux("tools", "--schemas", mode, "--tools", "all").stdout.splitlines()[1:-1]
        sizes = {row.split()[0]: int(row.split()[2]) for row in listed}
        for name, binding in BINDINGS.items():
            assert sizes[name] == served_size(binding, mode, BINDINGS)
    exact = schemux("tools", "--exact-schemas", "--tools", "all").stdout.splitlines()[1:-1]
    sizes = {row.split()[0]: int(row.split()[2]) for row in exact}
    for name in SERVED_INPUT_SCHEMAS:
        assert sizes[name] == served_size(BINDINGS[name], "exact", BINDINGS)
        assert sizes[name] != served_size(BINDINGS[name], "projected", BINDINGS)


def test_served_size_is_the_bytes_of_the_tools_list_entry() -> None:
    binding = BINDINGS["tmux_capture"]
    document = binding.served_document("projected", BINDINGS)
    compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    assert served_size(binding, "projected", BINDINGS) == len(compact.encode("utf-8"))
    seen = {key: document[key] for key in ("name", "description", "inputSchema")}
    estimate = len(json.dumps(seen, ensure_ascii=False, separators=(",", ":")).encode()) / 4
    assert model_tokens(binding, "projected", BINDINGS) == math.ceil(estimate)


async def test_openai_strict_over_stdio_serves_strict_schemas_and_reads_null_as_absent(
    tmux_socket: str,
) -> None:
    parameters = stdio_parameters(
        "--socket-name",
        tmux_socket,
        "--schemas",
        "openai-strict",
        "--tools",
        "capture,read_program",
    )
    async with Client(parameters) as client:
        listed = (await client.list_tools()).tools
        for tool in listed:
            assert lint_openai_strict(tool.name, tool.input_schema) == []
            # the outputSchema exactly, as in every mode but compact
            exact = BINDINGS[tool.name].served_document("exact")
            assert tool.output_schema == exact["outputSchema"]
        # cursor is optional and never null in the contract: null is "absent", and the
        # call goes on to the handler, which has no such program
        failed, text = await call_text(
            client, "read_program", {"programId": "p-99999", "cursor": None}
        )
        assert failed
        assert "Invalid arguments" not in text
        assert "p-99999" in text
        # a bound the strict schema does not state is still the contract's
        failed, text = await call_text(client, "read_program", {"programId": "p1", "cursor": -1})
        assert failed
        assert text == (
            "Invalid arguments for read_program: cursor: -1 is less than the minimum "
            "of 0; give 0 or more (rule: minimum)"
        )


async def test_null_for_an_optional_argument_is_refused_outside_openai_strict() -> None:
    context = ServingState(Settings(socket_name=NEVER_STARTED))
    async with client_of(context, BINDINGS) as client:
        failed, text = await call_text(client, "read_program", {"programId": "p1", "cursor": None})
    assert failed
    assert text == (
        "Invalid arguments for read_program: cursor: None is not of type 'integer' (rule: type)"
    )


def served_tool_names(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z_]+", text) if word in BINDINGS}


@pytest.mark.parametrize("requested", [["keys"], ["keys", "commands"], ["programs"], []])
async def test_advice_is_served_only_with_the_tools_it_needs(requested: list[str]) -> None:
    served = select(BINDINGS, requested, several_hosts=True)
    context = ServingState(Settings(socket_name=NEVER_STARTED))
    async with client_of(context, served) as client:
        listed = (await client.list_tools()).tools
    for tool in listed:
        text = tool.model_dump_json(by_alias=True, exclude_none=True)
        assert served_tool_names(text) <= set(served), tool.name
    descriptions = {tool.name: tool.description or "" for tool in listed}
    if "send_keys" in served:
        assert ("use ``run_command`` instead" in descriptions["send_keys"]) == (
            "run_command" in served
        )
        # --tools keys serves the keys companions' advice, not capture_since's
        for companion in ("send_keys_batch", "wait_for_channel", "capture_since"):
            assert (f"``{companion}``" in descriptions["send_keys"]) == (companion in served)
    if "wait_for_text" in served:
        for companion in ("wait_for_channel", "snapshot_pane"):
            assert (f"``{companion}``" in descriptions["wait_for_text"]) == (companion in served)
    if "start_program" in served:
        assert "Read what it prints with read_program." in descriptions["start_program"]


async def test_hints_say_what_each_handler_does() -> None:
    context = ServingState(Settings(socket_name=NEVER_STARTED))
    async with client_of(context, BINDINGS) as client:
        listed = (await client.list_tools()).tools
    hints = {tool.name: tool.annotations for tool in listed}
    read_only = {name for name, hint in hints.items() if hint and hint.read_only_hint}
    assert read_only == {
        "capture_pane", "capture_since", "read_program", "snapshot_pane", "tmux_capture",
        "tmux_snapshot", "wait_for_text", *FAMILIES["inspect"], "show_buffer", "picture_pane",
    }  # fmt: skip
    # a wait for a channel consumes the signal it waits for: not read-only, not destructive;
    # what makes a session, window or pane only adds, and what names, focuses, arranges or
    # resizes one loses nothing; a buffer staged under a new name replaces nothing; an
    # adopted shell gains hooks around its prompt
    kept = {
        "wait_for_channel", "create_session", "create_window", "split_window",
        "rename_session", "rename_window", "select_window", "select_pane", "select_layout",
        "resize_pane", "resize_window", "move_window", "swap_pane", "set_pane_title",
        "enter_copy_mode", "exit_copy_mode", "load_buffer", "adopt_pane",
    }  # fmt: skip
    destructive = set(hints) - read_only - kept
    for name, hint in hints.items():
        assert hint is not None
        assert hint.destructive_hint is (name in destructive)  # what runs may do anything
        assert hint.open_world_hint is (
            name
            in {
                "run_command", "run_shell_command", "run_program", "start_program",
                "send_keys", "send_keys_batch", "signal_channel", "run_command_on_hosts",
                "create_session", "create_window", "split_window", "respawn_pane",
                "set_option", "set_environment", "paste_buffer", "paste_text", "pipe_pane",
            }
        )  # fmt: skip


async def tools_list_bytes(mode: SchemaMode) -> tuple[int, list[dict[str, Any]]]:
    """The bytes of tools/list's result (compact JSON) in ``mode``, and its entries, as
    one host serves them."""
    context = ServingState(Settings(socket_name=NEVER_STARTED, schemas=mode))
    served = select(BINDINGS, [], several_hosts=context.settings.several_hosts)
    async with client_of(context, served) as client:
        listed = await client.list_tools()
    entries = [
        tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools
    ]
    wire = json.dumps({"tools": entries}, ensure_ascii=False, separators=(",", ":"))
    return len(wire.encode("utf-8")), entries


async def test_the_compact_tools_list_fits_35_kb_and_the_default_adds_the_output_schemas() -> None:
    compact, compact_entries = await tools_list_bytes("compact")
    default, entries = await tools_list_bytes("projected")
    assert not any("_meta" in entry for entry in entries)  # provenance is in docs/tools.md
    assert all("outputSchema" in entry for entry in entries)
    assert not any("outputSchema" in entry for entry in compact_entries)
    assert compact <= 35_000
    output_schemas = sum(
        len(json.dumps(entry["outputSchema"], separators=(",", ":"), ensure_ascii=False).encode())
        + len(',"outputSchema":')
        for entry in entries
    )
    assert default == compact + output_schemas
