"""tools/list's answer, made once: the Tool models of a served tool set and schema mode,
and their wire form per protocol version, kept by the ``ServingState`` for every server
and session it serves.

The SDK (mcp 2.3) puts a handler's result in wire form anew for each request: it dumps
the result, then validates and dumps it again with the models of the request's protocol
version (``mcp_types.methods.serialize_server_result``, which leaves out what that
version does not have): about 6 ms of CPU for the listing of every tool, on every
tools/list. Here the wire form is made by those same steps once per protocol version and
kept as JSON; ``ListingAnswers``, a server middleware, answers a tools/list with it,
parsed anew for each answer, so that no answer shares an object with another or with
what is kept. A middleware that answers without calling on owns its result (the SDK's
``ServerRunner._on_request``): it takes over what the SDK does before the handler too,
so it answers only a request the SDK would have answered, and leaves every other (no
client info yet, params the SDK refuses, a cache hint set on the server) to the SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
import pydantic_core
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from schemux.config import SchemaMode
from schemux.serving.binding import ToolBinding

LIST_TOOLS = "tools/list"


@dataclass
class Listing:
    """The tools one server lists: their models (what the SDK's own handler answers with),
    and the wire form of that answer per protocol version, made when first asked for."""

    tools: list[types.Tool]
    # what the key's ids are of, held so that no id is reused while it is a key
    bindings: tuple[ToolBinding, ...]
    _wire: dict[str, bytes] = field(default_factory=dict)

    def result(self) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    def wire(self, version: str) -> bytes:
        """The JSON of the answer at protocol ``version``, as the SDK's runner shapes it
        (dumped, sieved by that version's models, and at 2026-07-28 a ``resultType``),
        but for the ``serverInfo`` stamp a 2026-07-28 answer carries (the server's own)."""
        kept = self._wire.get(version)
        if kept is None:
            dumped = self.result().model_dump(by_alias=True, mode="json", exclude_none=True)
            sieved = methods.serialize_server_result(LIST_TOOLS, version, dumped)
            if version in MODERN_PROTOCOL_VERSIONS and sieved.get("resultType") is None:
                sieved["resultType"] = "complete"
            kept = self._wire[version] = pydantic_core.to_json(sieved)
        return kept


class ToolListings:
    """The listings of one ``ServingState``, one per served tool set and schema mode."""

    def __init__(self) -> None:
        self._listings: dict[tuple[SchemaMode, tuple[tuple[str, int], ...]], Listing] = {}

    def listing(
        self,
        bindings: Mapping[str, ToolBinding],
        mode: SchemaMode,
        documents: Callable[[], Iterable[Mapping[str, Any]]],
    ) -> Listing:
        """The listing of ``bindings`` served in ``mode``; its Tool documents are
        ``documents()``, asked for the first time this set and mode are served."""
        key = (mode, tuple((name, id(binding)) for name, binding in bindings.items()))
        listing = self._listings.get(key)
        if listing is None:
            tools = [types.Tool.model_validate(document) for document in documents()]
            listing = self._listings[key] = Listing(tools, tuple(bindings.values()))
        return listing


class ListingAnswers:
    """The server middleware that answers ``server``'s tools/list with ``listing``'s
    wire form (the server's handler answers with ``listing.result()``)."""

    def __init__(self, server: Server[Any], listing: Listing) -> None:
        self._server = server
        self._listing = listing

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != LIST_TOOLS or not self._answerable(ctx):
            return await call_next(ctx)
        version = ctx.protocol_version
        answer: dict[str, Any] = pydantic_core.from_json(self._listing.wire(version))
        if version in MODERN_PROTOCOL_VERSIONS:
            answer["_meta"] = {types.SERVER_INFO_META_KEY: self._server.server_info_stamp}
        return answer

    def _answerable(self, ctx: ServerRequestContext[Any]) -> bool:
        """Whether the SDK would answer this request with its handler's result shaped
        by version alone: a request (not a notification) on a connection whose client
        has said who it is (the handshake's gate is open), params both the protocol
        version and the handler take, and no cache hint to add."""
        entry = self._server.get_request_handler(LIST_TOOLS)
        if entry is None or ctx.request_id is None or ctx.session.client_params is None:
            return False
        if LIST_TOOLS in self._server.cache_hints:
            return False
        try:
            methods.validate_client_request(LIST_TOOLS, ctx.protocol_version, ctx.params)
            entry.params_type.model_validate(ctx.params or {}, by_name=False)
        except (KeyError, ValueError):  # pydantic's ValidationError is a ValueError
            return False
        return True
