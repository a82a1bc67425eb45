"""Panes and programs as MCP resources, through real MCP clients against real tmux: the
templates, exact reads, completion of ids, subscriptions (2026-07-28 ``subscriptions/listen``
and the handshake era's ``resources/subscribe``) and what they leave behind, hostile URIs,
and the links tool results give to them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from schemux.config import Settings
from schemux.domain.resource_uris import pane_uri, program_uri
from schemux.generated.bindings import BINDINGS
from schemux.serving.resources import RESOURCE_NOT_FOUND
from schemux.serving.selection import select
from schemux.serving.server import build_server
from schemux.serving.state import ServingState
from tests.conftest import STDIO_WAIT_CEILING, stdio_parameters
from tests.contexts import client_of
from tests.support import (
    Pane,
    call,
    call_error,
    new_pane,
    tmux,
    until,
    watching_clients,
)
from tests.test_http import serve

pytestmark = pytest.mark.anyio


@pytest.fixture
async def context(anyio_backend: str, tmux_socket: str) -> AsyncIterator[ServingState]:
    context = ServingState(Settings(socket_name=tmux_socket, wait_ceiling=STDIO_WAIT_CEILING))
    try:
        yield context
    finally:
        await context.close()


@pytest.fixture
async def client(context: ServingState) -> AsyncIterator[Client]:
    """A 2026-07-28 client in this process, with no response cache (each read is read)."""
    async with client_of(context, BINDINGS, cache=None) as client:
        yield client


def linked_sessions(pane: Pane) -> str:
    return tmux(
        pane.socket_name, "display-message", "-p", "-t", pane.pane_id,
        "#{window_linked_sessions_list}",
    ).strip()  # fmt: skip


async def read_text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    [content] = result.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.uri == uri
    assert content.mime_type == "text/plain"
    return content.text


async def test_the_server_declares_resources_with_subscriptions_and_completions(
    client: Client,
) -> None:
    capabilities = client.server_capabilities
    assert capabilities.resources is not None
    assert capabilities.resources.subscribe is True
    assert capabilities.completions is not None


async def test_templates_are_a_panes_screen_scrollback_and_picture_and_a_programs_output(
    client: Client,
) -> None:
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == [
        "tmux://local/pane/{pane_id}/screen",
        "tmux://local/pane/{pane_id}/scrollback",
        "tmux://local/pane/{pane_id}/picture",
        "tmux://local/program/{program_id}/output",
    ]
    assert [t.mime_type for t in templates] == [
        "text/plain",
        "text/plain",
        "image/png",
        "text/plain",
    ]
    assert all(t.description for t in templates)


async def test_a_panes_screen_and_scrollback_read_exactly_as_capture_pane_gives_them(
    client: Client, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket, height=10)
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "seq 1 40; echo 'tab\there é'", "Enter")
    await until(lambda: "tab" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id))
    screen = await call(client, "capture_pane", pane_id=pane.pane_id)
    assert await read_text(client, pane_uri("local", pane.pane_id)) == screen["result"]
    everything = await call(
        client, "capture_pane", pane_id=pane.pane_id, start=-10000, max_lines=None
    )
    scrollback = await read_text(client, pane_uri("local", pane.pane_id, "scrollback"))
    assert scrollback == everything["result"]
    assert scrollback.splitlines()[1:41] == [str(n) for n in range(1, 41)]


async def test_resources_list_names_each_pane_and_program(client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    started = await call(client, "start_program", argv=["sleep", "30"])
    listed = {resource.uri for resource in (await client.list_resources()).resources}
    assert pane_uri("local", pane.pane_id) in listed
    assert pane_uri("local", pane.pane_id, "scrollback") in listed
    assert program_uri("local", started["programId"]) in listed
    assert not any("_schemux" in uri for uri in listed)
    await call(client, "stop_program", programId=started["programId"])


async def test_ids_are_completed_from_the_live_server(client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    ref = types.ResourceTemplateReference(
        type="ref/resource", uri="tmux://local/pane/{pane_id}/screen"
    )
    completion = (await client.complete(ref, {"name": "pane_id", "value": "%"})).completion
    assert pane.pane_id in completion.values
    assert all(value.startswith("%") for value in completion.values)
    numbers = [int(value[1:]) for value in completion.values]  # newest first: a page of a
    assert numbers == sorted(numbers, reverse=True)  # busy server holds the panes made last
    only = await client.complete(ref, {"name": "pane_id", "value": pane.pane_id})
    assert pane.pane_id in only.completion.values
    started = await call(client, "start_program", argv=["sleep", "30"])
    programs = types.ResourceTemplateReference(
        type="ref/resource", uri="tmux://local/program/{program_id}/output"
    )
    found = await client.complete(programs, {"name": "program_id", "value": "p"})
    assert started["programId"] in found.completion.values
    none = await client.complete(ref, {"name": "program_id", "value": ""})
    assert none.completion.values == []
    await call(client, "stop_program", programId=started["programId"])


HOSTILE_URIS = [
    "tmux://elsewhere/pane/%250/screen",
    "tmux://local/pane/%0/screen",
    "tmux://local/pane/%2500%00/screen",
    "tmux://local/pane/%250\x00/screen",
    "tmux://local/pane/../../etc/passwd",
    "tmux://local/pane/%2e%2e/screen",
    "tmux://local/pane/%250/screen?x",
    "tmux://local/pane/%25" + "9" * 5000 + "/screen",
    "file:///etc/passwd",
    "tmux://local/program/p;touch%20x/output",
]


@pytest.mark.parametrize("uri", HOSTILE_URIS)
async def test_a_hostile_uri_is_refused_saying_why(client: Client, uri: str) -> None:
    with pytest.raises(MCPError) as refused:
        await client.read_resource(uri)
    assert refused.value.error.code == types.INVALID_PARAMS
    assert refused.value.error.message.startswith("uri: ")


async def test_a_pane_or_program_that_is_not_there_is_not_found(client: Client) -> None:
    for uri in (pane_uri("local", "%999999"), program_uri("local", "p0123456789ab")):
        with pytest.raises(MCPError) as missing:
            await client.read_resource(uri)
        assert missing.value.error.code == RESOURCE_NOT_FOUND
        assert uri in missing.value.error.message


async def test_a_listen_subscription_sees_each_pane_change_and_leaves_nothing(
    client: Client, context: ServingState, tmux_socket: str
) -> None:
    """Each change is told: a pane's watch wakes only on its output (no poll would tell
    it otherwise). How soon is latency, measured by bench/resources.py (at most 20 ms
    over tmux's own %output), not here, where a loaded machine sets it."""
    pane = new_pane(tmux_socket)
    uri = pane_uri("local", pane.pane_id)
    await read_text(client, uri)  # schemux's shared control client runs from here on
    clients_before, sessions_before = watching_clients(tmux_socket), linked_sessions(pane)
    missing = pane_uri("local", "%999999")
    async with client.listen(resource_subscriptions=[uri, missing]) as subscription:
        assert subscription.honored.resource_subscriptions == [uri]
        assert context.resource_watches.watching == 1
        for word in ("first", "second"):
            tmux(tmux_socket, "send-keys", "-t", pane.pane_id, f"echo {word}", "Enter")
            with anyio.fail_after(10):
                event = await subscription.__anext__()
            assert event == ResourceUpdated(uri)
            with anyio.fail_after(10):
                while word not in await read_text(client, uri):
                    await subscription.__anext__()
    await until(lambda: context.resource_watches.watching == 0)
    await until(lambda: watching_clients(tmux_socket) == clients_before)
    assert linked_sessions(pane) == sessions_before


async def test_a_listen_with_a_hostile_uri_is_refused(client: Client) -> None:
    with pytest.raises(MCPError) as refused:
        async with client.listen(resource_subscriptions=["tmux://local/pane/..%2F/screen"]):
            pass
    assert refused.value.error.code == types.INVALID_PARAMS


async def test_updates_are_coalesced_to_a_few_a_second(client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket)
    uri = pane_uri("local", pane.pane_id)
    async with client.listen(resource_subscriptions=[uri]) as subscription:
        tmux(
            tmux_socket, "send-keys", "-t", pane.pane_id,
            "for i in $(seq 1 200); do echo $i; sleep 0.005; done", "Enter",
        )  # fmt: skip
        seen = 0
        with anyio.move_on_after(1.0):
            async for _ in subscription:
                seen += 1
    assert 1 <= seen <= 6


async def test_a_subscription_to_a_pane_that_closes_is_told_and_ends(
    client: Client, context: ServingState, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    uri = pane_uri("local", pane.pane_id)
    async with client.listen(resource_subscriptions=[uri]) as subscription:
        tmux(tmux_socket, "kill-pane", "-t", pane.pane_id)
        with anyio.fail_after(5):
            assert await subscription.__anext__() == ResourceUpdated(uri)
        await until(lambda: context.resource_watches.watching == 0)
        with pytest.raises(MCPError) as gone:
            await client.read_resource(uri)
        assert gone.value.error.code == RESOURCE_NOT_FOUND


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_handshake_clients_subscribe_unsubscribe_and_leave_nothing_when_gone(
    context: ServingState, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    uri = pane_uri("local", pane.pane_id)
    updated: list[str] = []
    told = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(message.params.uri)
            told.set()

    server = build_server(context, BINDINGS)
    async with Client(server, mode="legacy", message_handler=on_message, cache=None) as client:
        await read_text(client, uri)  # schemux's shared control client runs from here on
        clients_before = watching_clients(tmux_socket)
        await client.session.subscribe_resource(uri)
        await client.session.subscribe_resource(uri)  # once is enough: a second is the same
        assert context.resource_watches.watching == 1
        tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "echo legacy", "Enter")
        with anyio.fail_after(5):
            await told.wait()
        assert set(updated) == {uri}
        await client.session.unsubscribe_resource(uri)
        assert context.resource_watches.watching == 0
        with pytest.raises(MCPError) as refused:
            await client.session.subscribe_resource("tmux://local/pane/%251/screen/..")
        assert refused.value.error.code == types.INVALID_PARAMS
        with pytest.raises(MCPError) as missing:
            await client.session.subscribe_resource(pane_uri("local", "%999999"))
        assert missing.value.error.code == RESOURCE_NOT_FOUND
        await client.session.subscribe_resource(uri)
        assert context.resource_watches.watching == 1
    # the client went without unsubscribing: its connection's end released the watch
    await until(lambda: context.resource_watches.watching == 0)
    await until(lambda: watching_clients(tmux_socket) == clients_before)


async def test_a_programs_output_reads_byte_exact_as_read_program_reassembles_it(
    programs: tuple[Client, ServingState],
) -> None:
    """On this machine and over ssh (the URI's host is then the destination)."""
    client, context = programs
    script = (
        "printf 'caf\\303\\251 \\377\\376 bad bytes\\n'; "
        'for i in $(seq 1 3000); do echo "line $i of the program\'s output"; done; '
        "printf 'no newline at the end'"
    )
    started = await call(client, "start_program", argv=["sh", "-c", script])
    program_id = started["programId"]
    pieces, cursor = [], 0
    while True:
        page = await call(
            client, "read_program", programId=program_id, cursor=cursor, timeoutMs=5000
        )
        pieces.append(page["text"])
        cursor = page["cursor"]
        if page["ended"]:
            break
    whole = "".join(pieces)
    assert whole.startswith("café \ufffd\ufffd bad bytes\n")
    assert whole.endswith("line 3000 of the program's output\nno newline at the end")
    assert await read_text(client, program_uri(context.services.host_name, program_id)) == whole


async def test_a_program_subscription_is_told_of_its_output_and_its_end(
    client: Client, context: ServingState
) -> None:
    started = await call(
        client, "start_program", argv=["sh", "-c", "sleep 0.3; echo one; sleep 0.3; echo two"]
    )
    uri = program_uri("local", started["programId"])
    async with client.listen(resource_subscriptions=[uri]) as subscription:
        with anyio.fail_after(10):
            while "two" not in await read_text(client, uri):
                assert await subscription.__anext__() == ResourceUpdated(uri)
        await until(lambda: context.resource_watches.watching == 0)
    assert await read_text(client, uri) == "one\ntwo\n"


async def test_run_program_links_to_its_whole_output_when_its_tail_is_cut(
    client: Client,
) -> None:
    result = await client.call_tool(
        "run_program", {"argv": ["seq", "1", "500"], "maxLines": 5, "timeoutMs": 20000}
    )
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["output"] == "496\n497\n498\n499\n500"
    [link] = [block for block in result.content if block.type == "resource_link"]
    assert isinstance(link, types.ResourceLink)
    assert link.uri.startswith("tmux://local/program/p")
    text = await read_text(client, link.uri)
    assert text == "".join(f"{n}\n" for n in range(1, 501))
    whole = await client.call_tool("run_program", {"argv": ["echo", "short"], "timeoutMs": 20000})
    assert [block.type for block in whole.content] == ["text"]


async def test_capture_pane_links_to_the_scrollback_beyond_its_lines(
    client: Client, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket, height=5)
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "seq 1 30", "Enter")
    await until(lambda: "30" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id))
    result = await client.call_tool(
        "capture_pane", {"pane_id": pane.pane_id, "start": -1000, "max_lines": 5}
    )
    [link] = [block for block in result.content if block.type == "resource_link"]
    assert isinstance(link, types.ResourceLink)
    assert link.uri == pane_uri("local", pane.pane_id, "scrollback")
    assert "\n1\n2\n" in await read_text(client, link.uri)
    everything = await client.call_tool(
        "capture_pane", {"pane_id": pane.pane_id, "start": -1000, "max_lines": 1000}
    )
    assert [block.type for block in everything.content] == ["text"]


