"""Served schemas and handlers agree: patterns are ECMA-262, models take what schemas take."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.protocols import Validator
from mcp import Client

from schemux.generated.bindings import BINDINGS
from schemux.serving.server import describe_violation
from schemux.serving.validation import ecma_patterns, ecma_regex, ecma_search, fast_arrays
from tests.generated_data import TOOL_DOCUMENTS
from tests.support import call_error

PANE_ID = {"type": "string", "pattern": "^%\\d+$"}
DIALECTS = [Draft7Validator, Draft202012Validator]


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^%\\d+$", "%12", True),
        ("^%\\d+$", "%0\n", False),  # Python's $ matches before a final newline
        ("^%\\d+$", "%\u0663", False),  # an Arabic-Indic digit is a \d to Python only
        ("^\\w+$", "\u00e9t\u00e9", False),
        ("\\bx", "\u00e9x", True),  # é is no word character, so a boundary comes before x
        ("^.$", "\U0001f432", True),  # one code point, with the u flag
        ("^\\s$", "\ufeff", True),  # ECMA's \s has the BOM; Python's has not
        ("^\\s$", "\x1c", False),  # and Python's has the separators 0x1c-0x1f; ECMA's has not
        ("^.$", "\r", False),  # ECMA's . stops at every line terminator
        ("^a", "\ud800a", False),
        ("a$", "\ud800a", True),  # a lone surrogate is matched as U+FFFD, not an error
    ],
)
def test_patterns_follow_ecma_262(pattern: str, text: str, matches: bool) -> None:
    assert ecma_search(pattern, text) is matches


@pytest.mark.parametrize("dialect", DIALECTS)
def test_pattern_keyword_is_ecma(dialect: type[Validator]) -> None:
    validator = ecma_patterns(dialect)({"type": "object", "properties": {"paneId": PANE_ID}})
    assert validator.is_valid({"paneId": "%3"})
    [error] = validator.iter_errors({"paneId": "%0\n"})
    assert error.message == "'%0\\n' does not match '^%\\\\d+$'"
    assert list(error.absolute_path) == ["paneId"]
    assert not validator.is_valid({"paneId": "%\u0663"})
    assert ecma_patterns(dialect).__name__ == dialect.__name__


@pytest.mark.parametrize("dialect", DIALECTS)
def test_pattern_properties_and_what_they_leave_to_additional_properties(
    dialect: type[Validator],
) -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^x\\d$": {"type": "integer"}},
        "additionalProperties": False,
    }
    validator = ecma_patterns(dialect)(schema)
    assert validator.is_valid({"x1": 1})
    [error] = validator.iter_errors({"x1": "one"})
    assert list(error.absolute_path) == ["x1"]
    # "x1\n" is covered by the pattern for Python's re, so it would be checked as an
    # integer and let through; for ECMA-262 it is an additional property
    [error] = validator.iter_errors({"x1\n": 1})
    assert error.validator == "additionalProperties"
    assert "'x1\\n'" in error.message
    open_schema = {**schema, "additionalProperties": {"type": "string"}}
    assert not ecma_patterns(dialect)(open_schema).is_valid({"x\u0663": 1})
    assert ecma_patterns(dialect)(open_schema).is_valid({"x\u0663": "one"})


def test_fast_arrays_keep_ecma_patterns() -> None:
    schema = {"type": "array", "items": {"type": "string", "pattern": "^a$"}}
    validator = fast_arrays(ecma_patterns(Draft202012Validator))(schema)
    assert validator.is_valid(["a"])
    assert not validator.is_valid(["a\n"])


def served_patterns(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        if isinstance(schema.get("pattern"), str):
            yield schema["pattern"]
        yield from schema.get("patternProperties", {})
        for value in schema.values():
            yield from served_patterns(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from served_patterns(item)


def test_every_served_pattern_is_ecma_262() -> None:
    patterns = set(served_patterns(list(TOOL_DOCUMENTS.values())))
    assert "^%\\d+$" in patterns
    for pattern in patterns:
        ecma_regex(pattern)  # raises on anything that is not ECMA-262 with the u flag


def test_served_validators_are_the_ecma_ones() -> None:
    for binding in BINDINGS.values():
        for validator in (binding.input_validator, binding.output_validator):
            assert type(validator).VALIDATORS["pattern"].__module__ == "schemux.serving.validation"


pytestmark = pytest.mark.anyio


async def test_a_property_the_schema_allows_is_refused_all_the_same(
    memory_client: Client,
) -> None:
    """read_program's and run_program's schemas allow other properties; schemux refuses
    one the tool does not have (a cwd was ignored, and the program ran elsewhere)."""
    message = await call_error(memory_client, "read_program", programId="x", foo=1)
    assert message.startswith("Invalid arguments for read_program: 'foo': read_program has no")
    message = await call_error(memory_client, "run_program", argv=["echo", "hi"], foo=1)
    assert "'foo': run_program has no such argument" in message
    # a property named like a field's Python name is not that field: it is the one meant
    message = await call_error(memory_client, "run_program", argv=["echo", "hi"], max_lines=5)
    assert "'max_lines': run_program has no such argument; did you mean maxLines?" in message


@pytest.mark.parametrize("pane_id", ["%0\n", "%\u0663"])
async def test_an_id_python_would_take_is_refused_naming_the_field(
    memory_client: Client, pane_id: str
) -> None:
    message = await call_error(memory_client, "run_shell_command", command="true", paneId=pane_id)
    assert message.startswith("Invalid arguments for run_shell_command: paneId: ")
    assert "(rule: pattern)" in message


async def test_a_call_matching_no_form_hears_what_each_form_needs(memory_client: Client) -> None:
    """tmux_capture's arguments are one of two forms (a read, a cursor read)."""
    message = await call_error(memory_client, "tmux_capture", target=5)
    assert message == (
        "Invalid arguments for tmux_capture: (arguments): matches none of the 2 forms "
        "(rule: oneOf): form 1: target: 5 is not of type 'object' (rule: type); "
        "form 2: (arguments): 'cursor' is a required property (rule: required)"
    )
    message = await call_error(memory_client, "tmux_capture", cursor="a" * 32)
    assert "form 2: (arguments): 'target' is a required property (rule: required)" in message


