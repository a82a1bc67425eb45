"""``--schemas openai-strict``: the projection OpenAI's strict mode takes, linted like the
default one, and what a strict caller sends is what the exact contract reads."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from codegen.provider_rules import lint_openai_strict
from codegen.strict_projection import strict_projection
from schemux.generated.bindings import BINDINGS
from tests.codegen.test_projection import accepted_example_arguments
from tests.generated_data import (
    ABSENT_WHEN_NULL,
    SERVED_DOCUMENTS,
    STRICT_INPUT_SCHEMAS,
    TOOL_DOCUMENTS,
)


def test_every_strict_schema_is_what_generated_serves_and_breaks_no_strict_rule() -> None:
    assert set(STRICT_INPUT_SCHEMAS) == set(TOOL_DOCUMENTS)
    for name, schema in STRICT_INPUT_SCHEMAS.items():
        projection = strict_projection(SERVED_DOCUMENTS[name]["inputSchema"])
        assert projection.schema == schema
        assert projection.nullable == ABSENT_WHEN_NULL[name]
        Draft202012Validator.check_schema(schema)
        assert lint_openai_strict(name, schema) == []


def test_the_strict_lint_names_each_rule_broken() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "minimum": 1, "default": 2},
            "b": {"type": "object", "properties": {"c": {"type": "string"}}},
        },
        "required": ["a"],
    }
    found = {(v.rule.id, v.where) for v in lint_openai_strict("t", schema)}
    assert found == {
        ("all-required", "(root)"),
        ("additional-properties", "(root)"),
        ("supported-keyword", "properties/a"),  # minimum
        ("all-required", "properties/b"),
        ("additional-properties", "properties/b"),
    }
    assert lint_openai_strict("t", {"anyOf": [schema]})[0].rule.id == "root-object"


def test_each_step_of_the_strict_projection() -> None:
    projection = strict_projection(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
                "s": {"type": "string", "pattern": "^%[0-9]+$", "description": "A pane."},
                "k": {"const": "pane"},
                "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "o": {
                    "type": "object",
                    "properties": {"x": {"type": "boolean"}, "y": {"type": "string"}},
                    "required": ["y"],
                },
            },
            "required": ["s"],
        }
    )
    assert projection.schema == {
        "type": "object",
        "properties": {
            "n": {"type": ["integer", "null"], "description": "(at least 1, at most 9)"},
            "s": {"type": "string", "description": "A pane. (matching ^%[0-9]+$)"},
            "k": {"type": ["string", "null"], "enum": ["pane", None]},
            # null is already a value of the contract's: it keeps its meaning
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "o": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"x": {"type": ["boolean", "null"]}, "y": {"type": "string"}},
                        "required": ["x", "y"],
                        "additionalProperties": False,
                    },
                    {"type": "null"},
                ]
            },
        },
        "required": ["n", "s", "k", "maybe", "o"],
        "additionalProperties": False,
    }
    assert projection.nullable == ("o.x", "n", "k", "o")  # inner objects close first


def strict_call(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as a strict caller sends them: every absent property as null, in
    nested objects and in the objects of arrays too."""
    full: dict[str, Any] = {}
    for name, property_schema in schema["properties"].items():
        full[name] = _strict_value(arguments.get(name), property_schema)
    return full


def _strict_value(value: Any, schema: dict[str, Any]) -> Any:
    forms = [schema, *schema.get("anyOf", ())]
    nested = next((form for form in forms if "properties" in form), None)
    if isinstance(value, dict) and nested:
        return strict_call(value, nested)
    items = next((form["items"] for form in forms if isinstance(form.get("items"), dict)), None)
    if isinstance(value, list) and items:
        return [_strict_value(item, items) for item in value]
    return value


def without_nulls(value: Any) -> Any:
    """``value`` without the properties that are null, in nested objects and arrays."""
    if isinstance(value, dict):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


@pytest.mark.parametrize(("tool", "arguments"), accepted_example_arguments())
def test_a_strict_call_is_the_contract_call_once_its_nulls_are_read_as_absent(
    tool: str, arguments: dict[str, Any]
) -> None:
    strict = STRICT_INPUT_SCHEMAS[tool]
    sent = strict_call(arguments, strict)
    assert list(Draft202012Validator(strict).iter_errors(sent)) == []
    before = copy.deepcopy(sent)
    read = BINDINGS[tool].wire_arguments(sent, "openai-strict")
    assert sent == before  # the caller's arguments are not changed in place
    exact = Draft202012Validator(TOOL_DOCUMENTS[tool]["inputSchema"])
    assert list(exact.iter_errors(read)) == []
    # what the contract accepts, less its explicit nulls where it takes null itself
    assert without_nulls(read) == without_nulls(arguments)
    assert BINDINGS[tool].wire_arguments(sent, "projected") is sent  # other modes: as sent
