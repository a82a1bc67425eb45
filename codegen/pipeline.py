"""One codegen run: what the repository should hold, compared with what it holds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.contract_diff import Change, diff_tool, diff_tools, format_report
from codegen.document_edits import document_edits
from codegen.generate import (
    GENERATED_DIR,
    render_generated,
    served_documents,
    served_entries,
    served_tools,
)
from codegen.importer import UPSTREAM_INDEX, ImportFailed, plan_import
from codegen.model_defaults import model_defaults
from codegen.overlays import Overlays, load_overlays, overlaid, overlay_problems
from codegen.projection import Projection, project
from codegen.provider_rules import lint_openai_strict, lint_tool
from codegen.readme import (
    PROJECTIONS_SECTION,
    SECTION_FILES,
    TOOLS_SECTION,
    projections_list,
    tools_table,
    with_section,
)
from codegen.served_text import schema_texts, served_text_problems, vocabulary
from codegen.strict_projection import StrictProjection, strict_projection
from codegen.tmux_fields import libtmux_fields
from codegen.tool_docs import TOOLS_DOC, tools_doc
from codegen.upstream_readme import upstream_readme


@dataclass(frozen=True)
class Plan:
    # Path relative to the root -> its wanted text, or None when it should not exist.
    files: dict[Path, str | None]
    # The tool contracts' changes against what generated/ serves now.
    changes: list[Change]
    # The projected inputSchema of each tool whose exact one breaks a provider rule.
    projections: dict[str, Projection]
    # The projections as generated/ serves them now, to report what changes.
    previous_projections: dict[str, dict[str, Any]]
    # What the overlay changes over the contract, for each tool whose served document is
    # not what generated/ serves now (so a run with nothing new is quiet).
    overlay_changes: list[Change]


def make_plan(root: Path) -> Plan:
    """Import, project, lint, generate and lay out the docs' generated sections, all in
    memory.

    Raises :class:`codegen.importer.ImportFailed` when the import cannot go on, or when
    a document as it would be served breaks a provider rule (naming tool and rule).
    """
    imported = plan_import(root)
    documents = imported.documents
    served = served_tools(root, sorted(documents))
    overlays, problems = load_overlays(root)
    if problems:  # a broken file is named as broken, not as a missing overlay too
        raise ImportFailed(problems)
    problems = overlay_problems(overlays, documents, served)
    if problems:
        raise ImportFailed(problems)
    told = {name: overlaid(documents[name], overlays.by_tool.get(name)) for name in documents}
    projections = _projections(told)
    strict = _strict_projections(told)
    tmux_fields = libtmux_fields()
    _lint_served_text(root, told, served, projections, strict, overlays, tmux_fields.names)
    defaults, problems = model_defaults(root, documents)
    if problems:
        raise ImportFailed(problems)
    generated = render_generated(
        root, documents, served, projections, defaults, tmux_fields, told, strict, overlays
    )
    files = {**imported.files, **generated}
    files[TOOLS_DOC] = tools_doc(root, documents, told, served, projections, overlays)
    files[UPSTREAM_INDEX] = upstream_readme(root, documents)
    for path in sorted((root / GENERATED_DIR).rglob("*")):
        # generated/ is codegen's alone: whatever it would not write now is stale.
        if path.suffix in (".py", ".json"):
            files.setdefault(path.relative_to(root), None)
    notes = {name: projection.notes for name, projection in projections.items()}
    families = {name: overlay.family for name, overlay in overlays.by_tool.items()}
    files.update(
        _sections(
            root,
            {
                TOOLS_SECTION: tools_table(
                    told,
                    served,
                    families,
                    tuple(family.name for family in overlays.families if family.on_request),
                ),
                PROJECTIONS_SECTION: projections_list(notes),
            },
        )
    )
    previous_contracts, previous_entries = served_documents(root), served_entries(root)
    return Plan(
        files=files,
        changes=diff_tools(previous_contracts, documents),
        projections=projections,
        previous_projections={
            name: entry["projectedInputSchema"]
            for name, entry in previous_entries.items()
            if "projectedInputSchema" in entry
        },
        overlay_changes=_overlay_changes(documents, told, previous_contracts, previous_entries),
    )


def _sections(root: Path, texts: Mapping[str, str]) -> dict[Path, str]:
    """Each docs file whose generated sections (``SECTION_FILES``) are not ``texts``, with
    them put in. A file that is missing, or lacks a section's markers, is left alone."""
    changed = {}
    for path in sorted(set(SECTION_FILES.values())):
        if not (root / path).is_file():
            continue
        original = (root / path).read_text(encoding="utf-8")
        document = original
        for section, text in texts.items():
            if SECTION_FILES[section] == path:
                document = with_section(document, section, text) or document
        if document != original:
            changed[path] = document
    return changed


