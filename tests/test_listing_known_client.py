"""The tests' in-memory client (``tests.contexts.client_of``) starts out knowing what
tools/list would tell it: each served tool's outputSchema, in every schema mode, so that
skipping the listing checks every result against exactly what schemux serves."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp_types import ListToolsResult

from schemux.config import SCHEMA_MODES, SchemaMode
from schemux.generated.bindings import BINDINGS
from schemux.serving.server import build_server
from tests.contexts import Contexts, client_of
from tests.support import call

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", SCHEMA_MODES)
async def test_what_it_knows_is_what_tools_list_serves(
    make_context: Contexts, main_tmux_socket: str, mode: SchemaMode
) -> None:
    context = make_context(socket_name=main_tmux_socket, schemas=mode)
    async with Client(build_server(context, BINDINGS)) as listing, client_of(context) as known:
        listed = {tool.name: tool.output_schema for tool in (await listing.list_tools()).tools}
        assert known.session._tool_output_schemas == listed
        assert set(known.session._tool_output_validators) == {
            name for name, schema in listed.items() if schema is not None
        }


async def test_a_result_is_checked_without_a_listing(
    make_context: Contexts, main_tmux_socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call validates its result with what it knew: it sends no tools/list."""
    context = make_context(socket_name=main_tmux_socket)
    sent: list[str] = []
    async with client_of(context) as known:
        listing = known.session.list_tools

        async def listed(**kwargs: Any) -> ListToolsResult:
            sent.append("tools/list")
            return await listing(**kwargs)

        monkeypatch.setattr(known.session, "list_tools", listed)
        assert isinstance((await call(known, "list_sessions"))["result"], list)
    assert sent == []
