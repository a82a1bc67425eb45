"""``schemux tools``: every tool with its family, the size of what tools/list serves for
it, whether this configuration serves it, and its one-line summary."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

import mcp_types as types

from schemux.binding import ToolBinding
from schemux.selection import family_of

_HEADER = ("TOOL", "FAMILY", "BYTES", "SERVED", "SUMMARY")


def served_size(binding: ToolBinding, *, exact: bool) -> int:
    """Bytes of the tool's entry in tools/list (compact JSON, as a client receives it)."""
    tool = types.Tool.model_validate(binding.served_document(exact=exact))
    wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return len(json.dumps(wire, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def tool_table(
    bindings: Mapping[str, ToolBinding], selected: Collection[str], *, exact: bool
) -> str:
    rows = [_HEADER] + [
        (
            name,
            family_of(name) or "-",
            str(served_size(binding, exact=exact)),
            "yes" if name in selected else "no",
            binding.summary,
        )
        for name, binding in sorted(bindings.items())
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(_HEADER) - 1)]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if column == 2 else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=False))
        ]
        lines.append("  ".join([*cells, row[-1]]))
    return "\n".join(lines) + "\n"