@pytest.mark.parametrize(
    ("tools", "kinds"),
    [
        (["signal_channel"], ()),
        (["run_command", "send_keys"], ()),
        (["capture_pane"], ("pane",)),
        (["wait_for_text"], ("pane",)),
        (["picture_pane"], ("picture",)),
        (["programs"], ("program",)),
        (["capture", "pictures", "stop_program"], ("pane", "picture", "program")),
    ],
)
async def test_resources_follow_the_tool_selection(
    context: ServingState, tmux_socket: str, tools: list[str], kinds: tuple[str, ...]
) -> None:
    """``--tools signal_channel`` served every pane's screen: a kind of resource is served
    only with a tool that reads it (or links to it); a pane's picture only with the tool
    that draws one."""
    pane = new_pane(tmux_socket)
    async with client_of(context, BINDINGS) as every_tool:
        started = await call(every_tool, "start_program", argv=["sleep", "30"])
    program = started["programId"]
    served = select(BINDINGS, tools, several_hosts=False)
    uris = {
        "pane": pane_uri("local", pane.pane_id),
        "picture": pane_uri("local", pane.pane_id, "picture"),
        "program": program_uri("local", program),
    }
    async with client_of(context, served, cache=None) as client:
        if not kinds:
            assert client.server_capabilities.resources is None
            assert client.server_capabilities.completions is None
            for method in (client.list_resources, client.list_resource_templates):
                with pytest.raises(MCPError) as unserved:
                    await method()
                assert unserved.value.error.code == types.METHOD_NOT_FOUND
            return
        templates = (await client.list_resource_templates()).resource_templates
        assert {_template_kind(t.uri_template) for t in templates} == set(kinds)
        listed = {resource.uri for resource in (await client.list_resources()).resources}
        for kind, uri in uris.items():
            assert (uri in listed) == (kind in kinds), (kind, listed)
            if kind in kinds:
                read = await client.read_resource(uri)
                wanted = "image/png" if kind == "picture" else "text/plain"
                assert read.contents[0].mime_type == wanted
                continue
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            assert refused.value.error.code == types.INVALID_PARAMS
            reads = (
                "is a pane's picture, and this server serves no tool that draws one"
                if kind == "picture"
                else f"is a {kind}'s, and this server serves no tool that reads a {kind}"
            )
            assert refused.value.error.message == (
                f"uri: {uri} {reads} (--tools), so no {kind} resources"
            )
            with pytest.raises(MCPError):
                async with client.listen(resource_subscriptions=[uri]):
                    pass


