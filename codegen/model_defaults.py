"""Defaults that a contract states in words only, given to its models (never served).

An upstream contract may say "omitted is 30 seconds" in a description and carry no
``default`` keyword; its schema cannot change (served documents stay as received), so
``schemas/model_defaults.json`` gives such a default to the generated model, and the
handler reads it from the request like any other. Each entry names the property by a
JSON pointer into the tool's inputSchema, the value, and the contract's own words for
it, which must appear in that property's description or the tool's. An entry is
refused when the words are not there, when the property already has a ``default``,
or when the value breaks the property's schema; the entries of a tool that is no
longer there (its upstream file removed) give nothing.

    {"read_program": {"/properties/timeoutMs": {"default": 30000,
                                                "contract": "omitted is 30 seconds"}}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codegen.dialects import validator_class

MODEL_DEFAULTS = Path("schemas/model_defaults.json")


def model_defaults(
    root: Path, documents: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Tool name -> {pointer: default}, and the problems found (empty when all hold)."""
    path = root / MODEL_DEFAULTS
    if not path.is_file():
        return {}, []
    entries = json.loads(path.read_text(encoding="utf-8"))
    defaults: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for tool, pointers in sorted(entries.items()):
        document = documents.get(tool)
        if document is None:
            continue  # a tool no longer imported: nothing to give defaults to
        schema = document["inputSchema"]
        for pointer, entry in sorted(pointers.items()):
            where = f"{MODEL_DEFAULTS}: {tool} {pointer}"
            target = resolve(schema, pointer)
            if target is None:
                problems.append(f"{where}: no such subschema of the inputSchema")
                continue
            said = f"{target.get('description', '')}\n{document.get('description', '')}"
            if entry["contract"] not in said:
                problems.append(f"{where}: the contract does not say {entry['contract']!r}")
            elif "default" in target:
                problems.append(f"{where}: the contract has a default of its own")
            elif not validator_class(schema)(target).is_valid(entry["default"]):
                problems.append(f"{where}: {entry['default']!r} breaks the property's schema")
            else:
                defaults.setdefault(tool, {})[pointer] = entry["default"]
    return defaults, problems


def resolve(schema: Any, pointer: str) -> dict[str, Any] | None:
    """The subschema at a JSON pointer (``/oneOf/0/properties/max_lines``), or None."""
    found = schema
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(found, list) and token.isdigit() and int(token) < len(found):
            found = found[int(token)]
        elif isinstance(found, dict) and token in found:
            found = found[token]
        else:
            return None
    return found if isinstance(found, dict) else None
