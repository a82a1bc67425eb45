"""Reading one upstream contract file, whatever its format, into :class:`UpstreamTool`.

Two formats arrive, told apart by their content (file names carry no meaning):

- a JSON tool descriptor: one JSON object with ``name``, ``source``, ``description``,
  ``inputSchema``, ``outputSchema``, ``annotations`` and ``meta``; a descriptor taken
  from a ``tools/list`` where the tool declared no output schema has no
  ``outputSchema`` (its result is a model that schemux authors one from);
- a documentation page saved as text: prose about the tool, then, under
  ``Protocol data``, the labels ``Input schema`` and ``Output schema`` each directly
  followed by the JSON of that schema.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

JSON_DESCRIPTOR = "json-descriptor"
DOCUMENTATION_PAGE = "documentation-page"

_PROTOCOL_DATA = "Protocol data"
_TOOL_NAME_SENTENCE = re.compile(r"tools/callSend(?P<name>.+?)as the tool name")
_REQUEST_METHOD_LINE = "- MCP request method"
_ANNOTATIONS_HEADING = "Annotations#"
_ANNOTATIONS_LINE = re.compile(r"(?:[A-Za-z]+?(?:true|false))+")
_ANNOTATION = re.compile(r"(?P<hint>[A-Za-z]+?)(?P<value>true|false)")


class UpstreamFormatError(ValueError):
    """The file's content is not a usable upstream contract; the message says why."""


@dataclass(frozen=True)
class UpstreamTool:
    """What one upstream file says about its tool, before any validation of the schemas."""

    name: str
    title: str | None
    description: str
    input_schema: Any
    output_schema: Any  # None: the descriptor declares none
    annotations: dict[str, Any] | None
    format: str
    # Where the contract comes from, in the normalized provenance's own key names.
    origin: dict[str, Any]
    meta: dict[str, Any] | None


def detect_format(text: str) -> str:
    """The format of an upstream file, judged from its content."""
    if text.lstrip().startswith("{"):
        return JSON_DESCRIPTOR
    if _PROTOCOL_DATA in text:
        return DOCUMENTATION_PAGE
    raise UpstreamFormatError(
        "unrecognised format: neither a JSON tool descriptor (a JSON object) nor a "
        f"documentation page with {_PROTOCOL_DATA!r}"
    )


def parse_upstream(text: str) -> UpstreamTool:
    """Parse an upstream file of either format."""
    if detect_format(text) == JSON_DESCRIPTOR:
        return _parse_descriptor(text)
    return _parse_page(text)


def _parse_descriptor(text: str) -> UpstreamTool:
    try:
        descriptor = json.loads(text)
    except json.JSONDecodeError as error:
        raise UpstreamFormatError(_describe_json_error("JSON tool descriptor", error)) from None
    if not isinstance(descriptor, dict):
        raise UpstreamFormatError("JSON tool descriptor: not a JSON object")
    for key in ("name", "description"):
        if not isinstance(descriptor.get(key), str):
            raise UpstreamFormatError(f"JSON tool descriptor: {key!r} missing or not a string")
    if "inputSchema" not in descriptor:
        raise UpstreamFormatError("JSON tool descriptor: no 'inputSchema'")
    name = descriptor["name"]
    wire_name = descriptor.get("wireName", name)
    if wire_name != name:
        # The tool is called by one name only; guessing which one upstream meant is unsafe.
        raise UpstreamFormatError(
            f"JSON tool descriptor: name {name!r} and wireName {wire_name!r} differ"
        )
    meta = _optional_object(descriptor, "meta")
    return UpstreamTool(
        name=name,
        title=_descriptor_title(descriptor, meta),
        description=descriptor["description"],
        input_schema=descriptor["inputSchema"],
        output_schema=descriptor.get("outputSchema"),
        annotations=_optional_object(descriptor, "annotations"),
        format=JSON_DESCRIPTOR,
        origin=_descriptor_origin(_optional_object(descriptor, "source") or {}),
        meta=meta,
    )


