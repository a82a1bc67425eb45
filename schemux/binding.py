"""What generated code binds together: a tool's document, its validators and its handler.

``schemux.generated.bindings`` (written by codegen) builds one :class:`ToolBinding` per
tool that has a handler module; the server only ever sees bindings.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonschema.protocols import Validator

if TYPE_CHECKING:
    from schemux.context import ToolContext

ToolCall = Callable[["ToolContext", dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ToolBinding:
    """One served tool.

    ``call`` takes arguments that ``input_validator`` accepted and returns the handler's
    result in wire form (aliases, JSON types), still to be checked by ``output_validator``.
    ``document`` is the exact contract; ``served_input_schema``, when set, is the
    projection tools/list serves instead of its inputSchema (codegen/projection.py).
    """

    document: Mapping[str, Any]
    input_validator: Validator
    output_validator: Validator
    call: ToolCall
    summary: str = ""
    served_input_schema: Mapping[str, Any] | None = None
    # The outputSchema wraps the tool's value as {"result": value} (FastMCP's
    # x-fastmcp-wrap-result); the text content then carries the value itself.
    wraps_result: bool = False

    @property
    def name(self) -> str:
        return str(self.document["name"])

    @property
    def declared_arguments(self) -> frozenset[str]:
        """The argument names the contract declares, in any of its forms (the served
        projection merges every form's properties)."""
        schema = self.served_input_schema or self.document["inputSchema"]
        return frozenset(schema.get("properties", {}))

    @property
    def error_envelope(self) -> bool:
        """Whether the contract describes failures as results: its outputSchema has an
        ``{ok: false, error}`` form (the envelope of the ``tmux_*`` family)."""
        output = self.document.get("outputSchema") or {}
        return any(
            form.get("properties", {}).get("ok") == {"const": False}
            and "error" in form.get("properties", {})
            for form in output.get("oneOf", ())
        )

    def served_document(self, *, exact: bool = False) -> dict[str, Any]:
        """The Tool document tools/list serves: the projection, or with ``exact`` (or
        when there is none) the contract as it is."""
        if exact or self.served_input_schema is None:
            return dict(self.document)
        return {**self.document, "inputSchema": dict(self.served_input_schema)}
