"""The importer: each file of ``schemas/upstream/`` -> a tool document in ``schemas/tools/``
(but a prompt list, which ``codegen.prompts`` reads).

A tool document has the MCP ``Tool`` shape. Upstream's schemas are kept exactly as
written (key order too); where the contract came from goes into
``_meta["io.schemux/provenance"]`` and upstream's own meta block, as is, into
``_meta["io.schemux/upstreamMeta"]``.

Documents that schemux authors itself live in the same folder with provenance origin
``authored``; the importer reads them only to refuse a clash, and never writes them.

An upstream descriptor that declares no ``outputSchema`` (its ``tools/list`` entry had
none, and its result is a model) takes the one schemux authors from that model in
``schemas/outputs/<tool>.json``: ``{"tool", "resultModel", "outputSchema"}``, where
``resultModel`` is the model's JSON Schema as received, under ``schemas/upstream/``. The
authored schema must have exactly the model's fields, each of the model's type (its
words may differ), and the model's required ones; provenance names the file. A tool
whose result is a plain value, not a model (``capture_pane``'s captured text), names its
JSON type instead: ``{"tool", "result": "string", "outputSchema"}``, whose schema must
wrap that value as FastMCP wraps one (``{"result": value}``, ``x-fastmcp-wrap-result``).

Everything is validated before anything is written: one bad upstream file stops the
import with :class:`ImportFailed`, naming every file and problem found.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from codegen.prompts import is_prompt_list
from codegen.upstream import UpstreamFormatError, UpstreamTool, parse_upstream
from codegen.validation import document_problems, wraps_result

UPSTREAM_DIR = Path("schemas/upstream")
# Codegen's index of the upstream files (codegen.upstream_readme), not one of them.
UPSTREAM_INDEX = UPSTREAM_DIR / "README.md"
TOOLS_DIR = Path("schemas/tools")
OUTPUTS_DIR = Path("schemas/outputs")
PROVENANCE = "io.schemux/provenance"
UPSTREAM_META = "io.schemux/upstreamMeta"
UPSTREAM_ORIGIN = "upstream"


class ImportFailed(Exception):
    """The import cannot go on; ``problems`` are ``"<file>: <problem>"`` lines."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ImportResult:
    """The outcome of an import, before anything is written."""

    # Path (relative to the root) -> its new text, or None to delete it. Covers every
    # upstream-owned document, changed or not; authored ones never appear.
    files: dict[Path, str | None]
    # Every tool document once the files are written, authored ones too, by tool name.
    documents: dict[str, dict[str, Any]]


def serialize_document(document: Mapping[str, Any]) -> str:
    """The one byte-stable text form of a tool document."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def is_upstream_document(document: Mapping[str, Any]) -> bool:
    """Whether the importer owns this document (and may rewrite or delete it)."""
    meta = document.get("_meta")
    provenance = meta.get(PROVENANCE) if isinstance(meta, dict) else None
    return isinstance(provenance, dict) and provenance.get("origin") == UPSTREAM_ORIGIN


def plan_import(root: Path) -> ImportResult:
    """Import ``root``'s upstream files in memory and check every resulting document.

    Raises :class:`ImportFailed` when an upstream file is unusable, clashes with another
    or with an authored document, or an authored document is broken itself.
    """
    imported = _import_all(root)
    authored = {
        path: document
        for path, document in _load_tool_documents(root).items()
        if not is_upstream_document(document)
    }
    problems = [
        f"{upstream_file}: tool {name!r} clashes with the authored document {path}"
        for name, (upstream_file, _) in imported.items()
        for path in authored
        if path.stem == name
    ]
    for path, document in authored.items():
        found = document_problems(document)
        if document.get("name") != path.stem:
            found.append(f"names the tool {document.get('name')!r}, not {path.stem!r}")
        problems.extend(f"{path}: {problem}" for problem in found)
    if problems:
        raise ImportFailed(problems)

    files: dict[Path, str | None] = {
        TOOLS_DIR / f"{name}.json": serialize_document(document)
        for name, (_, document) in imported.items()
    }
    for path in sorted((root / TOOLS_DIR).glob("*.json")):
        relative = path.relative_to(root)
        if relative not in authored and relative not in files:
            files[relative] = None  # an upstream document whose upstream file is gone
    documents = {name: document for name, (_, document) in imported.items()}
    documents.update((path.stem, document) for path, document in authored.items())
    return ImportResult(files=files, documents=dict(sorted(documents.items())))


def _load_tool_documents(root: Path) -> dict[Path, dict[str, Any]]:
    """Every document now in ``schemas/tools/``, by path relative to ``root``."""
    documents: dict[Path, dict[str, Any]] = {}
    problems: list[str] = []
    for path in sorted((root / TOOLS_DIR).glob("*.json")):
        relative = path.relative_to(root)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            problems.append(f"{relative}: invalid JSON: {error}")
            continue
        if not isinstance(document, dict):
            problems.append(f"{relative}: not a JSON object")
            continue
        documents[relative] = document
    if problems:
        raise ImportFailed(problems)
    return documents


def _import_all(root: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Parse and check every upstream file: tool name -> (upstream file, document)."""
    imported: dict[str, tuple[Path, dict[str, Any]]] = {}
    defined_by: dict[str, Path] = {}
    problems: list[str] = []
    for path in sorted((root / UPSTREAM_DIR).iterdir()):
        relative = path.relative_to(root)
        if not path.is_file() or relative == UPSTREAM_INDEX:
            continue
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
            if is_prompt_list(text):
                continue  # prompts, not a tool: codegen.prompts reads it
            tool = parse_upstream(text)
        except UnicodeDecodeError as error:
            problems.append(f"{relative}: not UTF-8 text: {error}")
            continue
        except UpstreamFormatError as error:
            problems.append(f"{relative}: {error}")
            continue
        authored_output: Path | None = None
        if tool.output_schema is None:
            authored_output = OUTPUTS_DIR / f"{tool.name}.json"
            output_schema, output_problems = _authored_output(root, tool.name, authored_output)
            if output_problems:
                problems.extend(f"{relative}: {problem}" for problem in output_problems)
                continue
            tool = replace(tool, output_schema=output_schema)
        document = _tool_document(tool, relative, data, authored_output)
        found = document_problems(document)
        if tool.name in defined_by:
            found.append(f"tool {tool.name!r} is already defined by {defined_by[tool.name]}")
        else:
            defined_by[tool.name] = relative
        if found:
            problems.extend(f"{relative}: {problem}" for problem in found)
        else:
            imported[tool.name] = (relative, document)
    if problems:
        raise ImportFailed(problems)
    return dict(sorted(imported.items()))


