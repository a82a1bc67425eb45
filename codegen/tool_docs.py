"""``docs/tools.md``: every served tool's arguments, results and one example, written
from the tool documents (as served: the projection where there is one) and
``schemas/examples/``, so the reference cannot drift from the contracts."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.contract_diff import diff_tool
from codegen.importer import PROVENANCE
from codegen.overlays import HINTS, Overlays
from codegen.projection import Projection
from codegen.readme import summary
from codegen.templating import TEMPLATES

TOOLS_DOC = Path("docs/tools.md")
EXAMPLES_DIR = Path("schemas/examples")


@dataclass(frozen=True)
class Argument:
    name: str
    type: str
    required: bool
    default: str  # as JSON; "" when the schema gives none
    description: str


@dataclass(frozen=True)
class ResultField:
    path: str  # dotted, "[]" for a list's items
    type: str
    description: str


@dataclass(frozen=True)
class Example:
    name: str
    arguments: str  # JSON, indented
    outcome: str  # "result" or "error"
    expected: str  # JSON, indented


@dataclass(frozen=True)
class ToolDoc:
    name: str
    summary: str
    description: str
    read_only: str
    destructive: str
    # each hint's value and why it holds, from the overlay
    hints: list[tuple[str, str, str]]
    # where the contract comes from (its _meta provenance), as one line
    provenance: str
    # sentences served with the description when the tools they need are
    advice: list[tuple[str, str]]
    # what the overlay changes over the contract (codegen.contract_diff's words)
    changes: list[str]
    projected: bool
    # whether a call may run as an MCP task (the overlay's task)
    task: bool
    arguments: list[Argument]
    results: list[ResultField]
    example: Example | None


def type_text(schema: Mapping[str, Any]) -> str:
    """A JSON Schema's type as a reader says it: ``string``, ``integer or null``,
    ``array of string``, ``"a" or "b"``."""
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "enum" in schema:
        return " or ".join(json.dumps(value, ensure_ascii=False) for value in schema["enum"])
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            forms = _unique(type_text(form) for form in schema[combinator])
            return " or ".join(forms)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    texts = []
    for one in kinds:
        if one == "array" and isinstance(schema.get("items"), Mapping):
            texts.append(f"array of {type_text(schema['items'])}")
        else:
            texts.append(str(one))
    return " or ".join(texts) or "any"


def arguments_of(schema: Mapping[str, Any], prefix: str = "") -> list[Argument]:
    """The arguments of an object inputSchema, required ones first, each followed by the
    fields of an object it takes (``target.kind``: required within its object)."""
    required = set(schema.get("required", ()))
    properties: Mapping[str, Any] = schema.get("properties", {})
    rows: list[Argument] = []
    for name in sorted(properties, key=lambda name: (name not in required, name)):
        prop = properties[name]
        rows.append(
            Argument(
                name=f"{prefix}{name}",
                type=type_text(prop),
                required=name in required,
                default=json.dumps(prop["default"], ensure_ascii=False)
                if "default" in prop
                else "",
                description=str(prop.get("description", "")),
            )
        )
        for form in [prop, *prop.get("oneOf", ()), *prop.get("anyOf", ())]:
            rows += arguments_of(form, f"{prefix}{name}.")
    return rows


def result_fields(schema: Mapping[str, Any]) -> list[ResultField]:
    """Every field of an outputSchema, nested ones by dotted path, each once (the forms of
    a ``oneOf`` merged: a field in several forms lists every type it takes)."""
    types: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    for path, field_schema in _walk(schema, ""):
        types.setdefault(path, [])
        text = type_text(field_schema)
        if text not in types[path]:
            types[path].append(text)
        if path not in descriptions and field_schema.get("description"):
            descriptions[path] = str(field_schema["description"])
    return [
        ResultField(path, " or ".join(types[path]), descriptions.get(path, "")) for path in types
    ]


def _walk(schema: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for combinator in ("oneOf", "anyOf", "allOf"):
        for form in schema.get(combinator, ()):
            yield from _walk(form, prefix)
    for name, prop in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        yield path, prop
        yield from _walk(prop, f"{path}.")
    items = schema.get("items")
    if isinstance(items, Mapping) and prefix:
        yield from _walk(items, f"{prefix.removesuffix('.')}[].")


def example_of(examples: Mapping[str, Any] | None) -> Example | None:
    """The tool's first example that succeeds (else its first), as the docs show it."""
    listed: list[Mapping[str, Any]] = list((examples or {}).get("examples", ()))
    if not listed:
        return None
    chosen = next((example for example in listed if "result" in example), listed[0])
    outcome = "result" if "result" in chosen else "error"
    return Example(
        name=str(chosen["name"]),
        arguments=json.dumps(chosen.get("arguments", {}), indent=2, ensure_ascii=False),
        outcome=outcome,
        expected=json.dumps(shown(chosen[outcome]), indent=2, ensure_ascii=False),
    )


