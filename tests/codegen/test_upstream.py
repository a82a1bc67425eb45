"""Reading the two upstream formats: detection from content, pages, descriptors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.upstream import (
    DOCUMENTATION_PAGE,
    JSON_DESCRIPTOR,
    UpstreamFormatError,
    detect_format,
    parse_upstream,
)

UPSTREAM = Path(__file__).resolve().parents[2] / "schemas" / "upstream"


def upstream_text(prefix: str) -> str:
    (path,) = UPSTREAM.glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("prefix", "name", "expected_format"),
    [
        ("000", "read_program", JSON_DESCRIPTOR),
        ("001", "run_command", JSON_DESCRIPTOR),
        ("002", "tmux_capture", DOCUMENTATION_PAGE),
        ("003", "run_program", DOCUMENTATION_PAGE),
    ],
)
def test_each_file_is_read_in_the_format_of_its_content(
    prefix: str, name: str, expected_format: str
) -> None:
    tool = parse_upstream(upstream_text(prefix))

    assert (detect_format(upstream_text(prefix)), tool.format) == (expected_format,) * 2
    assert tool.name == name
    assert tool.input_schema["type"] == tool.output_schema["type"] == "object"


def test_text_of_neither_format_is_refused() -> None:
    with pytest.raises(UpstreamFormatError, match="unrecognised format"):
        parse_upstream("run_program\n-\nA page that lost its protocol data.\n")


def test_descriptor_keeps_schemas_meta_and_source() -> None:
    text = upstream_text("000")
    descriptor = json.loads(text)

    tool = parse_upstream(text)

    assert tool.title == "Read a started program"
    assert json.dumps(tool.input_schema) == json.dumps(descriptor["inputSchema"])
    assert json.dumps(tool.output_schema) == json.dumps(descriptor["outputSchema"])
    assert tool.meta == descriptor["meta"]
    assert tool.origin == {
        "repository": "libtmux/libtmux-ts",
        "revision": "f7b03a361f7c97677406b4ab937b2772ddb5f7dd",
        "sourceFile": "packages/mcp/src/tools/programs.ts",
        "sourceLine": 378,
    }


def test_descriptor_without_a_title_has_none() -> None:
    assert parse_upstream(upstream_text("001")).title is None


def test_descriptor_whose_wire_name_differs_is_refused() -> None:
    descriptor = json.loads(upstream_text("001"))
    descriptor["wireName"] = "runCommand"

    with pytest.raises(UpstreamFormatError, match="'run_command' and wireName 'runCommand'"):
        parse_upstream(json.dumps(descriptor))


def test_page_with_product_line() -> None:
    tool = parse_upstream(upstream_text("002"))

    assert tool.origin == {"product": "toolMCPv0.1.0.alpha.2"}
    assert tool.description.startswith("Read exact-pane screen/history rows preserving LF.")
    assert tool.description.endswith("Refuses capture after-hooks.")
    assert tool.annotations == {
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
        "readOnlyHint": False,
    }
    # Both schemas are decoded whole, top-level oneOf and key order as written.
    assert list(tool.input_schema) == ["$schema", "oneOf", "type"]
    assert list(tool.output_schema) == ["$schema", "oneOf", "type"]
    assert tool.title is None
    assert tool.meta is None


def test_page_starting_with_the_name() -> None:
    text = upstream_text("003")
    description_line = text.split("\n")[2]

    tool = parse_upstream(text)

    assert tool.origin == {}
    assert tool.description == description_line  # as on the page, curly quotes and all
    assert "user\N{RIGHT SINGLE QUOTATION MARK}s permissions" in tool.description
    assert tool.annotations == {
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
        "readOnlyHint": False,
    }
    assert tool.input_schema["required"] == ["argv"]
    assert tool.output_schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        (lambda text: text[: text.index("Output schema")], "no 'Output schema'"),
        (lambda text: text[: text.index("Input schema")], "no 'Input schema'"),
        (lambda text: text[: len(text) - 40], "Output schema: truncated JSON"),
        (lambda text: text.replace("- MCP request method", "- method"), "'- MCP request method'"),
        (
            lambda text: text.replace("openWorldHinttrue", "openWorldHint=yes"),
            "unreadable annotations line",
        ),
    ],
    ids=["no output schema", "no input schema", "truncated", "no method line", "annotations"],
)
def test_broken_page_is_refused_with_the_reason(cut: Callable[[str], str], message: str) -> None:
    with pytest.raises(UpstreamFormatError, match=message):
        parse_upstream(cut(upstream_text("003")))


def test_truncated_descriptor_is_named_as_such() -> None:
    text = upstream_text("001")

    with pytest.raises(UpstreamFormatError, match="truncated JSON"):
        parse_upstream(text[: len(text) // 2])
