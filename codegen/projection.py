"""Projections: the inputSchema schemux serves where the exact one breaks a provider rule.

A contract stays the authority: the exact inputSchema validates every call before any
tmux work, so a projection may only loosen what it states, never the behaviour. What it
does, each step noted for the report:

- a root ``oneOf``/``anyOf`` of object forms becomes one object: every form's
  properties (one property's differing schemas joined in an ``anyOf``), the ``required``
  that all forms share, and descriptions that say which combinations are allowed;
  a root ``allOf`` merges its parts;
- ``$ref`` into ``$defs``/``definitions`` is inlined (a cycle cannot be, and is left);
- a ``oneOf``/``anyOf`` of one variant is that variant;
- ``const`` becomes a one-value string ``enum``; a type array with ``"null"`` becomes the type
  with ``nullable``; a nested ``oneOf`` is served as ``anyOf``;
- an exclusive bound on an integer becomes the inclusive one; on a number it is said
  in the description;
- keywords no provider rule allows everywhere (``$schema``, ``$comment``,
  ``additionalProperties``) are dropped; the exact schema still enforces them.

Anything else stays as it is, and the lint then names it. A pure function of the
schema: the same contract always gives the same projection, key order included.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codegen.provider_rules import lint_tool

_DROPPED = {
    "$schema": "$schema dropped",
    "$id": "$id dropped",
    "$comment": "$comment dropped",
    "additionalProperties": "additionalProperties dropped",
}
_COMBINATORS = ("oneOf", "anyOf", "allOf")


@dataclass(frozen=True)
class Projection:
    schema: dict[str, Any]
    # What was changed, in the order first met, each with how often.
    notes: tuple[str, ...]


@dataclass
class _Notes:
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, note: str) -> None:
        self.counts[note] = self.counts.get(note, 0) + 1

    def as_tuple(self) -> tuple[str, ...]:
        return tuple(
            note if count == 1 else f"{note} (x{count})" for note, count in self.counts.items()
        )


def project(name: str, input_schema: Mapping[str, Any]) -> Projection | None:
    """The projection of ``input_schema``; None when the exact schema breaks no rule."""
    if not lint_tool(name, input_schema):
        return None
    notes = _Notes()
    definitions = {
        **dict(input_schema.get("definitions") or {}),
        **dict(input_schema.get("$defs") or {}),
    }
    transform = _Transform(definitions, notes)
    root = _merge_root(input_schema, transform, notes)
    return Projection(schema=transform.schema(root), notes=notes.as_tuple())


def merged_root(input_schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """The root of ``input_schema`` as one object (a root combinator's forms merged, as
    :func:`project` merges them), and the definitions its ``$ref``s name."""
    definitions = {
        **dict(input_schema.get("definitions") or {}),
        **dict(input_schema.get("$defs") or {}),
    }
    notes = _Notes()
    return _merge_root(input_schema, _Transform(definitions, notes), notes), definitions


def resolved(schema: Mapping[str, Any], definitions: dict[str, Any]) -> Mapping[str, Any]:
    """``schema`` with a local ``$ref`` at its top replaced by what it names."""
    return _Transform(definitions, _Notes()).resolved(schema)


def _merge_root(
    schema: Mapping[str, Any], transform: _Transform, notes: _Notes
) -> Mapping[str, Any]:
    present = [combinator for combinator in _COMBINATORS if combinator in schema]
    if len(present) != 1:
        return schema
    (combinator,) = present
    forms = [transform.resolved(form) for form in schema[combinator]]
    if not all(isinstance(form.get("properties"), Mapping) for form in forms):
        return schema  # not forms of one object: the lint will say so
    base = {key: value for key, value in schema.items() if key != combinator}
    if combinator == "allOf":
        notes.add(f"root allOf merged ({len(forms)} parts)")
        return _merge_all_of(base, forms)
    notes.add(f"root {combinator} merged ({len(forms)} forms)")
    return _merge_forms(base, forms, exactly_one=combinator == "oneOf", notes=notes)


def _merge_all_of(base: dict[str, Any], parts: list[Mapping[str, Any]]) -> dict[str, Any]:
    properties = dict(base.get("properties") or {})
    required = list(base.get("required") or [])
    for part in parts:
        for key, schema in part["properties"].items():
            properties.setdefault(key, schema)
        required += [key for key in part.get("required") or [] if key not in required]
    merged = {**base, "type": "object", "properties": properties}
    if required:
        merged["required"] = required
    return merged


def _merge_forms(
    base: dict[str, Any], forms: list[Mapping[str, Any]], *, exactly_one: bool, notes: _Notes
) -> dict[str, Any]:
    base_properties: Mapping[str, Any] = base.get("properties") or {}
    base_required = list(base.get("required") or [])
    variants: dict[str, list[Any]] = {key: [schema] for key, schema in base_properties.items()}
    for form in forms:
        for key, schema in form["properties"].items():
            known = variants.setdefault(key, [])
            if schema not in known:
                known.append(schema)
    shared = [
        key
        for key in variants
        if key in base_properties or all(key in (f.get("required") or []) for f in forms)
    ]
    summaries = [_form_summary(form, base_required) for form in forms]
    properties = {}
    for key, schemas in variants.items():
        if len(schemas) > 1:
            notes.add("a property's differing schemas joined in anyOf")
        schema = dict(schemas[0]) if len(schemas) == 1 else {"anyOf": schemas}
        where = _where_allowed(key, forms, base_properties)
        described = " ".join(filter(None, [schema.get("description"), where]))
        if described:
            schema["description"] = described
        properties[key] = schema
    how = "exactly one" if exactly_one else "at least one"
    listing = " ".join(f"({index}) {summary}." for index, summary in enumerate(summaries, 1))
    description = f"Arguments take one of {len(forms)} forms ({how} must match): {listing}"
    merged = {
        **base,
        "description": " ".join(filter(None, [base.get("description"), description])),
        "type": "object",
        "properties": properties,
    }
    required = base_required + [key for key in shared if key not in base_required]
    if required:
        merged["required"] = required
    return merged


def _form_summary(form: Mapping[str, Any], base_required: list[str]) -> str:
    required = base_required + [k for k in form.get("required") or [] if k not in base_required]
    optional = [key for key in form["properties"] if key not in required]
    parts = [f"{', '.join(required)} required" if required else "nothing required"]
    if optional:
        parts.append(f"{', '.join(optional)} optional")
    if form.get("additionalProperties") is False:
        parts.append("nothing else")
    return "; ".join(parts)


def _where_allowed(
    key: str, forms: list[Mapping[str, Any]], base_properties: Mapping[str, Any]
) -> str:
    """Which forms accept ``key`` (by number: the inputSchema's description lists them
    once), and what it never goes with."""
    allowed = [
        index
        for index, form in enumerate(forms, 1)
        if key in base_properties or key in form["properties"]
    ]
    if len(allowed) == len(forms):
        return ""  # said of no property: only those some forms refuse are marked
    companions = {
        other for index in allowed for other in forms[index - 1]["properties"] if other != key
    }
    excluded = [
        other
        for form in forms
        for other in form["properties"]
        if other != key and other not in companions
    ]
    numbers = ", ".join(f"({index})" for index in allowed)
    sentence = f"Only in form{'s' if len(allowed) > 1 else ''} {numbers}."
    if excluded:
        sentence += f" Not with {', '.join(dict.fromkeys(excluded))}."
    return sentence


@dataclass
class _Transform:
    definitions: dict[str, Any]
    notes: _Notes
    _resolving: list[str] = field(default_factory=list)

    def resolved(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """``schema`` with a local ``$ref`` at its top replaced by what it names."""
        name = _local_definition(schema.get("$ref"))
        if name is None or name not in self.definitions:
            return schema
        self.notes.add("$ref inlined")
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        return {**self.definitions[name], **rest}

    def schema(self, schema: Any) -> Any:
        if not isinstance(schema, Mapping):
            return schema
        name = _local_definition(schema.get("$ref"))
        if name is not None:
            if name in self._resolving or name not in self.definitions:
                return dict(schema)  # a cycle, or nothing to inline: left for the lint
            self.notes.add("$ref inlined")
            self._resolving.append(name)
            try:
                target = self.schema(self.definitions[name])
            finally:
                self._resolving.pop()
            rest = self.schema({key: value for key, value in schema.items() if key != "$ref"})
            return {**target, **rest}
        out: dict[str, Any] = {}
        said: list[str] = []
        for key, value in schema.items():
            if key in _DROPPED:
                self.notes.add(_DROPPED[key])
            elif key in ("$defs", "definitions"):
                self.notes.add(f"{key} dropped after inlining")
            elif key == "const":
                self._const(value, out, said)
            elif key == "enum" and not all(isinstance(item, str) for item in value):
                self.notes.add("non-string enum said in the description")
                said.append(f"One of: {', '.join(json.dumps(item) for item in value)}.")
            elif key == "type" and isinstance(value, list):
                self._type_list(value, out)
            elif key in ("exclusiveMinimum", "exclusiveMaximum"):
                self._exclusive(key, value, schema, out, said)
            elif key in ("oneOf", "anyOf") and len(value) == 1 and _mergeable(schema, key):
                self.notes.add(f"one-variant {key} unwrapped")
                out.update(self.schema(value[0]))
            elif key == "oneOf":
                self.notes.add("nested oneOf served as anyOf")
                out["anyOf"] = [self.schema(item) for item in value]
            elif key in ("anyOf", "allOf"):
                out[key] = [self.schema(item) for item in value]
            elif key == "properties" and isinstance(value, Mapping):
                out[key] = {name: self.schema(item) for name, item in value.items()}
            elif key in ("items", "not"):
                out[key] = self.schema(value)
            elif key in ("minimum", "maximum"):
                out.setdefault(key, value)  # an exclusive bound before it may be tighter
            else:
                out[key] = value
        if said:
            out["description"] = " ".join(filter(None, [out.get("description"), *said]))
        return out

    def _const(self, value: Any, out: dict[str, Any], said: list[str]) -> None:
        if isinstance(value, str):
            self.notes.add("const served as a one-value string enum")
            out["enum"] = [value]
            out.setdefault("type", "string")
        else:
            self.notes.add("non-string const said in the description")
            said.append(f"Must be {json.dumps(value)}.")

    def _type_list(self, value: list[Any], out: dict[str, Any]) -> None:
        kinds = [kind for kind in value if kind != "null"]
        if len(kinds) != 1:
            out["type"] = value  # several non-null types: left for the lint
            return
        self.notes.add("type array served as one type with nullable")
        out["type"] = kinds[0]
        if "null" in value:
            out["nullable"] = True

    def _exclusive(
        self,
        key: str,
        value: Any,
        schema: Mapping[str, Any],
        out: dict[str, Any],
        said: list[str],
    ) -> None:
        lower = key == "exclusiveMinimum"
        inclusive = "minimum" if lower else "maximum"
        if schema.get("type") == "integer" and isinstance(value, int | float):
            bound: float = math.floor(value) + 1 if lower else math.ceil(value) - 1
            current = schema.get(inclusive)
            if isinstance(current, int | float):
                bound = max(bound, current) if lower else min(bound, current)
            self.notes.add(f"{key} on an integer served as {inclusive}")
            out[inclusive] = bound
        else:
            self.notes.add(f"{key} said in the description")
            said.append(f"{'Greater' if lower else 'Less'} than {value}.")


def _mergeable(schema: Mapping[str, Any], key: str) -> bool:
    """Whether the one variant of ``schema[key]`` can replace it: nothing else constrains
    ``schema`` but documentation."""
    return all(other in (key, "description", "title", "default") for other in schema)


def _local_definition(reference: Any) -> str | None:
    for prefix in ("#/$defs/", "#/definitions/"):
        if isinstance(reference, str) and reference.startswith(prefix):
            return reference[len(prefix) :]
    return None
