"""tools/list answered from the wire form a ServingState keeps (``serving.tools_list``):
exactly what the SDK sends, for every protocol version, tool selection and schema mode,
never another state's, selection's or version's, never an object another answer shares;
and what the SDK would refuse is left to it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server import Server
from mcp.server.caching import CacheHint
from mcp.server.connection import Connection
from mcp.server.runner import ServerRunner
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.transport_context import TransportContext
from mcp_types import methods
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from schemux.config import SchemaMode
from schemux.generated.bindings import BINDINGS
from schemux.serving.binding import ToolBinding
from schemux.serving.selection import select
from schemux.serving.server import build_server
from schemux.serving.tools_list import ListingAnswers
from tests.contexts import Contexts

pytestmark = pytest.mark.anyio

NEVER_STARTED = "schemux-test-never-started"  # no call is made: no tmux server starts
DEFAULT = select(BINDINGS, [], several_hosts=False)
SELECTIONS: Mapping[str, Mapping[str, ToolBinding]] = {
    "default": DEFAULT,
    "all": select(BINDINGS, ["all"], several_hosts=False),
    "one family": select(BINDINGS, ["inspect"], several_hosts=False),
}
MODES: tuple[SchemaMode, ...] = ("projected", "compact", "exact", "openai-strict")
CLIENT = {"name": "test-client", "version": "1.0"}


@dataclass
class Exchange:
    """The dispatch context of one request made in process: no channel back."""

    request_id: int | None = 1
    message_metadata: None = None
    transport: TransportContext = field(
        default_factory=lambda: TransportContext(kind="test", can_send_request=False)
    )
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    @property
    def can_send_request(self) -> bool:
        return False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


def connection(version: str, *, introduced: bool = True) -> Connection:
    """A connection at ``version`` whose client has said who it is (or, not
    ``introduced``, a handshake connection before its ``initialize``)."""
    if not introduced:
        return Connection.for_loop(Connection.from_envelope(version, None, {}).outbound)
    return Connection.from_envelope(version, CLIENT, {})


async def answer(
    server: Server[Any],
    version: str,
    params: Mapping[str, Any] | None = None,
    *,
    introduced: bool = True,
) -> dict[str, Any]:
    """The result dict the server's runner hands its transport for a tools/list (at
    2026-07-28, ``params`` in the request's envelope)."""
    if version in MODERN_PROTOCOL_VERSIONS:
        envelope = {
            types.PROTOCOL_VERSION_META_KEY: version,
            types.CLIENT_INFO_META_KEY: CLIENT,
            types.CLIENT_CAPABILITIES_META_KEY: {},
        }
        params = {**(params or {}), "_meta": envelope}
    runner = ServerRunner(server, connection(version, introduced=introduced), None)
    return await runner.on_request(Exchange(), "tools/list", params)


def sdk_alone(server: Server[Any]) -> Server[Any]:
    """``server`` as the SDK serves it: the same handlers, without ``ListingAnswers``."""
    plain: Server[Any] = Server("schemux", version=server.version)
    plain.middleware = [each for each in server.middleware if not isinstance(each, ListingAnswers)]
    plain.add_request_handler(
        "tools/list",
        types.PaginatedRequestParams,
        server.get_request_handler("tools/list").handler,  # type: ignore[union-attr]
    )
    plain.cache_hints = server.cache_hints
    return plain


async def test_every_listing_is_what_the_sdk_sends(make_context: Contexts) -> None:
    """Each selection in each mode at each protocol version, asked in turn of servers
    sharing their state, so that a listing kept for one and served for another shows."""
    for mode in MODES:
        state = make_context(socket_name=NEVER_STARTED, schemas=mode)
        servers = {name: build_server(state, chosen) for name, chosen in SELECTIONS.items()}
        for version in KNOWN_PROTOCOL_VERSIONS:
            for name, server in servers.items():
                got = await answer(server, version)
                assert got == await answer(sdk_alone(server), version), (mode, version, name)
                assert [tool["name"] for tool in got["tools"]] == list(SELECTIONS[name])
                outputs = [tool for tool in got["tools"] if "outputSchema" in tool]
                # what the modes and versions differ in is there to tell them apart
                assert bool(outputs) == (mode != "compact")
                modern = version in MODERN_PROTOCOL_VERSIONS
                assert (
                    {"resultType", "ttlMs", "_meta"} <= set(got)
                    if modern
                    else set(got) == {"tools"}
                )