def _optional_object(descriptor: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = descriptor.get(key)
    if value is not None and not isinstance(value, dict):
        raise UpstreamFormatError(f"JSON tool descriptor: {key!r} is not a JSON object")
    return value


def _descriptor_title(descriptor: dict[str, Any], meta: dict[str, Any] | None) -> str | None:
    """A top-level ``title``, else the first one a meta block (e.g. a capability) gives."""
    if isinstance(descriptor.get("title"), str):
        return str(descriptor["title"])
    for block in (meta or {}).values():
        if isinstance(block, dict) and isinstance(block.get("title"), str):
            return str(block["title"])
    return None


def _descriptor_origin(source: dict[str, Any]) -> dict[str, Any]:
    renamed = {"repo": "repository", "revision": "revision", "file": "sourceFile"}
    origin = {ours: source[theirs] for theirs, ours in renamed.items() if theirs in source}
    if "line" in source:
        origin["sourceLine"] = source["line"]
    return origin


def _parse_page(text: str) -> UpstreamTool:
    name_sentence = _TOOL_NAME_SENTENCE.search(text)
    if name_sentence is None:
        raise UpstreamFormatError(
            "documentation page: no 'tools/callSend<name>as the tool name' sentence"
        )
    name = name_sentence.group("name")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if name not in lines:
        raise UpstreamFormatError(f"documentation page: no line naming the tool {name!r}")
    name_index = lines.index(name)
    product = "\n".join(lines[:name_index]).strip()
    origin = {"product": product} if product else {}
    input_schema, output_schema = _page_schemas(text)
    return UpstreamTool(
        name=name,
        title=None,
        description=_page_description(lines, name_index),
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=_page_annotations(lines),
        format=DOCUMENTATION_PAGE,
        origin=origin,
        meta=None,
    )


def _page_description(lines: list[str], name_index: int) -> str:
    """The paragraph between the ``-`` line under the name and ``- MCP request method``."""
    if lines[name_index + 1 : name_index + 2] != ["-"]:
        raise UpstreamFormatError("documentation page: no '-' line after the tool name")
    start = name_index + 2
    for end in range(start, len(lines)):
        if lines[end].startswith(_REQUEST_METHOD_LINE):
            return "\n".join(lines[start:end])
    raise UpstreamFormatError(f"documentation page: no {_REQUEST_METHOD_LINE!r} line")


def _page_annotations(lines: list[str]) -> dict[str, Any] | None:
    """``destructiveHintfalseidempotentHintfalse...`` under ``Annotations#`` as booleans."""
    if _ANNOTATIONS_HEADING not in lines:
        return None
    following = lines[lines.index(_ANNOTATIONS_HEADING) + 1 :]
    line = following[0].strip() if following else ""
    if not _ANNOTATIONS_LINE.fullmatch(line):
        raise UpstreamFormatError(f"documentation page: unreadable annotations line {line!r}")
    return {m["hint"]: m["value"] == "true" for m in _ANNOTATION.finditer(line)}


def _page_schemas(text: str) -> tuple[Any, Any]:
    start = text.index(_PROTOCOL_DATA)
    input_schema, end = _json_after_label(text, "Input schema", start)
    output_schema, _ = _json_after_label(text, "Output schema", end)
    return input_schema, output_schema


def _json_after_label(text: str, label: str, start: int) -> tuple[Any, int]:
    """Decode the JSON value that directly follows ``label`` (pages glue them together)."""
    label_at = text.find(label, start)
    if label_at == -1:
        raise UpstreamFormatError(f"documentation page: no {label!r} under {_PROTOCOL_DATA!r}")
    after_label = label_at + len(label)
    brace = text.find("{", after_label)
    if brace == -1 or text[after_label:brace].strip():
        raise UpstreamFormatError(f"documentation page: no JSON object after {label!r}")
    try:
        return json.JSONDecoder().raw_decode(text, brace)
    except json.JSONDecodeError as error:
        raise UpstreamFormatError(_describe_json_error(label, error)) from None


def _describe_json_error(what: str, error: json.JSONDecodeError) -> str:
    # The decoder stops at the end of a cut-off text, or names the string that runs to it.
    if error.pos >= len(error.doc.rstrip()) or error.msg.startswith("Unterminated string"):
        return f"{what}: truncated JSON (the text ends before the value is complete)"
    return f"{what}: invalid JSON: {error.msg} at line {error.lineno} column {error.colno}"
