"""The table of tools in README.md, between ``<!-- tools:begin -->`` and ``<!-- tools:end -->``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

BEGIN = "<!-- tools:begin -->"
END = "<!-- tools:end -->"

_FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)


def tools_table(documents: Mapping[str, Mapping[str, Any]], served: list[str]) -> str:
    """A markdown table: name, title (else the description's first sentence), served, hints."""
    rows = [
        "| Tool | Summary | Served | Read-only | Destructive |",
        "|---|---|---|---|---|",
    ]
    for name in sorted(documents):
        document = documents[name]
        annotations = document.get("annotations") or {}
        cells = [
            f"`{name}`",
            _escape(document.get("title") or _first_sentence(document.get("description", ""))),
            _yes_no(name in served),
            _hint(annotations, "readOnlyHint"),
            _hint(annotations, "destructiveHint"),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def with_tools_table(readme: str, table: str) -> str | None:
    """``readme`` with ``table`` between the markers; None when it lacks them."""
    begin = readme.find(BEGIN)
    end = readme.find(END, begin + len(BEGIN)) if begin != -1 else -1
    if begin == -1 or end == -1:
        return None
    return f"{readme[: begin + len(BEGIN)]}\n{table}{readme[end:]}"


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
