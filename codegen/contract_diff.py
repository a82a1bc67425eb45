"""What changed between two versions of the tool contracts, and whether it breaks clients.

A pure function of the documents. The rule behind every verdict:

- input (client -> server): a change is BREAKING when the new schema rejects arguments
  the old one accepted (a new required input, an input that became required or was
  removed, a changed type other than a widening, a new enum restriction, a removed enum
  value or variant, a tighter bound); a widening is compatible.
- output (server -> client): a change is BREAKING when clients may no longer get what
  they relied on, or get what they did not expect: a removed field, a field no longer
  required, any changed type, enum values or variants added or removed, a looser bound.
  A new field, a field that became required, a tighter bound are compatible.
- documentation (descriptions, titles, defaults, annotations) is compatible. A keyword
  this module does not analyse is reported as BREAKING, to be looked at by a person.

Nested objects, array items and ``anyOf``/``oneOf``/``allOf`` variants (matched by
position) are walked. ``anyOf: [X, {"type": "null"}]`` is read as X that may be null.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Direction(Enum):
    INPUT = "input"
    OUTPUT = "output"


@dataclass(frozen=True)
class Change:
    tool: str
    where: str
    what: str
    breaking: bool


_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_OTHER_CONSTRAINTS = ("pattern", "format", "multipleOf", "uniqueItems")
_DOCUMENTATION = ("description", "title", "default", "examples", "$comment")
_VARIANTS = ("anyOf", "oneOf", "allOf")
_ANALYSED = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "items",
        "additionalProperties",
        *_LOWER_BOUNDS,
        *_UPPER_BOUNDS,
        *_OTHER_CONSTRAINTS,
        *_DOCUMENTATION,
        *_VARIANTS,
    }
)
_TOOL_DOCUMENTATION = ("title", "description")

_Schema = dict[str, Any]


def diff_tools(
    old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]
) -> list[Change]:
    """Changes from the ``old`` to the ``new`` tool documents, both keyed by tool name."""
    changes: list[Change] = []
    for name in sorted(old.keys() | new.keys()):
        changes.extend(diff_tool(name, old.get(name), new.get(name)))
    return changes


def diff_tool(
    name: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> list[Change]:
    """Changes to one tool; ``None`` stands for a tool that does not exist on that side."""
    if old is None and new is None:
        return []
    if old is None:
        return [Change(name, "tool", "new tool", breaking=False)]
    if new is None:
        return [Change(name, "tool", "tool removed", breaking=True)]
    changes = [
        Change(name, f"tool.{key}", f"{key} changed", breaking=False)
        for key in _TOOL_DOCUMENTATION
        if old.get(key) != new.get(key)
    ]
    old_hints, new_hints = old.get("annotations") or {}, new.get("annotations") or {}
    changes.extend(
        Change(
            name,
            f"tool.annotations.{hint}",
            f"{_show(old_hints.get(hint))} -> {_show(new_hints.get(hint))}",
            breaking=False,
        )
        for hint in sorted(old_hints.keys() | new_hints.keys())
        if old_hints.get(hint) != new_hints.get(hint)
    )
    walk = _SchemaWalk(name, changes)
    walk.compare(old.get("inputSchema", {}), new.get("inputSchema", {}), "input", Direction.INPUT)
    walk.compare(
        old.get("outputSchema", {}), new.get("outputSchema", {}), "output", Direction.OUTPUT
    )
    return changes


def format_report(changes: list[Change]) -> str:
    """A plain-text report grouped by tool (as ``diff_tools`` orders them); empty if none."""
    if not changes:
        return ""
    lines = ["Contract changes:"]
    tool = None
    for change in changes:
        if change.tool != tool:
            tool = change.tool
            lines.append(f"  {tool}")
        verdict = "BREAKING  " if change.breaking else "compatible"
        lines.append(f"    {verdict}  {change.where}: {change.what}")
    return "\n".join(lines) + "\n"


@dataclass
class _SchemaWalk:
    tool: str
    changes: list[Change]

    def report(self, where: str, what: str, breaking: bool) -> None:
        self.changes.append(Change(self.tool, where, what, breaking))

    def compare(self, old: Any, new: Any, where: str, direction: Direction) -> None:
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                self.report(where, f"schema {_show(old)} -> {_show(new)}", breaking=True)
            return
        old, new = _unwrap_nullable(old), _unwrap_nullable(new)
        self._types(old, new, where, direction)
        self._values(old, new, where, direction)
        self._constraints(old, new, where, direction)
        for key in _DOCUMENTATION:
            if old.get(key) != new.get(key):
                self.report(where, f"{key} changed", breaking=False)
        for key in sorted((old.keys() | new.keys()) - _ANALYSED):
            if old.get(key) != new.get(key):
                self.report(where, f"{key} changed (not analysed)", breaking=True)
        self._properties(old, new, where, direction)
        if isinstance(old.get("items"), dict) or isinstance(new.get("items"), dict):
            self.compare(old.get("items", {}), new.get("items", {}), f"{where}[]", direction)
        for key in _VARIANTS:
            self._variants(key, old.get(key) or [], new.get(key) or [], where, direction)

    def _types(self, old: _Schema, new: _Schema, where: str, d: Direction) -> None:
        old_types, new_types = _types(old), _types(new)
        if old_types == new_types:
            return
        widened = d is Direction.INPUT and _covers(new_types, old_types)
        what = f"type {'widened' if widened else 'changed'}"
        self.report(
            where, f"{what}: {_show_types(old_types)} -> {_show_types(new_types)}", not widened
        )

    def _values(self, old: _Schema, new: _Schema, where: str, d: Direction) -> None:
        old_values, new_values = _allowed_values(old), _allowed_values(new)
        if old_values == new_values:
            return
        if old_values is None and new_values is not None:
            self.report(where, f"now restricted to {_show_set(new_values)}", d is Direction.INPUT)
        elif new_values is None and old_values is not None:
            self.report(
                where, f"no longer restricted to {_show_set(old_values)}", d is Direction.OUTPUT
            )
        elif old_values is not None and new_values is not None:
            if added := new_values - old_values:
                self.report(where, f"new values {_show_set(added)}", d is Direction.OUTPUT)
            if removed := old_values - new_values:
                self.report(where, f"values removed {_show_set(removed)}", breaking=True)

    def _constraints(self, old: _Schema, new: _Schema, where: str, d: Direction) -> None:
        for key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS, *_OTHER_CONSTRAINTS):
            before, after = old.get(key), new.get(key)
            if before == after:
                continue
            tightens, loosens = _tightens_loosens(key, before, after)
            breaking = tightens if d is Direction.INPUT else loosens
            self.report(where, f"{key} {_show(before)} -> {_show(after)}", breaking)
        closed_before = old.get("additionalProperties") is False
        closed_after = new.get("additionalProperties") is False
        if closed_before != closed_after:
            what = "no other properties allowed" if closed_after else "other properties allowed"
            breaking = closed_after if d is Direction.INPUT else closed_before
            self.report(where, what, breaking)
        elif isinstance(old.get("additionalProperties"), dict) or isinstance(
            new.get("additionalProperties"), dict
        ):
            self.compare(
                old.get("additionalProperties", {}),
                new.get("additionalProperties", {}),
                f"{where}{{*}}",
                d,
            )

    def _properties(self, old: _Schema, new: _Schema, where: str, d: Direction) -> None:
        old_properties, new_properties = old.get("properties") or {}, new.get("properties") or {}
        old_required, new_required = set(old.get("required") or ()), set(new.get("required") or ())
        for name in sorted(old_properties.keys() | new_properties.keys()):
            at = f"{where}.{name}"
            if name not in old_properties:
                if d is Direction.OUTPUT:
                    self.report(at, "new output field", breaking=False)
                elif name in new_required:
                    self.report(at, "new required input", breaking=True)
                else:
                    self.report(at, "new optional input", breaking=False)
            elif name not in new_properties:
                self.report(at, f"{d.value} field removed", breaking=True)
            else:
                was, now = name in old_required, name in new_required
                if was != now:
                    what = "now required" if now else "no longer required"
                    self.report(at, what, breaking=now if d is Direction.INPUT else was)
                self.compare(old_properties[name], new_properties[name], at, d)

    def _variants(self, key: str, old: list[Any], new: list[Any], where: str, d: Direction) -> None:
        for index in range(max(len(old), len(new))):
            at = f"{where}.{key}[{index}]"
            if index < len(old) and index < len(new):
                self.compare(old[index], new[index], at, d)
                continue
            added = index >= len(old)
            if key == "allOf":
                # One more allOf part narrows the schema; one fewer widens it.
                breaking = added if d is Direction.INPUT else not added
            else:
                # An anyOf/oneOf variant more widens an input, which is fine; output
                # variants are like enum values: clients branch on them either way.
                breaking = not added if d is Direction.INPUT else True
            self.report(at, "variant added" if added else "variant removed", breaking)


def _unwrap_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``anyOf``/``oneOf`` of X and ``{"type": "null"}`` as X with ``null`` in its types."""
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if not isinstance(branches, list) or len(branches) != 2 or {"type": "null"} not in branches:
            continue
        other = branches[1 - branches.index({"type": "null"})]
        types = _types(other) if isinstance(other, dict) else None
        if types is None:
            continue
        merged = {k: v for k, v in schema.items() if k != key}
        merged.update(other)
        merged["type"] = sorted(types | {"null"})
        return merged
    return schema


