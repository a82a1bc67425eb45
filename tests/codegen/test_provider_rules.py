"""The provider lint: every served document passes it, and it catches each rule it claims."""

from __future__ import annotations

from typing import Any

import pytest

from codegen import provider_rules as rules
from codegen.provider_rules import RULES, Rule, lint_tool
from schemux.generated.bindings import BINDINGS
from tests.generated_data import TOOL_DOCUMENTS


def violated(name: str, schema: dict[str, Any]) -> set[tuple[str, str]]:
    return {(found.rule.provider, found.rule.id) for found in lint_tool(name, schema)}


def key(rule: Rule) -> tuple[str, str]:
    return rule.provider, rule.id


@pytest.mark.parametrize("name", sorted(BINDINGS))
def test_every_served_document_passes_the_lint(name: str) -> None:
    served = BINDINGS[name].served_document()
    assert lint_tool(served["name"], served["inputSchema"]) == []


def test_the_exact_tmux_capture_contract_is_the_one_that_needs_it() -> None:
    found = violated("tmux_capture", TOOL_DOCUMENTS["tmux_capture"]["inputSchema"])
    assert key(rules.ANTHROPIC_ROOT_COMBINATOR) in found
    assert key(rules.OPENAI_ROOT_COMBINATOR) in found
    assert key(rules.OPENAI_ROOT_OBJECT) in found


def test_a_plain_object_schema_passes() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "x", "minLength": 1, "pattern": "^a"},
            "count": {"type": "integer", "minimum": 0, "maximum": 9, "default": 1},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "opt": {"type": "string", "nullable": True},
        },
        "required": ["name"],
    }
    assert lint_tool("good_tool", schema) == []


OBJECT = {"type": "object", "properties": {"a": {"type": "string"}}}

# Each rule the lint claims, with a small document that breaks it.
CASES: list[tuple[Rule, str, dict[str, Any]]] = [
    (rules.ANTHROPIC_NAME, "has space", OBJECT),
    (rules.OPENAI_NAME, "dotted.name", OBJECT),
    (rules.GEMINI_NAME, "9starts_with_digit", OBJECT),
    (rules.ANTHROPIC_ROOT_OBJECT, "t", {"type": "string"}),
    (rules.ANTHROPIC_ROOT_COMBINATOR, "t", {**OBJECT, "anyOf": [OBJECT]}),
    (rules.ANTHROPIC_ROOT_COMBINATOR, "t", {"type": "object", "allOf": [OBJECT]}),
    (rules.ANTHROPIC_JSON_SCHEMA, "t", {**OBJECT, "required": "a"}),
    (rules.OPENAI_ROOT_OBJECT, "t", {"type": "object"}),
    (rules.OPENAI_ROOT_COMBINATOR, "t", {"type": "object", "oneOf": [OBJECT, OBJECT]}),
    (rules.OPENAI_NESTING, "t", {"type": "object", "properties": {"a": {
        "type": "object", "properties": {"b": {"type": "object", "properties": {"c": {
            "type": "object", "properties": {"d": {"type": "object", "properties": {"e": {
                "type": "object", "properties": {"f": {"type": "string"}}}}}}}}}}}}}),
    (rules.OPENAI_PROPERTY_COUNT, "t", {
        "type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(101)}}),
    (rules.GEMINI_PARAMETER_NAME, "t", {"type": "object", "properties": {"a-b": {}}}),
    (rules.GEMINI_KEYWORD, "t", {**OBJECT, "$schema": "http://json-schema.org/draft-07/schema#"}),
    (rules.GEMINI_KEYWORD, "t", {**OBJECT, "additionalProperties": False}),
    (rules.GEMINI_KEYWORD, "t", {"type": "object", "properties": {"a": {"const": "x"}}}),
    (rules.GEMINI_KEYWORD, "t", {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}},
                                 "$defs": {"a": {"type": "string"}}}),
    (rules.GEMINI_KEYWORD, "t", {"type": "object", "properties": {"a": {
        "oneOf": [{"type": "string"}, {"type": "integer"}]}}}),
    (rules.GEMINI_KEYWORD, "t", {"type": "object", "properties": {"a": {
        "type": "integer", "exclusiveMinimum": 0}}}),
    (rules.GEMINI_TYPE, "t", {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
    (rules.GEMINI_TYPE, "t", {"type": "object", "properties": {"a": {"type": "text"}}}),
    (rules.GEMINI_ENUM, "t", {"type": "object", "properties": {"a": {
        "type": "integer", "enum": [1, 2]}}}),
    (rules.GEMINI_ENUM, "t", {"type": "object", "properties": {"a": {"enum": ["x"]}}}),
    (rules.GEMINI_REQUIRED, "t", {**OBJECT, "required": ["b"]}),
    (rules.GEMINI_ITEMS, "t", {"type": "object", "properties": {"a": {
        "type": "array", "items": [{"type": "string"}]}}}),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "name", "schema"), CASES, ids=lambda v: getattr(v, "id", None))
def test_the_lint_catches_each_rule(rule: Rule, name: str, schema: dict[str, Any]) -> None:
    assert key(rule) in violated(name, schema)


def test_every_rule_has_a_case_and_a_cited_page() -> None:
    assert {key(rule) for rule in RULES} == {key(rule) for rule, _, _ in CASES}
    assert all(rule.source.startswith("https://") for rule in RULES)


def test_a_violation_names_tool_rule_place_and_page() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "const": "x"}}}
    (found,) = lint_tool("some_tool", schema)
    assert str(found) == (
        "some_tool: gemini rule schema-field (only fields of the Schema object (an OpenAPI "
        "3.0 subset)) broken at properties/a: 'const' is not a Schema field; "
        "see https://ai.google.dev/api/caching#Schema"
    )


# Each place a subschema can sit (2020-12 applicators), with a violation inside it.
BAD = {"type": "string", "const": "x"}
NESTED: list[tuple[str, dict[str, Any]]] = [
    ("if", {**OBJECT, "if": BAD}),
    ("then", {**OBJECT, "if": {"required": ["a"]}, "then": BAD}),
    ("else", {**OBJECT, "if": {"required": ["a"]}, "else": BAD}),
    ("patternProperties/^x", {**OBJECT, "patternProperties": {"^x": BAD}}),
    ("dependentSchemas/a", {**OBJECT, "dependentSchemas": {"a": BAD}}),
    ("propertyNames", {**OBJECT, "propertyNames": BAD}),
    ("properties/a/contains", {"type": "object", "properties": {"a": {"contains": BAD}}}),
    ("properties/a/unevaluatedItems", {"type": "object", "properties": {"a": {
        "unevaluatedItems": BAD}}}),
    ("unevaluatedProperties", {**OBJECT, "unevaluatedProperties": BAD}),
    ("properties/a/prefixItems/0", {"type": "object", "properties": {"a": {
        "prefixItems": [BAD]}}}),
]  # fmt: skip


@pytest.mark.parametrize(("where", "schema"), NESTED, ids=[where for where, _ in NESTED])
def test_a_violation_inside_any_subschema_is_reported_there(
    where: str, schema: dict[str, Any]
) -> None:
    found = [
        (v.where, v.detail)
        for v in lint_tool("t", schema)
        if key(v.rule) == key(rules.GEMINI_KEYWORD)
    ]
    assert (where, "'const' is not a Schema field") in found


def test_pattern_properties_count_as_a_level_of_nesting() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(6):
        schema = {"type": "object", "properties": {"a": {}}, "patternProperties": {"^a": schema}}
    assert key(rules.OPENAI_NESTING) in violated("t", schema)