def shown(expected: Any) -> Any:
    """An example's expected result (a JSON Schema) as the docs show it: what it pins as
    the value itself (a ``const``; an object all of whose properties are required, as
    that object), and any other schema as it is (``{"type": "number", "minimum": 0}``)."""
    if not isinstance(expected, Mapping):
        return expected  # an error's text
    if expected.keys() == {"const"}:
        return expected["const"]
    properties = expected.get("properties")
    if (
        expected.keys() == {"type", "properties", "required"}
        and expected["type"] == "object"
        and isinstance(properties, Mapping)
        and list(expected["required"]) == list(properties)
    ):
        return {name: shown(value) for name, value in properties.items()}
    return dict(expected)


def tools_doc(
    root: Path,
    documents: Mapping[str, Mapping[str, Any]],
    told: Mapping[str, Mapping[str, Any]],
    served: list[str],
    projections: Mapping[str, Projection],
    overlays: Overlays,
) -> str:
    """The reference: each served tool as tools/list says it (``told``), with where its
    contract (``documents``) comes from and why each hint holds."""
    tools = []
    for name in sorted(served):
        document = told[name]
        projection = projections.get(name)
        input_schema = document["inputSchema"] if projection is None else projection.schema
        annotations = document.get("annotations") or {}
        examples_path = root / EXAMPLES_DIR / f"{name}.json"
        examples = json.loads(examples_path.read_text()) if examples_path.is_file() else None
        overlay = overlays.by_tool.get(name)
        tools.append(
            ToolDoc(
                name=name,
                summary=summary(document),
                description=str(document.get("description", "")).strip(),
                read_only=_hint(annotations, "readOnlyHint"),
                destructive=_hint(annotations, "destructiveHint"),
                hints=[
                    (hint, _hint(annotations, hint), overlay.why[hint] if overlay else "")
                    for hint in HINTS
                ],
                provenance=provenance_line(documents[name]),
                advice=[
                    (", ".join(advice.needs), advice.text)
                    for advice in (overlay.advice if overlay else ())
                ],
                changes=[
                    f"`{change.where}`: {change.what}"
                    for change in diff_tool(name, documents[name], document)
                ],
                projected=projection is not None,
                task=overlay is not None and overlay.task,
                arguments=arguments_of(input_schema),
                results=result_fields(document.get("outputSchema", {})),
                example=example_of(examples),
            )
        )
    return TEMPLATES.get_template("tools.md.j2").render(tools=tools)


def provenance_line(document: Mapping[str, Any]) -> str:
    """Where the contract comes from, from its ``_meta`` provenance (not served)."""
    provenance = (document.get("_meta") or {}).get(PROVENANCE) or {}
    if provenance.get("origin") != "upstream":
        return "authored by schemux (`schemas/tools/" + str(document["name"]) + ".json`)"
    parts = [f"upstream `{provenance.get('upstreamFile')}`"]
    for key in ("product", "repository", "revision"):
        if provenance.get(key):
            parts.append(str(provenance[key]).splitlines()[0])
    if provenance.get("sourceFile"):
        line = provenance.get("sourceLine")
        parts.append(f"`{provenance['sourceFile']}{f':{line}' if line else ''}`")
    parts.append(f"sha256 `{str(provenance.get('sha256', ''))[:16]}`")
    return ", ".join(parts)


def _hint(annotations: Mapping[str, Any], hint: str) -> str:
    return ("yes" if annotations[hint] else "no") if hint in annotations else "unknown"


def _unique(texts: Iterator[str]) -> list[str]:
    seen: list[str] = []
    for text in texts:
        for part in text.split(" or "):
            if part not in seen:
                seen.append(part)
    return seen
