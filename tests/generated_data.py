"""The generated package's data as the tests compare against it.

The contracts and projections are read from its package data, as the runtime reads
them; each tool's document as tools/list says it is made by codegen itself
(``codegen.overlays.overlaid``), not read back from ``serving.json``'s edits, so a test
of what the runtime makes of those edits can fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codegen.overlays import extended, load_overlays, overlaid
from schemux.serving.binding import generated_json

_REPO_ROOT = Path(__file__).resolve().parent.parent
_SERVING: dict[str, dict[str, Any]] = generated_json("serving.json")
_OVERLAYS, _ = load_overlays(_REPO_ROOT)

# tool -> its exact contract (generated/contracts.json)
TOOL_DOCUMENTS: dict[str, dict[str, Any]] = generated_json("contracts.json")
# tool -> its contract with its overlay's own arguments (``force``, say) added: the rules
# tools/list serves (calls are validated with the overlay's checks besides)
EXTENDED_DOCUMENTS: dict[str, dict[str, Any]] = {
    name: extended(document, _OVERLAYS.by_tool.get(name))
    for name, document in TOOL_DOCUMENTS.items()
}
# tool -> its document as tools/list says it with --schemas exact (its overlay merged)
SERVED_DOCUMENTS: dict[str, dict[str, Any]] = {
    name: overlaid(document, _OVERLAYS.by_tool.get(name))
    for name, document in TOOL_DOCUMENTS.items()
}
# tool -> the inputSchema served by default, for the tools whose contract needs a projection
SERVED_INPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    name: entry["projectedInputSchema"]
    for name, entry in _SERVING.items()
    if "projectedInputSchema" in entry
}
# tool -> the inputSchema served with --schemas openai-strict
STRICT_INPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    name: entry["strictInputSchema"] for name, entry in _SERVING.items()
}
# tool -> where a null sent in openai-strict mode means the argument is absent
ABSENT_WHEN_NULL: dict[str, tuple[str, ...]] = {
    name: tuple(entry["absentWhenNull"]) for name, entry in _SERVING.items()
}