def _template_kind(uri_template: str) -> str:
    """The kind of resource a template names: pane, picture (a pane's) or program."""
    return "picture" if uri_template.endswith("/picture") else uri_template.split("/")[3]


async def test_resources_over_stdio(tmux_socket: str, anyio_backend: str) -> None:
    pane = new_pane(tmux_socket)
    uri = pane_uri("local", pane.pane_id)
    parameters = stdio_parameters("--socket-name", tmux_socket)
    async with Client(parameters, cache=None) as client:
        screen = await call(client, "capture_pane", pane_id=pane.pane_id)
        assert await read_text(client, uri) == screen["result"]
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "echo over-stdio", "Enter")
            with anyio.fail_after(5):
                assert await subscription.__anext__() == ResourceUpdated(uri)


async def test_resources_over_http(tmux_socket: str, anyio_backend: str) -> None:
    pane = new_pane(tmux_socket)
    uri = pane_uri("local", pane.pane_id)
    served = await serve(tmux_socket, "--no-audit")
    try:
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(served.url, http_client=http), cache=None) as client,
        ):
            templates = (await client.list_resource_templates()).resource_templates
            assert len(templates) == 3  # the default tools draw no picture
            screen = (await call(client, "capture_pane", pane_id=pane.pane_id))["result"]
            assert await read_text(client, uri) == screen
            clients_before = watching_clients(tmux_socket)
            async with client.listen(resource_subscriptions=[uri]) as subscription:
                assert watching_clients(tmux_socket) == clients_before + 1
                tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "echo over-http", "Enter")
                with anyio.fail_after(5):
                    assert await subscription.__anext__() == ResourceUpdated(uri)
            # the stream's end (the client aborts its response) ends the watch
            await until(lambda: watching_clients(tmux_socket) == clients_before)
            with pytest.raises(MCPError) as refused:
                await client.read_resource("tmux://local/pane/%0/screen")
            assert refused.value.error.code == types.INVALID_PARAMS
    finally:
        served.process.terminate()
        await served.process.wait()


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_over_http_a_program_belongs_to_the_session_that_started_it(
    tmux_socket: str, anyio_backend: str
) -> None:
    """Another session listed a program's id in resources/list, and read or stopped it:
    now, to any other session (or a stateless client), it is not there."""
    served = await serve(tmux_socket, "--no-audit")
    programs = types.ResourceTemplateReference(
        type="ref/resource", uri="tmux://local/program/{program_id}/output"
    )
    try:
        async with (
            Client(served.url, mode="legacy", cache=None) as owner,
            Client(served.url, mode="legacy", cache=None) as other,
            Client(served.url, cache=None) as stateless,  # 2026-07-28: no session
        ):
            started = await call(owner, "start_program", argv=["sleep", "30"])
            program, uri = started["programId"], program_uri("local", started["programId"])
            for stranger in (other, stateless):
                assert uri not in {r.uri for r in (await stranger.list_resources()).resources}
                for tool in ("read_program", "stop_program"):
                    refused = await call_error(stranger, tool, programId=program)
                    assert refused.startswith(f"no program {program!r}: it was never started")
                with pytest.raises(MCPError) as missing:
                    await stranger.read_resource(uri)
                assert missing.value.error.code == RESOURCE_NOT_FOUND
                if stranger is stateless:
                    async with stranger.listen(resource_subscriptions=[uri]) as listening:
                        assert not listening.honored.resource_subscriptions
                else:
                    with pytest.raises(MCPError) as unsubscribed:
                        await stranger.session.subscribe_resource(uri)
                    assert unsubscribed.value.error.code == RESOURCE_NOT_FOUND
                found = await stranger.complete(programs, {"name": "program_id", "value": "p"})
                assert program not in found.completion.values
                assert program not in json.dumps(await call(stranger, "tmux_snapshot"))
            assert uri in {r.uri for r in (await owner.list_resources()).resources}
            assert program in json.dumps(await call(owner, "tmux_snapshot"))  # its pane's
            assert (
                await owner.complete(programs, {"name": "program_id", "value": "p"})
            ).completion.values == [program]
            await read_text(owner, uri)
            assert (await call(owner, "stop_program", programId=program))["outcome"] == "stopped"
    finally:
        served.process.terminate()
        await served.process.wait()


