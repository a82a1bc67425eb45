"""The generator: tool documents -> the ``generated/`` package (``schemux.generated``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.document_edits import document_edits
from codegen.formatting import format_json, format_python
from codegen.models import model_source
from codegen.overlays import RESOURCE_KINDS, TARGET_KINDS, Overlays, checked, extended
from codegen.projection import Projection
from codegen.readme import summary
from codegen.strict_projection import StrictProjection, strict_projection
from codegen.templating import TEMPLATES
from codegen.tmux_fields import TmuxFields, libtmux_fields
from codegen.validation import wraps_result

GENERATED_DIR = Path("generated")
# The JSON files of generated/, package data read by schemux.serving.binding.load_bindings: the
# exact contracts, and what tools/list serves of each tool.
CONTRACTS = GENERATED_DIR / "contracts.json"
SERVING = GENERATED_DIR / "serving.json"
# What validates calls besides each contract: its overlay's arguments and checks, as JSON
# Patch ``add`` edits over it (read by schemux.serving.binding.load_bindings; the checks
# never served, the arguments served as the overlay's edits).
CHECKS = GENERATED_DIR / "checks.json"
HANDLERS_DIR = Path("handlers")


@dataclass(frozen=True)
class ToolModule:
    """What the templates need to know about one tool."""

    name: str
    input_class: str
    output_class: str
    # FastMCP's convention: the tool's value is the outputSchema's one property "result".
    wraps_result: bool


def served_tools(root: Path, names: list[str]) -> list[str]:
    """The tools among ``names`` that have a handler module ``handlers/<name>.py``."""
    return [name for name in names if (root / HANDLERS_DIR / f"{name}.py").is_file()]


def render_generated(
    root: Path,
    documents: Mapping[str, Mapping[str, Any]],
    served: list[str],
    projections: Mapping[str, Projection],
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    tmux_fields: TmuxFields | None = None,
    told: Mapping[str, Mapping[str, Any]] | None = None,
    strict: Mapping[str, StrictProjection] | None = None,
    overlays: Overlays | None = None,
) -> dict[Path, str]:
    """Every file of ``generated/`` by path relative to ``root``, formatted.

    ``documents`` maps tool names to tool documents; ``served`` names those with a
    handler; ``projections`` holds the projected inputSchema of the tools that need one;
    ``defaults`` the defaults their contracts state in words only, for the models;
    ``tmux_fields`` the format names tmux_format checks rows against (the installed
    libtmux's unless given); ``told`` the documents as tools/list says them (the overlays
    merged; the contracts when not given), ``strict`` their OpenAI strict projections
    (made here when not given), ``overlays`` the facts the runtime's tables hold.
    """
    if tmux_fields is None:
        tmux_fields = libtmux_fields()
    names = sorted(documents)
    told = told if told is not None else documents
    if strict is None:
        strict = {name: strict_projection(told[name]["inputSchema"]) for name in names}
    overlays = overlays if overlays is not None else Overlays(families=(), by_tool={})
    in_guide = sorted(overlays.by_tool.values(), key=lambda overlay: (overlay.order, overlay.tool))
    # the models have the overlay's own arguments too: the handlers read them
    sources = {
        name: model_source(
            extended(documents[name], overlays.by_tool.get(name)), (defaults or {}).get(name)
        )
        for name in names
    }
    tools = [_tool_module(documents[name], sources[name]) for name in names]
    served_modules = [tool for tool in tools if tool.name in served]
    files = {
        GENERATED_DIR / "__init__.py": _render("package_init.py.j2"),
        GENERATED_DIR / "models" / "__init__.py": _render(
            "models_init.py.j2",
            module_of={
                cls: tool.name for tool in tools for cls in (tool.input_class, tool.output_class)
            },
            exported=sorted(c for tool in tools for c in (tool.input_class, tool.output_class)),
        ),
        GENERATED_DIR / "tool_facts.py": _render(
            "tool_facts.py.j2",
            families={
                family.name: tuple(o.tool for o in in_guide if o.family == family.name)
                for family in overlays.families
            },
            jobs={family.name: family.job for family in overlays.families},
            on_request=tuple(family.name for family in overlays.families if family.on_request),
            uses={overlay.tool: overlay.use for overlay in in_guide},
            never_sent={
                name: tuple(overlay.never_sent)
                for name, overlay in sorted(overlays.by_tool.items())
                if overlay.never_sent
            },
            task_tools=tuple(
                name for name, overlay in sorted(overlays.by_tool.items()) if overlay.task
            ),
            several_hosts_tools=tuple(
                name for name, overlay in sorted(overlays.by_tool.items()) if overlay.several_hosts
            ),
            resource_readers={
                kind: tuple(
                    name
                    for name, overlay in sorted(overlays.by_tool.items())
                    if kind in overlay.resources
                )
                for kind in RESOURCE_KINDS
            },
            every_host_lists={
                name: overlay.every_host_list
                for name, overlay in sorted(overlays.by_tool.items())
                if overlay.every_host_list is not None
            },
            recipes=tuple((recipe.needs, recipe.text) for recipe in overlays.recipes),
        ),
        GENERATED_DIR / "argument_facts.py": _render(
            "argument_facts.py.j2",
            redacted=_union(overlay.redacted for overlay in overlays.by_tool.values()),
            targets={
                kind: _union(overlay.targets.get(kind, ()) for overlay in overlays.by_tool.values())
                for kind in TARGET_KINDS
            },
            host_stamped=_union(overlay.host_stamped for overlay in overlays.by_tool.values()),
            synonyms=overlays.synonyms,
            tool_names=tuple(sorted(overlays.by_tool)),
        ),
        GENERATED_DIR / "tmux_fields.py": _render(
            "tmux_fields.py.j2",
            fields=tmux_fields,
            names=sorted(tmux_fields.names),
            since={name: tmux_fields.since[name] for name in sorted(tmux_fields.since)},
        ),
        GENERATED_DIR / "bindings.py": _render(
            "bindings.py.j2",
            served=served_modules,
            unserved=tuple(name for name in names if name not in served),
        ),
    }
    for name, source in sources.items():
        files[GENERATED_DIR / "models" / f"{name}.py"] = source
    formatted = format_python(root, files)
    formatted[CONTRACTS] = format_json({name: documents[name] for name in names})
    formatted[CHECKS] = format_json(
        {
            name: document_edits(documents[name], checked(documents[name], overlay))
            for name, overlay in sorted(overlays.by_tool.items())
            if name in documents and (overlay.checks or overlay.arguments)
        }
    )
    formatted[SERVING] = format_json(
        {
            name: _serving_entry(
                documents[name], told[name], projections.get(name), strict[name], overlays
            )
            for name in names
        }
    )
    return dict(sorted(formatted.items()))


def _serving_entry(
    contract: Mapping[str, Any],
    told: Mapping[str, Any],
    projection: Projection | None,
    strict: StrictProjection,
    overlays: Overlays,
) -> dict[str, Any]:
    """What tools/list serves of one tool, as ``schemux.serving.binding.load_bindings`` reads it."""
    overlay = overlays.by_tool.get(str(contract["name"]))
    entry: dict[str, Any] = {
        "summary": summary(told),
        "edits": document_edits(contract, told),
        "advice": [
            {"needs": list(advice.needs), "text": advice.text}
            for advice in (overlay.advice if overlay is not None else ())
        ],
    }
    if projection is not None:
        entry["projectedInputSchema"] = projection.schema
    entry["strictInputSchema"] = strict.schema
    entry["absentWhenNull"] = list(strict.nullable)
    return entry


def _tool_module(document: Mapping[str, Any], models_text: str) -> ToolModule:
    name = str(document["name"])
    # datamodel-code-generator names an MCP tool's models <PascalCaseName>Input/Output.
    pascal = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
    for role in ("Input", "Output"):
        if re.search(rf"^class {pascal}{role}\(", models_text, re.MULTILINE) is None:
            raise RuntimeError(f"the models of {name} have no class {pascal}{role}")
    return ToolModule(
        name=name,
        input_class=f"{pascal}Input",
        output_class=f"{pascal}Output",
        wraps_result=wraps_result(document["outputSchema"]),
    )


def _union(lists: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """Every name in ``lists``, once each, in name order."""
    return tuple(sorted({name for names in lists for name in names}))


def _render(template: str, **context: Any) -> str:
    return TEMPLATES.get_template(template).render(**context)


def served_documents(root: Path) -> dict[str, dict[str, Any]]:
    """The tool documents the current ``generated/contracts.json`` holds; empty when none."""
    documents: dict[str, dict[str, Any]] = _generated_json(root, CONTRACTS)
    return documents


def served_entries(root: Path) -> dict[str, dict[str, Any]]:
    """What the current ``generated/serving.json`` serves of each tool; empty when none."""
    entries: dict[str, dict[str, Any]] = _generated_json(root, SERVING)
    return entries


def _generated_json(root: Path, relative: Path) -> Any:
    """The JSON a file of ``generated/`` holds; {} when there is no such file."""
    path = root / relative
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))