def _overlay_changes(
    documents: Mapping[str, Mapping[str, Any]],
    told: Mapping[str, Mapping[str, Any]],
    previous_contracts: Mapping[str, Mapping[str, Any]],
    previous_entries: Mapping[str, Mapping[str, Any]],
) -> list[Change]:
    """What each overlay changes over its contract, for the tools whose served document
    is not the one generated/ serves now (its contract or its overlay's edits changed)."""
    return [
        change
        for name in sorted(told)
        if previous_contracts.get(name) != documents[name]
        or previous_entries.get(name, {}).get("edits")
        != document_edits(documents[name], told[name])
        for change in diff_tool(name, documents[name], told[name])
    ]


def _strict_projections(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, StrictProjection]:
    """The OpenAI strict projection of every document, each linted against strict mode."""
    strict = {name: strict_projection(documents[name]["inputSchema"]) for name in documents}
    problems = [
        f"openai-strict inputSchema of {violation}"
        for name in sorted(strict)
        for violation in lint_openai_strict(name, strict[name].schema)
    ]
    if problems:
        raise ImportFailed(problems)
    return strict


def _lint_served_text(
    root: Path,
    told: Mapping[str, Mapping[str, Any]],
    served: list[str],
    projections: Mapping[str, Projection],
    strict: Mapping[str, StrictProjection],
    overlays: Overlays,
    tmux_formats: frozenset[str],
) -> None:
    """Every text a served tool is listed with, in every --schemas mode, names only what
    this server has (codegen.served_text)."""
    texts: dict[str, list[tuple[str, str]]] = {}
    for name in served:
        document = told[name]
        found = [("description", str(document.get("description", "")))]
        if isinstance(document.get("title"), str):
            found.append(("title", document["title"]))
        for key in ("inputSchema", "outputSchema"):
            found += schema_texts(document.get(key), key)
        if name in projections:
            found += schema_texts(projections[name].schema, "inputSchema (projected)")
        found += schema_texts(strict[name].schema, "inputSchema (openai-strict)")
        texts[name] = list(dict(found).items())
    problems = served_text_problems(texts, overlays, vocabulary(root, told, tmux_formats))
    if problems:
        raise ImportFailed(["served text: " + problem for problem in problems])


def _projections(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Projection]:
    """The projection of each document that needs one; every served inputSchema linted."""
    projections: dict[str, Projection] = {}
    problems: list[str] = []
    for name in sorted(documents):
        exact = documents[name]["inputSchema"]
        projection = project(name, exact)
        if projection is not None:
            projections[name] = projection
        served = exact if projection is None else projection.schema
        problems += [f"served inputSchema of {violation}" for violation in lint_tool(name, served)]
    if problems:
        raise ImportFailed(problems)
    return projections


def format_overlays(plan: Plan) -> str:
    """What the overlays change over the contracts, for each tool whose served document
    changed; empty if none did (docs/tools.md lists every tool's)."""
    return format_report(plan.overlay_changes).replace(
        "Contract changes:", "Overlays (tools/list over the contracts):", 1
    )


def format_projections(plan: Plan) -> str:
    """The report: each projection that is new, changed or no longer needed against what
    generated/ serves now, with what it changes in the exact schema; empty if none."""
    lines = []
    for name in sorted({*plan.projections, *plan.previous_projections}):
        projection = plan.projections.get(name)
        previous = plan.previous_projections.get(name)
        if projection is None:
            lines.append(f"  {name}: no longer projected; the exact inputSchema is served")
        elif previous != projection.schema:
            verdict = "new" if previous is None else "changed"
            lines.append(f"  {name} ({verdict}): {'; '.join(projection.notes)}")
    if not lines:
        return ""
    header = "Projections served instead of the exact inputSchema (which still validates calls):"
    return "\n".join([header, *lines]) + "\n"


def out_of_date(root: Path, plan: Plan) -> list[Path]:
    """The planned files whose content (or existence) differs from the disk's."""
    return [path for path, text in sorted(plan.files.items()) if _current(root / path) != text]


def write(root: Path, plan: Plan) -> list[Path]:
    """Bring the disk in line with ``plan``; the paths written or deleted."""
    changed = out_of_date(root, plan)
    for path in changed:
        text = plan.files[path]
        if text is None:
            (root / path).unlink()
        else:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(text.encode("utf-8"))
    return changed


def _current(path: Path) -> str | None:
    return path.read_bytes().decode("utf-8") if path.is_file() else None