async def test_subscriptions_to_one_pane_share_one_watch_until_the_last_ends(
    client: Client, context: ServingState, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    screen, scrollback = (
        pane_uri("local", pane.pane_id),
        pane_uri("local", pane.pane_id, "scrollback"),
    )
    async with client.listen(resource_subscriptions=[screen]) as first:
        async with client.listen(resource_subscriptions=[scrollback, screen]) as second:
            assert second.honored.resource_subscriptions == [scrollback, screen]
            assert context.resource_watches.watching == 1
            assert "_schemux" in linked_sessions(pane)  # the watch's link of the window
        assert context.resource_watches.watching == 1
        tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "echo still", "Enter")
        with anyio.fail_after(5):
            assert await first.__anext__() == ResourceUpdated(screen)
    await until(lambda: context.resource_watches.watching == 0)
    assert "_schemux" not in linked_sessions(pane)


async def test_schemux_ending_ends_every_watch_and_its_link(
    tmux_socket: str, anyio_backend: str
) -> None:
    pane = new_pane(tmux_socket)
    uri = pane_uri("local", pane.pane_id)
    context = ServingState(Settings(socket_name=tmux_socket))
    try:
        async with client_of(context, BINDINGS, cache=None) as client:
            await read_text(client, uri)
            clients_before = watching_clients(tmux_socket)
            async with client.listen(resource_subscriptions=[uri]):
                assert watching_clients(tmux_socket) == clients_before + 1
                await context.close()  # schemux ends with the subscription open
                assert context.resource_watches.watching == 0
                assert watching_clients(tmux_socket) < clients_before + 1
                assert "_schemux" not in linked_sessions(pane)
    finally:
        await context.close()


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_a_handshake_session_over_http_is_told_and_its_end_ends_the_watch(
    tmux_socket: str, anyio_backend: str
) -> None:
    pane = new_pane(tmux_socket)
    uri = pane_uri("local", pane.pane_id)
    told = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == uri:
            told.set()

    served = await serve(tmux_socket, "--no-audit")
    try:
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(
                streamable_http_client(served.url, http_client=http),
                mode="legacy",
                message_handler=on_message,
                cache=None,
            ) as client,
        ):
            await read_text(client, uri)  # schemux's shared control client runs from here on
            clients_before = watching_clients(tmux_socket)
            await client.session.subscribe_resource(uri)
            assert watching_clients(tmux_socket) == clients_before + 1
            tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "echo session", "Enter")
            with anyio.fail_after(5):
                await told.wait()
        # the session ended (the client's DELETE) with the subscription in place
        await until(lambda: watching_clients(tmux_socket) == clients_before)
        assert "_schemux" not in linked_sessions(pane)
    finally:
        served.process.terminate()
        await served.process.wait()


