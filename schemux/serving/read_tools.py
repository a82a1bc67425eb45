"""The tools a call may call in turn (call_read_tools_batch's operations): each served
tool whose readOnlyHint is true, but the batch itself, called through the same pipeline
as a ``tools/call`` (validation, routing, its result checked against its outputSchema).

A nested call is part of its batch: the batch's audit record holds its arguments (and
the names ``--audit-redact`` hides in them) and the pane it resolved (the last, of
several), and it keeps no record of its own, so its failure is not the batch's; it
shares the batch's MCP session, progress, result links and permits. A tool that is not
served, or not read-only, is refused by name without running.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import mcp_types as types

from schemux.audit.log import CallRecord
from schemux.domain.call import Call, NestedResult
from schemux.errors import preview
from schemux.serving.binding import ToolBinding
from schemux.serving.state import ServingState

BATCH = "call_read_tools_batch"
Pipeline = Callable[
    [ToolBinding, ServingState, dict[str, Any], Call], Awaitable[types.CallToolResult]
]


class ServedReadTools:
    """The read-only tools of ``bindings`` (the served ones), run by ``pipeline`` (the
    server's ``call_bound_tool``) over ``state``."""

    def __init__(
        self, state: ServingState, bindings: Mapping[str, ToolBinding], pipeline: Pipeline
    ) -> None:
        self._state = state
        self._pipeline = pipeline
        self._readable = {
            name: binding
            for name, binding in bindings.items()
            if name != BATCH and _read_only(binding)
        }
        self._served = frozenset(bindings)

    async def call(self, parent: Call, tool: str, arguments: dict[str, Any]) -> NestedResult:
        binding = self._readable.get(tool)
        if binding is None:
            return _refused(tool, self._why_not(tool))
        notes = CallRecord(tool, arguments)  # never written: the batch's record is
        nested = dataclasses.replace(parent, notes=notes)
        result = await self._pipeline(binding, self._state, dict(arguments), nested)
        if parent.notes is not None and notes.pane is not None:
            parent.notes.note_pane(notes.pane)
        content = [
            block.model_dump(mode="json", by_alias=True, exclude_none=True)
            for block in result.content
        ]
        text = "\n".join(block.text for block in result.content if block.type == "text")
        return NestedResult(bool(result.is_error), content, result.structured_content, text)

    def _why_not(self, tool: str) -> str:
        if tool == BATCH:
            return "a batch does not call itself"
        if tool in self._served:
            return "it is not read-only: a batch calls only tools whose readOnlyHint is true"
        return "this server does not serve it (--tools)"

    def readable(self) -> list[str]:
        """The tools a batch may call, in the served order."""
        return list(self._readable)


def _refused(tool: str, why: str) -> NestedResult:
    text = f"{preview(tool)} is refused: {why}"
    return NestedResult(True, [{"type": "text", "text": text}], None, text)


def _read_only(binding: ToolBinding) -> bool:
    """Whether the tool is served with readOnlyHint true (its overlay says why)."""
    document = binding.listed if binding.listed is not None else binding.document
    return document.get("annotations", {}).get("readOnlyHint") is True
