"""The subschemas of a JSON Schema (2020-12 applicators, draft-07's ``definitions``):
one list of keywords, so every walk in codegen reaches the same places."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# keywords whose value maps names to subschemas
SUBSCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
# keywords whose value is one subschema
SUBSCHEMAS = (
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
)
# keywords whose value is a list of subschemas
SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
# keywords whose subschemas validate an object's property values: a level of nesting
PROPERTY_VALUES = ("properties", "patternProperties", "additionalProperties")


def child_schemas(schema: Mapping[str, Any]) -> Iterator[tuple[str, str | int | None, Any]]:
    """Each direct subschema of ``schema`` (a mapping; ``true``/``false`` are skipped) as
    (keyword, name or index within it or None, subschema): maps first, then the single
    ones, then the lists."""
    for keyword in SUBSCHEMA_MAPS:
        children = schema.get(keyword)
        if isinstance(children, Mapping):
            for name, child in children.items():
                if isinstance(child, Mapping):
                    yield keyword, name, child
    for keyword in SUBSCHEMAS:
        child = schema.get(keyword)
        if isinstance(child, Mapping):
            yield keyword, None, child
    for keyword in SUBSCHEMA_LISTS:
        children = schema.get(keyword)
        if isinstance(children, list):
            for index, child in enumerate(children):
                if isinstance(child, Mapping):
                    yield keyword, index, child
