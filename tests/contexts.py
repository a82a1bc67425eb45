"""The ServingStates the tests serve schemux with: made from settings in one place, each
closed when what made it ends, and one a module shares reset between its tests."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from mcp import Client
from referencing import Registry

from schemux.config import SchemaMode, Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.binding import ToolBinding
from schemux.serving.server import build_server
from schemux.serving.state import ServingState


class Contexts:
    """ServingStates made for a test (the ``make_context`` fixture) or a module, closed
    together, the newest first, by ``close`` (or at the end of ``async with``)."""

    def __init__(self) -> None:
        self._made: list[ServingState] = []
        self._shared: dict[Settings, ServingState] = {}

    def __call__(self, **settings: Any) -> ServingState:
        """A new context of ``Settings(**settings)``."""
        context = ServingState(Settings(**settings))
        self._made.append(context)
        return context

    def shared(self, **settings: Any) -> ServingState:
        """The one context of ``Settings(**settings)`` made here: its ssh master, its
        control clients and its owned session outlive a test, so a module's table of
        values pays for them once. The test using it resets it (``forget_calls``)."""
        key = Settings(**settings)
        context = self._shared.get(key)
        if context is None:
            context = self._shared[key] = self(**settings)
        return context

    async def close(self) -> None:
        while self._made:
            await self._made.pop().close()
        self._shared.clear()

    async def __aenter__(self) -> Contexts:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @asynccontextmanager
    async def shared_client(self, **settings: Any) -> AsyncIterator[Client]:
        """A new MCP session of the ``shared`` context of ``Settings(**settings)``, the
        cursors its calls leave forgotten when it ends (``forget_calls``)."""
        context = self.shared(**settings)
        try:
            async with client_of(context) as client:
                yield client
        finally:
            forget_calls(context)


def client_of(
    context: ServingState, bindings: Mapping[str, ToolBinding] = BINDINGS, **options: Any
) -> Client:
    """An MCP client of schemux serving ``bindings`` over ``context``, in this process
    (in memory); ``options``, the SDK client's."""
    return ListingKnownClient(context, bindings, **options)


class ListingKnownClient(Client):
    """An MCP client of schemux in this process that starts out knowing each served tool's
    outputSchema, as tools/list gives it, and its compiled validator, as a client that
    listed the tools earlier would: every result is still checked against the schema
    schemux serves, but a new session does not list the tools (17 ms of CPU) and compile
    a validator for each tool it calls (9 ms) again. The suite makes thousands of them."""

    def __init__(
        self, context: ServingState, bindings: Mapping[str, ToolBinding], **options: Any
    ) -> None:
        super().__init__(build_server(context, bindings), **options)
        self._mode = context.settings.schemas
        self._bindings = bindings

    async def __aenter__(self) -> ListingKnownClient:
        await super().__aenter__()
        # what ClientSession.list_tools would have absorbed (mcp 2.3's own attributes)
        schemas = self.session._tool_output_schemas
        validators = self.session._tool_output_validators
        for name, binding in self._bindings.items():
            if BINDINGS.get(name) is not binding:
                continue  # not the generated binding: the session lists it if it needs to
            schemas[name] = served_output_schema(self._mode, name)
            if (validator := output_validator(self._mode, name)) is not None:
                validators[name] = validator
        return self


@functools.cache
def served_output_schema(mode: SchemaMode, name: str) -> dict[str, Any] | None:
    """The outputSchema tools/list serves for the generated tool ``name`` in ``mode``."""
    schema: dict[str, Any] | None = BINDINGS[name].served_document(mode).get("outputSchema")
    return schema


@functools.cache
def output_validator(mode: SchemaMode, name: str) -> Validator | None:
    """The validator the SDK's client compiles for that outputSchema."""
    schema = served_output_schema(mode, name)
    if schema is None:
        return None
    kind = validator_for(schema)
    kind.check_schema(schema)
    validator: Validator = kind(schema, registry=Registry())
    return validator


def forget_calls(context: ServingState) -> None:
    """What one test's calls leave in a context they share with the next tests: its
    cursors (capture_since's and tmux_capture's) and the tmux servers' identities read
    for them. A shared context is for calls that start no program."""
    context.services.row_cursors.close()
    context.services.screens.close()
