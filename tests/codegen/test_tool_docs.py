"""docs/tools.md: generated from the served documents and their examples."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.tool_docs import Argument, arguments_of, example_of, result_fields, type_text
from schemux.generated.bindings import BINDINGS
from tests.generated_data import SERVED_INPUT_SCHEMAS

CodegenCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({"type": "string"}, "string"),
        ({"type": ["string", "null"]}, "string or null"),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "integer or null"),
        ({"type": "array", "items": {"type": "string"}}, "array of string"),
        ({"enum": ["a", "b|c"]}, '"a" or "b|c"'),
        ({"const": "pane"}, '"pane"'),
        ({"oneOf": [{"const": True}, {"const": False}, {"const": True}]}, "true or false"),
        ({}, "any"),
    ],
)
def test_type_text(schema: dict[str, object], text: str) -> None:
    assert type_text(schema) == text


def test_arguments_required_first_with_the_fields_of_an_object() -> None:
    schema = {
        "type": "object",
        "required": ["target"],
        "properties": {
            "a_flag": {"type": "boolean", "default": False, "description": "flag"},
            "target": {
                "type": "object",
                "required": ["id"],
                "properties": {"id": {"type": "string"}, "kind": {"const": "pane"}},
            },
        },
    }
    assert arguments_of(schema) == [
        Argument("target", "object", True, "", ""),
        Argument("target.id", "string", True, "", ""),
        Argument("target.kind", '"pane"', False, "", ""),
        Argument("a_flag", "boolean", False, "false", "flag"),
    ]


def test_result_fields_merge_the_forms_of_a_one_of() -> None:
    schema = {
        "oneOf": [
            {"properties": {"ok": {"const": True}, "rows": {"type": "array", "items": {
                "type": "object", "properties": {"text": {"type": "string"}}}}}},
            {"properties": {"ok": {"const": False, "description": "failed"}}},
        ]
    }  # fmt: skip
    fields = [(field.path, field.type, field.description) for field in result_fields(schema)]
    assert fields == [
        ("ok", "true or false", "failed"),
        ("rows", "array of object", ""),
        ("rows[].text", "string", ""),
    ]


def test_the_example_is_the_first_that_succeeds() -> None:
    examples = {
        "examples": [
            {"name": "refused", "arguments": {}, "error": "required"},
            {"name": "works", "arguments": {"x": 1}, "result": {"y": 2}},
        ]
    }
    example = example_of(examples)
    assert example is not None
    assert (example.name, example.outcome) == ("works", "result")
    assert json.loads(example.arguments) == {"x": 1}
    assert example_of({"examples": []}) is None


def test_the_document_covers_every_served_tool_and_argument(repo_root: Path) -> None:
    text = (repo_root / "docs" / "tools.md").read_text("utf-8")
    for name in BINDINGS:
        section = text.split(f"\n## {name}\n")[1].split("\n## ")[0]
        for argument in SERVED_INPUT_SCHEMAS[name].get("properties", {}):
            assert f"| `{argument}` |" in section, (name, argument)
        assert "### Results" in section
        assert "### Example: " in section
        assert "```json" in section


def test_check_fails_on_a_stale_document(repo: Path, codegen_cli: CodegenCli) -> None:
    doc = repo / "docs" / "tools.md"
    doc.write_text(doc.read_text("utf-8").replace("## run_command", "## run"), "utf-8")
    checked = codegen_cli(repo, "--check")
    assert checked.returncode == 1
    assert "would change: docs/tools.md" in checked.stderr.splitlines()
    assert codegen_cli(repo).returncode == 0
    assert "\n## run_command\n" in doc.read_text("utf-8")