@pytest.mark.parametrize("value", ["\x00", "%1; kill-server", "%" + "9" * 10000, "#{pane_id}"])
async def test_completion_of_a_hostile_value_completes_nothing(client: Client, value: str) -> None:
    ref = types.ResourceTemplateReference(
        type="ref/resource", uri="tmux://local/pane/{pane_id}/screen"
    )
    completion = (await client.complete(ref, {"name": "pane_id", "value": value})).completion
    assert completion.values == []
    assert completion.total == 0


async def test_a_dead_panes_screen_is_still_read(client: Client, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command="echo last words; sleep 0.3", remain_on_exit=True)

    # tmux marks the pane dead at the end of its output, and draws "Pane is dead" once it
    # has reaped the process: tmux 3.3a at times only at a later SIGCHLD, seconds later
    # (once more than 20 s under six test workers), which a child of its own brings
    def drawn() -> bool:
        if "Pane is dead" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id):
            return True
        tmux(tmux_socket, "run-shell", "true")
        return False

    await until(drawn, timeout=20)
    screen = await read_text(client, pane_uri("local", pane.pane_id))
    assert screen == (await call(client, "capture_pane", pane_id=pane.pane_id))["result"]
    assert "Pane is dead" in screen.splitlines()[-1]
    # tmux scrolls the pane before it writes "Pane is dead" on the last row
    scrollback = await read_text(client, pane_uri("local", pane.pane_id, "scrollback"))
    assert scrollback.splitlines()[0] == "last words"
