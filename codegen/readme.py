"""The docs' generated sections: the README's table of tools, and the list of
projections in docs/protocol.md.

Each lives between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` in its file; the
text around it is written by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TOOLS_SECTION = "tools"
PROJECTIONS_SECTION = "projections"
# Which file holds each section, relative to the repository's root.
SECTION_FILES = {
    TOOLS_SECTION: Path("README.md"),
    PROJECTIONS_SECTION: Path("docs/protocol.md"),
}

_FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)


def tools_table(
    documents: Mapping[str, Mapping[str, Any]],
    served: list[str],
    families: Mapping[str, str] | None = None,
    on_request: tuple[str, ...] = (),
) -> str:
    """A markdown table: name, family (``--tools``), title (else the description's first
    sentence), served, hints; then the tools of the families served only on request, by
    name, a line per family (their rows would take the README past its length)."""
    families = families or {}
    rows = [
        "| Tool | Family | Summary | Served | Read-only | Destructive |",
        "|---|---|---|---|---|---|",
    ]
    for name in sorted(documents):
        if families.get(name) in on_request:
            continue
        document = documents[name]
        annotations = document.get("annotations") or {}
        cells = [
            f"`{name}`",
            f"`{families[name]}`" if name in families else "",
            _escape(summary(document)),
            _yes_no(name in served),
            _hint(annotations, "readOnlyHint"),
            _hint(annotations, "destructiveHint"),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    listed = [
        (family, sorted(name for name in documents if families.get(name) == family))
        for family in on_request
    ]
    listed = [(family, names) for family, names in listed if names]
    if listed:
        rows += [
            "",
            "Served only when `--tools` names their family (or `all`), each described in "
            "[docs/tools.md](docs/tools.md):",
            "",
        ]
        rows += [f"- `{family}`: " + ", ".join(f"`{n}`" for n in names) for family, names in listed]
    return "\n".join(rows) + "\n"


def projections_list(notes: Mapping[str, tuple[str, ...]]) -> str:
    """A markdown list: each projected tool and what its projection changed."""
    if not notes:
        return "No tool needs a projection: every exact inputSchema is served.\n"
    return "".join(f"- `{name}`: {'; '.join(notes[name])}.\n" for name in sorted(notes))


def with_section(document: str, section: str, text: str) -> str | None:
    """``document`` with ``text`` between the section's markers; None when it lacks them."""
    begin_marker, end_marker = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    begin = document.find(begin_marker)
    end = document.find(end_marker, begin + len(begin_marker)) if begin != -1 else -1
    if begin == -1 or end == -1:
        return None
    return f"{document[: begin + len(begin_marker)]}\n{text}{document[end:]}"


def summary(document: Mapping[str, Any]) -> str:
    """The tool's one line: its title, else its description's first sentence."""
    return str(document.get("title") or _first_sentence(document.get("description", "")))


def _first_sentence(description: str) -> str:
    paragraph = description.strip().split("\n\n")[0]
    match = _FIRST_SENTENCE.match(paragraph)
    return " ".join((match.group(1) if match else paragraph).split())


def _hint(annotations: Mapping[str, Any], hint: str) -> str:
    # MCP leaves a missing hint unknown; say so rather than guess the spec's default.
    return _yes_no(annotations[hint]) if hint in annotations else "?"


def _yes_no(value: object) -> str:
    return "yes" if value else "no"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
