"""Property-based fuzzing of every served tool through a real MCP client and real tmux.

Arguments are generated from each tool's own inputSchema (hypothesis-jsonschema), kept
harmless (commands and argv from a fixed set, tmux servers only the fuzz's private one
or one that does not exist, short timeouts under a 2 s ceiling), then some are mutated.
Whatever is sent: no call fails unexpectedly, no result breaks its outputSchema, no
result text holds a traceback, and arguments the served schema refuses are refused
before any tmux work with a message naming the field.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema.exceptions import best_match
from mcp import Client

from schemux.config import AuditSettings, Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.arguments import text_violation, unknown_arguments
from schemux.serving.server import describe_violation
from schemux.serving.state import ServingState
from tests import hypothesis_compat
from tests.contexts import client_of
from tests.generated_data import TOOL_DOCUMENTS
from tests.support import new_pane, private_tmux_server, wait_until

hypothesis_compat.install()

NO_SERVER = f"schemux-fuzz-none-{os.getpid()}"
PANE_KEYS = ("pane_id", "paneId", "fromPaneId")
# harmless wherever they land, and still what each field is for
COMMANDS = ["true", "echo x", "printf '%s\\n' ';' '#{pane_id}' '##'"]
HOSTILE = [";", "\\;", "#{pane_id}", "#(true)", "##", "-t", "a\nb", "'\"", "\x1f", "\t", "x" * 5000]
FUZZ_SETTINGS = settings(
    max_examples=20,
    deadline=None,  # a call may wait for its (short) timeout
    # the example database, or in CI one fixed set of examples: the profile's
    # (tests/suite_rules.py)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

pytestmark = pytest.mark.timeout(600)


class Fuzz:
    """schemux in a thread of its own, on a private tmux server, called synchronously;
    auditing into ``log``, each call's tool and whether it failed kept in ``answered``."""

    def __init__(self, portal: BlockingPortal, client: Client, socket_name: str, log: Path) -> None:
        self.portal = portal
        self.client = client
        self.socket_name = socket_name
        self.log = log
        self.answered: list[tuple[str, bool]] = []
        self.pane_id = new_pane(socket_name).pane_id  # a shell at its prompt
        started = self.call("start_program", {"argv": ["sh", "-c", "echo started; sleep 60"]})
        self.program_id = started.structured_content["programId"]

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        result = self.portal.call(self.client.call_tool, tool, arguments)
        self.answered.append((tool, bool(result.is_error)))
        return result


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    log = tmp_path_factory.mktemp("fuzz-audit") / "audit.jsonl"
    with private_tmux_server("fuzz") as socket_name, start_blocking_portal() as portal:
        audit = AuditSettings(log)
        context = ServingState(Settings(socket_name=socket_name, wait_ceiling=2, audit=audit))
        try:
            with portal.wrap_async_context_manager(client_of(context, BINDINGS)) as c:
                yield Fuzz(portal, c, socket_name, log)
        finally:
            portal.call(context.close)


def harmless(draw: Any, arguments: dict[str, Any], fuzz: Fuzz) -> dict[str, Any]:
    """``arguments`` with what could run or wait replaced by harmless values of the same
    shape; every other value stays as generated."""
    safe = dict(arguments)
    for key, value in arguments.items():
        if key == "command" and isinstance(value, str):
            safe[key] = draw(st.sampled_from(COMMANDS))
        elif key == "argv" and isinstance(value, list):
            words = value[1:4] + draw(st.lists(st.sampled_from(HOSTILE), max_size=2))
            safe[key] = draw(st.sampled_from([["true"], ["echo", *words]]))
        elif key == "socket_name" and isinstance(value, str):
            safe[key] = draw(st.sampled_from([fuzz.socket_name, NO_SERVER]))
        elif key == "timeout" and isinstance(value, int | float):
            safe[key] = min(value, 1)
        elif key in ("timeoutMs", "lifetimeMs") and isinstance(value, int):
            safe[key] = min(value, 1000)
        elif key in ("width", "height") and isinstance(value, int):
            safe[key] = min(value, 200)
        elif key == "keep":
            safe[key] = False
        elif key in PANE_KEYS and isinstance(value, str):
            safe[key] = draw(st.sampled_from([value, fuzz.pane_id]))
        elif key == "programId" and isinstance(value, str):
            safe[key] = draw(st.sampled_from([value, fuzz.program_id]))
        elif key == "output_path" and isinstance(value, str) and value.startswith("/"):
            safe[key] = str(fuzz.log.parent / "pipe.log")  # a pipe writes any absolute path
    return safe


def generation_schema(schema: Any) -> Any:
    """``schema`` with ``\\d`` and ``\\w`` in patterns spelled as the ASCII classes
    they are in ECMA-262: hypothesis reads patterns as Python's re, where they take any
    Unicode digit or letter, which the served validators rightly refuse (the mutations
    below send those too)."""
    if isinstance(schema, dict):
        copy = {key: generation_schema(value) for key, value in schema.items()}
        if isinstance(schema.get("pattern"), str):
            copy["pattern"] = (
                schema["pattern"].replace("\\d", "[0-9]").replace("\\w", "[A-Za-z0-9_]")
            )
        return copy
    if isinstance(schema, list):
        return [generation_schema(item) for item in schema]
    return schema


def property_names(schema: Any) -> set[str]:
    """Every property name a schema declares, at any depth."""
    names: set[str] = set()
    if isinstance(schema, dict):
        if isinstance(schema.get("properties"), dict):
            names |= set(schema["properties"])
        for value in schema.values():
            names |= property_names(value)
    elif isinstance(schema, list):
        for item in schema:
            names |= property_names(item)
    return names


