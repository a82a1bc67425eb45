"""One generic binding for every tool: its document, validators, models and handler.

``schemux.generated.bindings`` (written by codegen) holds one :class:`ToolBinding` per
tool that has a handler module, as data; the server only ever sees bindings. What a
call needs beyond the document is made at the tool's first call, so start-up (and
tools/list) pays for none of it: the handler module ``schemux.handlers.<name>`` and its
models ``schemux.generated.models.<name>`` are imported, and the validators are built
from each schema's own ``$schema`` (``schemux.validation.contract_validator``).
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from schemux.context import ToolContext

RequestT = TypeVar("RequestT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True)
class BoundHandler(Generic[RequestT, ResultT]):
    """A handler with the model of its request: wire arguments in, wire result out."""

    request_model: type[RequestT]
    handle: Callable[[ToolContext, RequestT], Awaitable[ResultT]]

    async def call(self, context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        # By wire names only: a property the schema lets through under a field's Python
        # name is not that field.
        request = self.request_model.model_validate(arguments, by_name=False)
        result = await self.handle(context, request)
        # A RootModel dumps as Any; every outputSchema's root is an object (codegen checks
        # that), and the output validator checks the result anyway.
        wire: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return wire


@dataclass(frozen=True)
class ToolBinding:
    """One served tool.

    ``call`` takes arguments that ``input_validator`` accepted and returns the handler's
    result in wire form (aliases, JSON types), still to be checked by ``output_validator``.
    ``document`` is the exact contract; ``served_input_schema``, when set, is the
    projection tools/list serves instead of its inputSchema (codegen/projection.py).
    ``input_model`` names the request model in the tool's generated models module.
    """

    document: Mapping[str, Any]
    input_model: str
    summary: str = ""
    served_input_schema: Mapping[str, Any] | None = None
    # The outputSchema wraps the tool's value as {"result": value} (FastMCP's
    # x-fastmcp-wrap-result); the text content then carries the value itself.
    wraps_result: bool = False

    @property
    def name(self) -> str:
        return str(self.document["name"])

    @cached_property
    def input_validator(self) -> Validator:
        from schemux.validation import contract_validator

        return contract_validator(self.document["inputSchema"])

    @cached_property
    def output_validator(self) -> Validator:
        from schemux.validation import contract_validator

        return contract_validator(self.document["outputSchema"], results=True)

    @cached_property
    def handler(self) -> BoundHandler[Any, Any]:
        """The tool's handler and request model, imported now if not yet."""
        models = importlib.import_module(f"schemux.generated.models.{self.name}")
        module = importlib.import_module(f"schemux.handlers.{self.name}")
        request_model: type[BaseModel] = getattr(models, self.input_model)
        # codegen names the model; the handler is typed against it (mypy checks that):
        # the two must be the same class, or the handler would get what it does not expect
        declared = typing.get_type_hints(module.handle).get("request")
        if declared is not request_model:
            raise TypeError(
                f"schemux.handlers.{self.name}.handle takes {declared!r}, "
                f"not the generated {self.input_model}"
            )
        return BoundHandler(request_model, module.handle)

    async def call(self, context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.handler.call(context, arguments)

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