def _types(schema: dict[str, Any]) -> frozenset[str] | None:
    declared = schema.get("type")
    if declared is None:
        return None
    return frozenset([declared] if isinstance(declared, str) else declared)


def _covers(new: frozenset[str] | None, old: frozenset[str] | None) -> bool:
    """Whether every value of the ``old`` types is also one of the ``new`` types."""
    if new is None:
        return True
    if old is None:
        return False
    return all(t in new or (t == "integer" and "number" in new) for t in old)


def _allowed_values(schema: dict[str, Any]) -> frozenset[str] | None:
    """``enum``/``const`` values as canonical JSON text (so 1 and true stay distinct)."""
    if "const" in schema:
        return frozenset({_canonical(schema["const"])})
    if isinstance(schema.get("enum"), list):
        return frozenset(_canonical(value) for value in schema["enum"])
    return None


def _tightens_loosens(key: str, before: Any, after: Any) -> tuple[bool, bool]:
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (before, after))
    if key in _LOWER_BOUNDS and numeric:
        return after > before, after < before
    if key in _UPPER_BOUNDS and numeric:
        return after < before, after > before
    # Added, removed, or a non-numeric change (a new pattern both admits and refuses).
    return after is not None, before is not None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _show(value: Any) -> str:
    return "(none)" if value is None else _canonical(value)


def _show_types(types: frozenset[str] | None) -> str:
    return "any" if types is None else "|".join(sorted(types))


def _show_set(values: frozenset[str]) -> str:
    return ", ".join(sorted(values))
