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
    """

    document: Mapping[str, Any]
    input_validator: Validator
    output_validator: Validator
    call: ToolCall
    # The outputSchema wraps the tool's value as {"result": value} (FastMCP's
    # x-fastmcp-wrap-result); the text content then carries the value itself.
    wraps_result: bool = False

    @property
    def name(self) -> str:
        return str(self.document["name"])