def mutated(draw: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` broken one way (most often invalid; the validator decides)."""
    changed = dict(arguments)
    kind = draw(st.sampled_from(["type", "drop", "extra", "newline", "hostile", "unicode"]))
    keys = sorted(changed)
    if kind == "extra" or not keys:
        changed["zz_unknown"] = draw(st.sampled_from([1, "x", None]))
        return changed
    key = draw(st.sampled_from(keys))
    value = changed[key]
    if kind == "type":
        changed[key] = draw(st.sampled_from([5, 1.5, "x", None, True, [], {}]))
    elif kind == "drop":
        del changed[key]
    elif kind == "newline" and isinstance(value, str):
        changed[key] = value + "\n"
    elif kind == "hostile" and isinstance(value, str) and key not in ("command",):
        changed[key] = draw(st.sampled_from(HOSTILE))
    elif kind == "unicode" and isinstance(value, str):
        changed[key] = value + "\u0663"  # a digit to Python's re, not to ECMA-262
    else:
        changed[key] = draw(st.sampled_from([-1, "", [None]]))
    return changed


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def names_field(text: str, name: str) -> bool:
    return bool(name) and any(
        form in text for form in (f"{name}:", f"{name}[", f".{name}", f"'{name}'")
    )


def check(fuzz: Fuzz, tool: str, arguments: dict[str, Any]) -> None:
    binding = BINDINGS[tool]
    violation = best_match(binding.input_validator.iter_errors(arguments))
    result = fuzz.call(tool, arguments)  # a protocol error raises here, and fails the test
    text = text_of(result)
    assert "failed unexpectedly" not in text, (arguments, text)
    assert "Traceback" not in text, (arguments, text)
    assert "breaks its own contract" not in text, (arguments, text)
    unknown = unknown_arguments(tool, arguments, binding.declared_arguments)
    if unknown is not None:  # checked first, where the contract allows more or not
        assert result.is_error, (arguments, text)
        assert text == f"Invalid arguments for {tool}: {unknown}", (arguments, text)
        return
    if violation is not None:
        assert result.is_error, (arguments, text)
        assert text == f"Invalid arguments for {tool}: {describe_violation(violation)}"
        names = set(arguments) | property_names(TOOL_DOCUMENTS[tool]["inputSchema"])
        assert any(names_field(text, name) for name in names), f"no field named: {text}"
        return
    unsendable = text_violation(tool, arguments, binding.declared_arguments)
    if unsendable is not None:  # schema-valid text that tmux cannot take: refused by name
        assert text == f"Invalid arguments for {tool}: {unsendable}", (arguments, text)
        return
    assert not text.startswith("Invalid arguments"), (arguments, text)
    if result.structured_content is not None:
        broken = best_match(binding.output_validator.iter_errors(result.structured_content))
        assert broken is None, (arguments, result.structured_content)
    else:
        assert result.is_error, (arguments, text)


@functools.cache
def arguments_of(tool: str) -> st.SearchStrategy[Any]:
    """The strategy of the tool's inputSchema, made once: made again for each example,
    it took three times as long as the drawing."""
    return from_schema(generation_schema(TOOL_DOCUMENTS[tool]["inputSchema"]))


def generated(data: st.DataObject, tool: str) -> dict[str, Any]:
    """Arguments the tool's inputSchema describes (an object: every root is one)."""
    arguments = data.draw(arguments_of(tool), label="generated")
    assert isinstance(arguments, dict)
    return arguments


@pytest.mark.parametrize("tool", sorted(BINDINGS))
@FUZZ_SETTINGS
@given(data=st.data())
def test_valid_arguments(fuzz: Fuzz, tool: str, data: st.DataObject) -> None:
    check(fuzz, tool, harmless(data.draw, generated(data, tool), fuzz))


@pytest.mark.parametrize("tool", sorted(BINDINGS))
@FUZZ_SETTINGS
@given(data=st.data())
def test_mutated_arguments(fuzz: Fuzz, tool: str, data: st.DataObject) -> None:
    arguments = harmless(data.draw, generated(data, tool), fuzz)
    check(fuzz, tool, mutated(data.draw, arguments))


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_program", {"programId": "x", "foo": 1}),
        ("run_program", {"argv": ["true"], "foo": 1}),
        ("run_program", {"argv": ["true"], "max_lines": "many"}),
        ("capture_pane", {"pane_id": "%0\n"}),
        ("capture_pane", {"pane_id": "%\u0663"}),
        ("run_shell_command", {"command": "true", "paneId": "%0\n"}),
    ],
)
def test_what_was_reported(fuzz: Fuzz, tool: str, arguments: dict[str, Any]) -> None:
    """The disagreements issue 8 found, each now an answer the caller can act on."""
    check(fuzz, tool, arguments)


def test_the_audit_recorded_every_fuzzed_call(fuzz: Fuzz) -> None:
    """(Last in the module.) Each call above, whatever its arguments, is one line of
    JSON in the audit log, in order, its outcome ``ok`` exactly when the call did not
    fail."""
    wait_until(lambda: len(fuzz.log.read_bytes().splitlines()) >= len(fuzz.answered))
    records = [json.loads(line) for line in fuzz.log.read_bytes().split(b"\n")[:-1]]
    recorded = [(record["tool"], record["outcome"] != "ok") for record in records]
    assert recorded == fuzz.answered
