"""``schemux tools``: every tool with its family, the size of what tools/list serves for
it, the tokens a model sees of it, whether this configuration serves it, and its one-line
summary."""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from typing import Any

import mcp_types as types

from schemux.config import SchemaMode
from schemux.serving.binding import ToolBinding
from schemux.serving.selection import family_of

_HEADER = ("TOOL", "FAMILY", "BYTES", "TOKENS", "SERVED", "SUMMARY")
# About four bytes of English or JSON text to a token, in the tokenizers of OpenAI and
# Anthropic alike: an estimate, to compare tools and modes, not a count.
BYTES_PER_TOKEN = 4


def _compact(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def served_entry(
    binding: ToolBinding, mode: SchemaMode, selected: Collection[str]
) -> dict[str, Any]:
    """The tool's entry in tools/list, as a client receives it."""
    tool = types.Tool.model_validate(binding.served_document(mode, selected))
    entry: dict[str, Any] = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return entry


def served_size(binding: ToolBinding, mode: SchemaMode, selected: Collection[str]) -> int:
    """Bytes of the tool's entry in tools/list (compact JSON)."""
    return _compact(served_entry(binding, mode, selected))


def model_tokens(binding: ToolBinding, mode: SchemaMode, selected: Collection[str]) -> int:
    """An estimate of the tokens a model is given for the tool: a client hands the
    provider its name, description and inputSchema, nothing else of it."""
    entry = served_entry(binding, mode, selected)
    seen = {key: entry[key] for key in ("name", "description", "inputSchema") if key in entry}
    return math.ceil(_compact(seen) / BYTES_PER_TOKEN)


def tool_table(
    bindings: Mapping[str, ToolBinding], selected: Collection[str], *, mode: SchemaMode
) -> str:
    """One row per tool, then the totals of the served ones."""
    rows = [_HEADER]
    total_bytes = total_tokens = 0
    for name, binding in sorted(bindings.items()):
        size = served_size(binding, mode, selected)
        tokens = model_tokens(binding, mode, selected)
        if name in selected:
            total_bytes += size
            total_tokens += tokens
        served = "yes" if name in selected else "no"
        rows.append((name, family_of(name) or "-", str(size), str(tokens), served, binding.summary))
    rows.append(("served", "", str(total_bytes), str(total_tokens), "", f"--schemas {mode}"))
    widths = [max(len(row[column]) for row in rows) for column in range(len(_HEADER) - 1)]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if column in (2, 3) else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=False))
        ]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines) + "\n"
