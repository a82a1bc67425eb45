"""Checks every tool document must pass, imported or authored."""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from typing import Any

from jsonschema.exceptions import SchemaError

from codegen.dialects import UnknownDialectError, validator_class

WRAP_RESULT = "x-fastmcp-wrap-result"


def document_problems(document: Mapping[str, Any]) -> list[str]:
    """What is wrong with a tool document; empty when it is usable."""
    problems = []
    name = document.get("name")
    if not isinstance(name, str) or not _is_module_name(name):
        # The name becomes a module: generated/models/<name>.py, handlers/<name>.py.
        problems.append(f"tool name {name!r} is not a lower-case Python identifier")
    for key, label in (("inputSchema", "input schema"), ("outputSchema", "output schema")):
        problems.extend(f"{label}: {problem}" for problem in _schema_problems(document.get(key)))
    return problems


def _is_module_name(name: str) -> bool:
    return name.isidentifier() and name.islower() and not keyword.iskeyword(name)


def _schema_problems(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return ["missing or not a JSON object"]
    try:
        validator_class(schema).check_schema(schema)
    except UnknownDialectError as error:
        return [str(error)]
    except SchemaError as error:
        location = "/".join(str(part) for part in error.path) or "(root)"
        return [f"not valid JSON Schema at {location}: {error.message}"]
    if schema.get("type") != "object":
        # MCP requires it; mcp clients of the 2025-11-25 era reject tools/list otherwise.
        return ['root lacks "type": "object"']
    if WRAP_RESULT in schema and not wraps_result(schema):
        return [
            f"{WRAP_RESULT} needs exactly one property, 'result', required "
            "(FastMCP's wrapped value)"
        ]
    return []


def wraps_result(schema: Mapping[str, Any]) -> bool:
    """Whether an outputSchema follows FastMCP's ``x-fastmcp-wrap-result`` convention: the
    tool's value (a string, a list, ...) travels as ``structuredContent`` ``{"result":
    value}`` and, as FastMCP sends it, as the value itself in the text content."""
    properties = schema.get("properties")
    return (
        schema.get(WRAP_RESULT) is True
        and isinstance(properties, dict)
        and list(properties) == ["result"]
        and schema.get("required") == ["result"]
    )
