"""Checks every tool document must pass, imported or authored."""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from typing import Any

from jsonschema.exceptions import SchemaError

from codegen.dialects import UnknownDialectError, validator_class


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
    return []
