"""The ServingStates the tests serve schemux with: made from settings in one place, each
closed when what made it ends, and one a module shares reset between its tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

from mcp import Client

from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
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


def client_of(context: ServingState) -> Client:
    """An MCP client of schemux serving ``context``, in this process (in memory)."""
    return Client(build_server(context, BINDINGS))


def forget_calls(context: ServingState) -> None:
    """What one test's calls leave in a context they share with the next tests: its
    cursors (capture_since's and tmux_capture's) and the tmux servers' identities read
    for them. A shared context is for calls that start no program."""
    context.services.row_cursors.close()
    context.services.screens.close()