async def test_a_listing_is_made_once_per_protocol_version_for_every_server_of_a_state(
    make_context: Contexts, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK validates and dumps the whole listing again on every tools/list (about
    6 ms of CPU); a state's servers and sessions make it once per protocol version."""
    sieved: list[str] = []
    sieve = methods.serialize_server_result

    def counted(method: str, version: str, data: Mapping[str, Any]) -> dict[str, Any]:
        if method == "tools/list":
            sieved.append(version)
        return sieve(method, version, data)

    monkeypatch.setattr(methods, "serialize_server_result", counted)
    state = make_context(socket_name=NEVER_STARTED)
    servers = [build_server(state, DEFAULT), build_server(state, DEFAULT)]
    for server in servers:
        for _ in range(3):
            for version in ("2025-06-18", "2026-07-28"):
                await answer(server, version)
    assert sorted(sieved) == ["2025-06-18", "2026-07-28"]


def test_the_tool_models_are_made_once_per_state_and_selection(
    make_context: Contexts, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    validate = types.Tool.model_validate

    def counted(document: Any, *args: Any, **kwargs: Any) -> types.Tool:
        made.append(document["name"])
        return validate(document, *args, **kwargs)

    monkeypatch.setattr(types.Tool, "model_validate", counted)
    state = make_context(socket_name=NEVER_STARTED)
    for _ in range(3):
        build_server(state, DEFAULT)
    assert sorted(made) == sorted(DEFAULT)
    build_server(state, SELECTIONS["one family"])  # another selection: its own models
    assert len(made) == len(DEFAULT) + len(SELECTIONS["one family"])
    build_server(make_context(socket_name=NEVER_STARTED), DEFAULT)  # another state: its own
    assert len(made) == 2 * len(DEFAULT) + len(SELECTIONS["one family"])


async def test_no_answer_shares_an_object_with_another(make_context: Contexts) -> None:
    server = build_server(make_context(socket_name=NEVER_STARTED), DEFAULT)
    for version in ("2025-11-25", "2026-07-28"):
        first = await answer(server, version)
        first["tools"][0]["inputSchema"]["properties"].clear()
        first["tools"].pop()
        first.get("_meta", {}).clear()
        again = await answer(server, version)
        assert again == await answer(sdk_alone(server), version)
        assert again["tools"][0]["inputSchema"]["properties"]
        assert len(again["tools"]) == len(DEFAULT)


@pytest.mark.parametrize(
    "asked",
    [
        pytest.param({"version": "2025-11-25", "introduced": False}, id="before-initialize"),
        pytest.param({"version": "2025-11-25", "params": {"cursor": 5}}, id="bad-cursor"),
        pytest.param({"version": "2026-07-28", "params": {"cursor": ["x"]}}, id="bad-cursor-2026"),
    ],
)
async def test_what_the_sdk_refuses_it_refuses_itself(
    make_context: Contexts, asked: dict[str, Any]
) -> None:
    server = build_server(make_context(socket_name=NEVER_STARTED), DEFAULT)
    errors: list[Exception] = []
    for serving in (server, sdk_alone(server)):
        with pytest.raises((MCPError, ValidationError)) as refused:
            await answer(
                serving,
                asked["version"],
                asked.get("params"),
                introduced=asked.get("introduced", True),
            )
        errors.append(refused.value)
    ours, theirs = errors
    if isinstance(ours, MCPError):
        assert isinstance(theirs, MCPError)
        assert ours.error == theirs.error
    else:
        assert isinstance(ours, ValidationError)
        assert isinstance(theirs, ValidationError)
        assert ours.errors() == theirs.errors()


async def test_a_cache_hint_set_on_the_server_is_in_the_answer(make_context: Contexts) -> None:
    server = build_server(make_context(socket_name=NEVER_STARTED), DEFAULT)
    server.cache_hints["tools/list"] = CacheHint(ttl_ms=60_000, scope="public")
    got = await answer(server, "2026-07-28")
    assert got["ttlMs"] == 60_000
    assert got == await answer(sdk_alone(server), "2026-07-28")