def _authored_output(root: Path, name: str, path: Path) -> tuple[Any, list[str]]:
    """The outputSchema authored for ``name`` in ``path``, with what is wrong with it."""
    if not (root / path).is_file():
        return None, [f"declares no outputSchema, and {path} authors none"]
    try:
        authored = json.loads((root / path).read_text(encoding="utf-8"))
        if "resultModel" not in authored:
            return _plain_output(name, path, authored)
        model_file = UPSTREAM_DIR / str(authored["resultModel"])
        model = json.loads((root / model_file).read_text(encoding="utf-8"))
        schema = authored["outputSchema"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        return None, [f"{path}: unusable ({type(error).__name__}: {error})"]
    if authored.get("tool") != name:
        return None, [f"{path}: authors the outputSchema of {authored.get('tool')!r}"]
    problems = [f"{path}: {problem}" for problem in _model_mismatch(schema, model, model_file)]
    return schema, problems


def _plain_output(name: str, path: Path, authored: Any) -> tuple[Any, list[str]]:
    """The outputSchema authored for a plain value's result, with what is wrong with it."""
    if not isinstance(authored, dict) or authored.get("tool") != name:
        return None, [f"{path}: authors the outputSchema of another tool, or is no object"]
    schema, value = authored.get("outputSchema"), authored.get("result")
    if value not in ("string", "integer", "number", "boolean", "array", "object"):
        return None, [f"{path}: names neither a resultModel nor a result's JSON type"]
    if not isinstance(schema, dict) or not wraps_result(schema):
        return None, [f"{path}: a plain {value} result needs FastMCP's wrapped outputSchema"]
    if _shape(schema["properties"]["result"]) != {"type": value}:
        return None, [f"{path}: its result property is not of type {value!r}"]
    return schema, []


def _model_mismatch(schema: Any, model: Any, model_file: Path) -> list[str]:
    """Where an authored outputSchema leaves its result model's fields."""
    if not isinstance(schema, dict) or not isinstance(model, dict):
        return ["the outputSchema and the model must be JSON objects"]
    ours, theirs = schema.get("properties", {}), model.get("properties", {})
    problems = []
    if list(ours) != list(theirs):
        problems.append(f"fields {list(ours)} are not {model_file}'s {list(theirs)}")
    problems += [
        f"field {field!r} is not of {model_file}'s type"
        for field in ours
        if field in theirs and _shape(ours[field]) != _shape(theirs[field])
    ]
    if sorted(schema.get("required", [])) != sorted(model.get("required", [])):
        problems.append(f"required fields differ from {model_file}'s")
    if schema.get("additionalProperties") is not False:
        problems.append("no additionalProperties: false (a result has the model's fields only)")
    return problems


def _shape(schema: Any) -> Any:
    """A property's schema without its words (title, description)."""
    if isinstance(schema, dict):
        return {k: _shape(v) for k, v in schema.items() if k not in ("title", "description")}
    if isinstance(schema, list):
        return [_shape(item) for item in schema]
    return schema


def _tool_document(
    tool: UpstreamTool, upstream_file: Path, data: bytes, authored_output: Path | None
) -> dict[str, Any]:
    document: dict[str, Any] = {"name": tool.name}
    if tool.title is not None:
        document["title"] = tool.title
    document["description"] = tool.description
    document["inputSchema"] = tool.input_schema
    document["outputSchema"] = tool.output_schema
    if tool.annotations is not None:
        document["annotations"] = tool.annotations
    provenance = {
        "origin": UPSTREAM_ORIGIN,
        "upstreamFile": upstream_file.as_posix(),
        "format": tool.format,
        **tool.origin,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    if authored_output is not None:
        provenance["outputSchema"] = authored_output.as_posix()
    document["_meta"] = {PROVENANCE: provenance}
    if tool.meta is not None:
        document["_meta"][UPSTREAM_META] = tool.meta
    return document
