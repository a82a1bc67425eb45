"""Who holds a client's resource subscriptions: a connection's or a listen stream's
``Subscriptions`` (each URI's release), and a listen stream's own bus (``PendingBus``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from mcp.server.subscriptions import InMemorySubscriptionBus, ServerEvent
from mcp.shared.subscriptions import ResourceUpdated


class Subscriptions:
    """One holder's subscriptions (a connection's or a listen stream's), by URI."""

    def __init__(self) -> None:
        self.releases: dict[str, Callable[[], Awaitable[None]]] = {}

    async def release(self, uri: str) -> None:
        release = self.releases.pop(uri, None)
        if release is not None:
            with anyio.CancelScope(shield=True):
                await release()

    async def close(self) -> None:
        for uri in list(self.releases):
            await self.release(uri)


class PendingBus(InMemorySubscriptionBus):
    """A listen stream's own bus: an update published before the stream listens (between
    its subscriptions' start and its acknowledgement) is held and delivered then."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[str, ServerEvent] = {}
        self._listening = False

    async def publish(self, event: ServerEvent) -> None:
        if not self._listening and isinstance(event, ResourceUpdated):
            self._held[event.uri] = event
            return
        await super().publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        unsubscribe = super().subscribe(listener)
        self._listening = True
        for event in self._held.values():
            listener(event)
        self._held.clear()
        return unsubscribe
