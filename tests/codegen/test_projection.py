"""Projections: deterministic, what generated/ serves, looser than the contract, never stricter."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from codegen.projection import project
from codegen.provider_rules import lint_tool
from tests.generated_data import SERVED_DOCUMENTS, SERVED_INPUT_SCHEMAS, TOOL_DOCUMENTS
from tests.support import fill

EXAMPLES = Path(__file__).resolve().parents[2] / "schemas" / "examples"


def test_projection_is_deterministic_and_is_what_generated_serves() -> None:
    # projected from the document as its overlay tells it (the descriptions differ)
    for name, document in SERVED_DOCUMENTS.items():
        first = project(name, copy.deepcopy(document["inputSchema"]))
        second = project(name, copy.deepcopy(document["inputSchema"]))
        assert first == second
        if first is None:
            assert name not in SERVED_INPUT_SCHEMAS
        else:
            # equal including key order, as the generated literal keeps it
            assert json.dumps(first.schema) == json.dumps(SERVED_INPUT_SCHEMAS[name])


def test_projection_leaves_the_contract_untouched() -> None:
    exact = TOOL_DOCUMENTS["tmux_capture"]["inputSchema"]
    before = copy.deepcopy(exact)
    project("tmux_capture", exact)
    assert exact == before


def test_tmux_capture_projection_exposes_every_branch_property() -> None:
    exact = TOOL_DOCUMENTS["tmux_capture"]["inputSchema"]
    served = SERVED_INPUT_SCHEMAS["tmux_capture"]
    branch_properties = [key for form in exact["oneOf"] for key in form["properties"]]
    assert served["type"] == "object"
    assert "oneOf" not in served
    assert set(served["properties"]) == set(branch_properties)
    assert served["required"] == ["target"]  # the one both forms require
    assert served["properties"]["target"]["properties"]["kind"] == {
        "enum": ["pane"],
        "type": "string",
    }
    assert (
        "Not with history_lines, max_bytes, max_lines, track."
        in (served["properties"]["cursor"]["description"])
    )
    assert "Not with cursor." in served["properties"]["track"]["description"]
    assert served["description"].startswith("Arguments take one of 2 forms (exactly one")


def accepted_example_arguments() -> list[tuple[str, Any]]:
    """The arguments of every contract example that the exact inputSchema accepts and
    that names only arguments the tool has (the others are examples of refused calls:
    schemux refuses an argument a tool does not have where its contract allows more)."""
    found = []
    for path in sorted(EXAMPLES.glob("*.json")):
        examples = json.loads(path.read_text("utf-8"))
        tool = examples["tool"]
        exact = Draft202012Validator(TOOL_DOCUMENTS[tool]["inputSchema"])
        declared = set(
            SERVED_INPUT_SCHEMAS.get(tool, TOOL_DOCUMENTS[tool]["inputSchema"])["properties"]
        )
        for example in examples["examples"]:
            arguments = fill(example["arguments"], PLACEHOLDERS)
            if exact.is_valid(arguments) and set(arguments) <= declared:
                found.append((examples["tool"], arguments))
    return found


# A value for each ``{placeholder}`` of the examples that its field accepts.
PLACEHOLDERS = {
    "pane_id": "%1",
    "generation": "g" * 16,
    "cursor": "a" * 32,
    "program_cursor": 1,
    "program_id": "p1",
    "capture_id": "c1",
    "session_id": "$1",
    "session_name": "work",
    "window_id": "@1",
    "socket_name": "agent",
}


def test_every_tool_has_accepted_examples_to_check_its_projection_with() -> None:
    assert {tool for tool, _ in accepted_example_arguments()} == set(TOOL_DOCUMENTS)


@pytest.mark.parametrize(("tool", "arguments"), accepted_example_arguments())
def test_the_projection_accepts_what_the_contract_accepts(tool: str, arguments: Any) -> None:
    served = SERVED_INPUT_SCHEMAS.get(tool, TOOL_DOCUMENTS[tool]["inputSchema"])
    assert list(Draft202012Validator(served).iter_errors(arguments)) == []


def test_an_acceptable_schema_needs_no_projection() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert project("t", schema) is None


def test_each_step_of_the_projection() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": False,
        "definitions": {"name": {"type": "string", "minLength": 1}},
        "properties": {
            "ref": {"$ref": "#/definitions/name", "description": "A name."},
            "kind": {"const": "pane"},
            "flag": {"const": True},
            "size": {"type": "integer", "exclusiveMinimum": 0, "minimum": -5},
            "ratio": {"type": "number", "exclusiveMaximum": 1},
            "maybe": {"type": ["string", "null"]},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "level": {"enum": [1, 2]},
        },
    }
    projection = project("t", schema)
    assert projection is not None
    assert projection.schema == {
        "type": "object",
        "properties": {
            "ref": {"type": "string", "minLength": 1, "description": "A name."},
            "kind": {"enum": ["pane"], "type": "string"},
            "flag": {"description": "Must be true."},
            "size": {"type": "integer", "minimum": 1},
            "ratio": {"type": "number", "description": "Less than 1."},
            "maybe": {"type": "string", "nullable": True},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "level": {"description": "One of: 1, 2."},
        },
    }
    assert lint_tool("t", projection.schema) == []
    assert projection.notes == (
        "$schema dropped",
        "additionalProperties dropped",
        "definitions dropped after inlining",
        "$ref inlined",
        "const served as a one-value string enum",
        "non-string const said in the description",
        "exclusiveMinimum on an integer served as minimum",
        "exclusiveMaximum said in the description",
        "type array served as one type with nullable",
        "nested oneOf served as anyOf",
        "non-string enum said in the description",
    )


def test_root_forms_merge_with_shared_required_and_allowed_combinations() -> None:
    schema = {
        "type": "object",
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
             "required": ["a", "b"]},
            {"type": "object", "properties": {"a": {"type": "integer"}, "c": {"type": "string"}},
             "required": ["a"], "additionalProperties": False},
        ],
    }  # fmt: skip
    projection = project("t", schema)
    assert projection is not None
    merged = projection.schema
    assert merged["required"] == ["a"]
    assert merged["properties"]["a"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert merged["properties"]["c"]["description"] == ("Only in form (2). Not with b.")
    assert merged["description"] == (
        "Arguments take one of 2 forms (at least one must match): (1) a, b required. "
        "(2) a required; c optional; nothing else."
    )
    assert lint_tool("t", merged) == []


def test_root_all_of_parts_merge() -> None:
    schema = {
        "type": "object",
        "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]},
        ],
    }
    projection = project("t", schema)
    assert projection is not None
    assert projection.schema == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a", "b"],
    }


def test_what_cannot_be_projected_is_left_for_the_lint_to_name() -> None:
    schema = {"type": "object", "properties": {}, "patternProperties": {"^x": {"type": "string"}}}
    projection = project("t", schema)
    assert projection is not None
    assert [violation.rule.id for violation in lint_tool("t", projection.schema)] == [
        "schema-field"
    ]
