"""One generic binding for every tool: its document, validators, models and handler.

``schemux.generated.bindings`` (written by codegen) lists the tools that have a handler
module; :func:`load_bindings` makes their bindings from the JSON codegen writes beside it
(the contracts, and what tools/list serves of each); the server only ever sees
bindings. What a call needs beyond the documents is made at the tool's first call, so
start-up (and tools/list) pays for none of it: the handler module
``schemux.handlers.<name>`` and its models ``schemux.generated.models.<name>`` are
imported, and the validators are built from each schema's own ``$schema``
(``schemux.serving.validation.contract_validator``), the arguments' from the contract with its
overlay's checks.
"""

from __future__ import annotations

import copy
import importlib
import importlib.resources
import json
import typing
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from schemux.config import SchemaMode
from schemux.serving.host_addressing import HostChoice

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from schemux.domain.call import Call

# How tools/list serves each tool's schemas: "projected" (the inputSchema every provider
# takes), "compact" (that, without the outputSchema), "exact" (the contract's schemas),
# "openai-strict" (the inputSchema OpenAI's strict mode takes). Every mode but "compact"
# serves the contract's outputSchema.

# The package codegen writes: the tools' models, their bindings, and the JSON they are
# made from.
GENERATED_PACKAGE = "schemux.generated"