def test_violation_names_the_field_and_rule() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
    }
    error = next(Draft202012Validator(schema).iter_errors({"a": [1, "2"]}))
    assert describe_violation(error) == "a[1]: '2' is not of type 'integer' (rule: type)"


@pytest.mark.parametrize(
    ("keywords", "value", "described"),
    [
        ({"exclusiveMinimum": 0}, 0,
         "0 is less than or equal to the minimum of 0; give more than 0"),
        ({"minimum": 0.01}, 0.001, "0.001 is less than the minimum of 0.01; give 0.01 or more"),
        ({"maximum": 5}, 6, "6 is greater than the maximum of 5; give 5 or less"),
        ({"exclusiveMaximum": 5}, 5,
         "5 is greater than or equal to the maximum of 5; give less than 5"),
        ({"minItems": 1}, [], "[] should be non-empty; give at least 1 item"),
        ({"maxItems": 2}, [1, 2, 3], "[1, 2, 3] is too long; give at most 2 items"),
    ],
)  # fmt: skip
def test_a_value_out_of_a_bound_is_told_what_to_give(
    keywords: dict[str, Any], value: Any, described: str
) -> None:
    schema = {"type": "object", "properties": {"a": keywords}}
    error = next(Draft202012Validator(schema).iter_errors({"a": value}))
    rule = next(iter(keywords))
    assert describe_violation(error) == f"a: {described} (rule: {rule})"


def test_arguments_a_not_refuses_are_told_by_its_description() -> None:
    refused = {"description": "a and b: give one of them", "required": ["a", "b"]}
    error = next(Draft202012Validator({"not": refused}).iter_errors({"a": 1, "b": "x" * 5000}))
    assert describe_violation(error) == "(arguments): a and b: give one of them (rule: not)"
    # without a description, jsonschema's own words, cut short
    bare = next(Draft202012Validator({"not": {"required": ["a"]}}).iter_errors({"a": 1}))
    assert describe_violation(bare).endswith(
        "should not be valid under {'required': ['a']} (rule: not)"
    )


def test_violation_of_forms_gives_each_form_its_reason() -> None:
    schema = {
        "oneOf": [
            {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"oneOf": [{"type": "string", "minLength": 2}]}}},
        ]
    }
    validator = Draft202012Validator(schema)
    error = next(validator.iter_errors({"a": "x", "b": "y"}))  # the oneOf error itself
    assert describe_violation(error) == (
        "(arguments): matches none of the 2 forms (rule: oneOf): "
        "form 1: a: 'x' is not of type 'integer' (rule: type); "
        "form 2: b: 'y' is too short (rule: minLength)"
    )
    both = next(validator.iter_errors({"a": 1, "b": "yy"}))
    text = describe_violation(both)  # matching two forms has no per-form reasons
    assert text.startswith("(arguments): {'a': 1, 'b': 'yy'} is valid under each of ")
    assert text.endswith("(rule: oneOf)")
