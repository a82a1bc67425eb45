"""The docs' generated sections: the README's table of tool families, and the list of
projections in docs/protocol.md.

Each lives between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` in its file; the
text around it is written by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from codegen.overlays import Family, Overlay

TOOLS_SECTION = "tools"
PROJECTIONS_SECTION = "projections"
# Which file holds each section, relative to the repository's root.
SECTION_FILES = {
    TOOLS_SECTION: Path("README.md"),
    PROJECTIONS_SECTION: Path("docs/protocol.md"),
}

_FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)


def families_table(
    families: Sequence[Family], tools: Mapping[str, Overlay], served: list[str]
) -> str:
    """A markdown table, one row a family (``--tools`` takes its name): whether it is
    served by default or only when asked, its tools (those with a handler; a tool served
    only with several hosts says so), and its job. A row a family, not a tool: the list
    grows with each upstream contract, and docs/tools.md has each tool whole."""
    rows = ["| Family | Served | Tools | What for |", "|---|---|---|---|"]
    for family in families:
        names = [
            f"`{name}`" + (" (with several hosts)" if tools[name].several_hosts else "")
            for name in sorted(tools)
            if tools[name].family == family.name and name in served
        ]
        if not names:
            continue
        when = (
            "when asked (`--tools " + family.name + "` or `all`)"
            if family.on_request
            else "by default"
        )
        rows.append(f"| `{family.name}` | {when} | {', '.join(names)} | {_escape(family.job)} |")
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


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