RequestT = TypeVar("RequestT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True)
class BoundHandler(Generic[RequestT, ResultT]):
    """A handler with the model of its request: wire arguments in, wire result out."""

    request_model: type[RequestT]
    handle: Callable[[Call, RequestT], Awaitable[ResultT]]

    async def call(self, call: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        # By wire names only: a property the schema lets through under a field's Python
        # name is not that field.
        request = self.request_model.model_validate(arguments, by_name=False)
        result = await self.handle(call, request)
        # A RootModel dumps as Any; every outputSchema's root is an object (codegen checks
        # that), and the output validator checks the result anyway.
        wire: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return wire


@dataclass(frozen=True)
class ToolBinding:
    """One served tool.

    ``call`` takes arguments that ``input_validator`` accepted and returns the handler's
    result in wire form (aliases, JSON types), still to be checked by ``output_validator``.
    ``document`` is the exact contract, which validates every call (with ``checks``)
    and result; ``listed``
    is the document as tools/list says it (its overlay merged, no ``_meta``), and
    ``advice`` the sentences added to its description when the tools each needs are
    served. ``served_input_schema``, when set, is the projection served by default
    (codegen/projection.py); ``strict_input_schema`` the one served with
    ``openai-strict``, where a null at one of ``absent_when_null`` means absent.
    ``input_model`` names the request model in the tool's generated models module.
    ``checks`` are the overlay's additions to the contract (JSON Patch ``add`` edits):
    its checks (never served) and its own arguments (served, through ``listed``); calls
    are validated against the contract with them.
    """

    document: Mapping[str, Any]
    input_model: str
    listed: Mapping[str, Any] | None = None
    summary: str = ""
    served_input_schema: Mapping[str, Any] | None = None
    strict_input_schema: Mapping[str, Any] | None = None
    absent_when_null: tuple[str, ...] = ()
    advice: tuple[tuple[tuple[str, ...], str], ...] = ()
    checks: tuple[Mapping[str, Any], ...] = ()
    # The outputSchema wraps the tool's value as {"result": value} (FastMCP's
    # x-fastmcp-wrap-result); the text content then carries the value itself.
    wraps_result: bool = False

    @property
    def name(self) -> str:
        return str(self.document["name"])

    @cached_property
    def validating_input_schema(self) -> Mapping[str, Any]:
        """The inputSchema every call is validated against: the contract's, with its
        overlay's checks and its own arguments (``force``, say) added."""
        schema: Mapping[str, Any] = edited(self.document, self.checks)["inputSchema"]
        return schema

    @cached_property
    def input_validator(self) -> Validator:
        from schemux.serving.validation import contract_validator

        return contract_validator(self.validating_input_schema)

    @cached_property
    def output_validator(self) -> Validator:
        from schemux.serving.validation import contract_validator

        return contract_validator(self.document["outputSchema"], results=True)

    @cached_property
    def handler(self) -> BoundHandler[Any, Any]:
        """The tool's handler and request model, imported now if not yet."""
        models = importlib.import_module(f"{GENERATED_PACKAGE}.models.{self.name}")
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

    async def call(self, call: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.handler.call(call, arguments)

    @property
    def declared_arguments(self) -> frozenset[str]:
        """The argument names the contract declares (with its overlay's own), in any of
        its forms (a root ``oneOf``, ``anyOf`` or ``allOf``: each form's properties)."""
        schema = self.validating_input_schema
        forms = [
            schema,
            *(form for key in ("oneOf", "anyOf", "allOf") for form in schema.get(key, ())),
        ]
        return frozenset(name for form in forms for name in form.get("properties", {}))

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

    def served_document(
        self,
        mode: SchemaMode = "projected",
        served: Collection[str] | None = None,
        hosts: HostChoice | None = None,
    ) -> dict[str, Any]:
        """The Tool document tools/list serves in ``mode`` when the tools ``served`` are
        (all when None; advice needing another is left out). Every mode but ``compact``
        carries the exact outputSchema, which clients check results against (a model
        never sees it); ``compact`` saves its bytes for clients that never read it. With
        ``hosts`` (several configured), the inputSchema also takes ``host``."""
        document = self._served_document(mode, served)
        if hosts is not None:
            document["inputSchema"] = hosts.with_host(
                document["inputSchema"], strict=mode == "openai-strict"
            )
        return document

    def _served_document(self, mode: SchemaMode, served: Collection[str] | None) -> dict[str, Any]:
        document = dict(self.listed if self.listed is not None else self.document)
        document.pop("_meta", None)
        advice = [
            text for needs, text in self.advice if served is None or set(needs) <= set(served)
        ]
        if advice:
            document["description"] = "\n\n".join([str(document.get("description", "")), *advice])
        if mode == "exact":
            return document
        if mode == "compact":
            document.pop("outputSchema", None)
        if mode == "openai-strict" and self.strict_input_schema is not None:
            document["inputSchema"] = dict(self.strict_input_schema)
        elif mode != "openai-strict" and self.served_input_schema is not None:
            document["inputSchema"] = dict(self.served_input_schema)
        return document

    def wire_arguments(self, arguments: dict[str, Any], mode: SchemaMode) -> dict[str, Any]:
        """``arguments`` as the exact contract reads them: with ``openai-strict``, a null
        where the contract has an optional argument that is never null is that argument
        absent (strict mode makes the caller send every argument)."""
        if mode != "openai-strict" or not self.absent_when_null:
            return arguments
        cleaned = copy.deepcopy(arguments)
        for path in self.absent_when_null:
            _drop_null(cleaned, path.replace("[]", ".[]").split("."))
        return cleaned


def _drop_null(value: Any, parts: list[str]) -> None:
    """Remove the null at ``parts`` ("[]" steps into every item of a list) in ``value``."""
    head, rest = parts[0], parts[1:]
    if head == "[]":
        for item in value if isinstance(value, list) else ():
            _drop_null(item, rest)
    elif isinstance(value, dict) and head in value:
        if not rest:
            if value[head] is None:
                del value[head]
        else:
            _drop_null(value[head], rest)


@dataclass(frozen=True)
class HandledTool:
    """A tool that has a handler module, as ``schemux.generated.bindings`` lists it."""

    name: str
    input_model: str
    wraps_result: bool = False


def load_bindings(handled: Iterable[HandledTool]) -> dict[str, ToolBinding]:
    """The binding of each ``handled`` tool, in that order, from the package data codegen
    writes: ``contracts.json`` (the exact documents), ``serving.json`` (per tool: the
    overlay as edits over its contract, summary, advice, projections) and ``checks.json``
    (per tool with any: its overlay's checks as edits over its contract)."""
    contracts, serving = generated_json("contracts.json"), generated_json("serving.json")
    checks = generated_json("checks.json")
    bindings: dict[str, ToolBinding] = {}
    for tool in handled:
        document, served = contracts[tool.name], serving[tool.name]
        bindings[tool.name] = ToolBinding(
            document=document,
            input_model=tool.input_model,
            listed=edited(document, served["edits"]),
            summary=served["summary"],
            served_input_schema=served.get("projectedInputSchema"),
            strict_input_schema=served["strictInputSchema"],
            absent_when_null=tuple(served["absentWhenNull"]),
            advice=tuple((tuple(each["needs"]), each["text"]) for each in served["advice"]),
            wraps_result=tool.wraps_result,
            checks=tuple(checks.get(tool.name, ())),
        )
    return bindings


def generated_json(name: str) -> Any:
    """The JSON file ``name`` that codegen writes into the generated package (package
    data, read where the package is installed: a wheel, or the source tree)."""
    return json.loads(importlib.resources.files(GENERATED_PACKAGE).joinpath(name).read_bytes())


def edited(document: Mapping[str, Any], edits: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``document`` with the JSON Patch (RFC 6902) ``edits`` made that codegen writes:
    ``add`` and ``remove`` of object members, ``replace`` of a member or an array item.
    ``document`` is left as it is; the result shares every part the edits do not touch."""
    result = dict(document)
    for edit in edits:
        parts = [part.replace("~1", "/").replace("~0", "~") for part in edit["path"].split("/")[1:]]
        result = _edited_at(result, parts, edit)
    return result


def _edited_at(value: Any, parts: list[str], edit: Mapping[str, Any]) -> Any:
    """A copy of the object or array ``value`` with ``edit`` made at ``parts`` below it."""
    changed: Any = list(value) if isinstance(value, list) else dict(value)
    key: int | str = int(parts[0]) if isinstance(value, list) else parts[0]
    if len(parts) > 1:
        changed[key] = _edited_at(value[key], parts[1:], edit)
    elif edit["op"] == "remove":
        del changed[key]
    else:
        changed[key] = edit["value"]
    return changed
