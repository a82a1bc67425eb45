"""The OpenAI strict projection (``--schemas openai-strict``): an inputSchema that OpenAI's
strict mode takes as it is, for clients that send tools with ``strict: true``.

From the contract's inputSchema (as the overlay describes it):

- a root ``oneOf``/``anyOf``/``allOf`` of object forms becomes one object, as in the
  default projection (``codegen.projection``); ``$ref`` is inlined;
- every object lists every property in ``required`` and says
  ``additionalProperties: false``; a property the contract leaves optional accepts
  ``null`` too, and the server takes ``null`` there as "absent" before it validates the
  call (:func:`null_means_absent` lists where);
- ``default``, numeric and length bounds, ``pattern``, ``format`` and the keywords strict
  mode does not know are dropped, a bound said in the description; ``oneOf`` is served as
  ``anyOf``.

The exact contract still validates every call, so nothing dropped here is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codegen.projection import merged_root, resolved

# Keywords strict mode keeps; every other one is dropped (the exact contract enforces it).
_KEPT = frozenset({"type", "properties", "required", "items", "enum", "anyOf", "description"})
_BOUNDS = {
    "minimum": "at least {}",
    "exclusiveMinimum": "greater than {}",
    "maximum": "at most {}",
    "exclusiveMaximum": "less than {}",
    "minLength": "length at least {}",
    "maxLength": "length at most {}",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
}

_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number"}


@dataclass(frozen=True)
class StrictProjection:
    schema: dict[str, Any]
    # The paths of the optional properties made nullable: "a.b" for a nested property,
    # "a[].b" for one in an array's items. The server drops a null there before validating.
    nullable: tuple[str, ...]


@dataclass
class _Strict:
    definitions: dict[str, Any]
    nullable: list[str] = field(default_factory=list)

    def schema(self, schema: Any, path: str) -> Any:
        if not isinstance(schema, Mapping):
            return schema
        schema = resolved(schema, self.definitions)
        if "$ref" in schema:
            schema = {key: value for key, value in schema.items() if key != "$ref"}
        out: dict[str, Any] = {}
        said = []
        for key, value in schema.items():
            if key in _BOUNDS and isinstance(value, int | float):
                said.append(_BOUNDS[key].format(value))
            elif key == "pattern":
                said.append(f"matching {value}")
            elif key == "const":
                out.setdefault("type", _JSON_TYPES.get(type(value), "string"))
                out["enum"] = [value]
            elif key in ("oneOf", "anyOf") and len(value) == 1:
                out.update(self.schema(value[0], path))
            elif key in ("oneOf", "anyOf"):
                out["anyOf"] = [self.schema(item, path) for item in value]
            elif key == "items":
                out["items"] = self.schema(value, f"{path}[]")
            elif key == "properties":
                out["properties"] = {
                    name: self.schema(item, f"{path}.{name}" if path else name)
                    for name, item in value.items()
                }
            elif key in _KEPT:
                out[key] = value
        if said:
            bounds = f"({', '.join(said)})"
            out["description"] = " ".join(filter(None, [out.get("description"), bounds]))
        if "properties" in out:
            self._close(out, path)
        return out

    def _close(self, out: dict[str, Any], path: str) -> None:
        required = set(out.get("required") or ())
        for name, schema in out["properties"].items():
            if name not in required and not _accepts_null(schema):
                # null where the contract refuses it can only mean "absent"
                out["properties"][name] = _nullable(schema)
                self.nullable.append(f"{path}.{name}" if path else name)
        out["type"] = "object"
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts null."""
    kind = schema.get("type")
    # an object with null joins an anyOf, the union OpenAI's pages show for it
    if "anyOf" in schema or kind is None or "properties" in schema:
        rest = {key: value for key, value in schema.items() if key != "description"}
        nullable = {"anyOf": [rest, {"type": "null"}]}
        if "description" in schema:
            nullable["description"] = schema["description"]
        return nullable
    out = dict(schema)
    out["type"] = [*kind, "null"] if isinstance(kind, list) else [kind, "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def _accepts_null(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return "enum" not in schema or None in schema["enum"]
    return any(_accepts_null(form) for form in schema.get("anyOf", ()))


def strict_projection(input_schema: Mapping[str, Any]) -> StrictProjection:
    """The strict projection of a contract's inputSchema."""
    root, definitions = merged_root(input_schema)
    strict = _Strict(definitions)
    schema = strict.schema(root, "")
    if "properties" not in schema:  # a tool without arguments is an object without any
        schema = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    return StrictProjection(schema=schema, nullable=tuple(strict.nullable))
