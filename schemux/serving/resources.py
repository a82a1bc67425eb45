"""Panes and programs as MCP resources: listing, templates, reads, completion of ids, and
subscriptions (``resources/subscribe`` for handshake-era clients, ``subscriptions/listen``
for 2026-07-28 ones).

The URIs are ``domain.resource_uris``'s; reads are exact: a pane's screen is the text
``capture_pane`` returns for it (its scrollback: that of ``capture_pane`` with all its
history; its picture: the PNG ``picture_pane`` draws); a program's output is its whole text, as
``read_program``'s pages put together give it. A URI that does not parse is refused with
``INVALID_PARAMS`` saying why; one naming no pane or program here, with
``RESOURCE_NOT_FOUND``. A subscription is a watch (``domain.resource_watch``) held by the
client's connection (``resources/subscribe``; the connection's end releases it) or by its
listen stream (the stream's end does).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from schemux.audit.recordings import MIME_TYPE as RECORDING
from schemux.audit.recordings import Recordings
from schemux.calls.sessions import session_of
from schemux.domain.call import Call
from schemux.domain.resource_uris import (
    PANE_VIEWS,
    ResourceAddress,
    ResourceUriError,
    call_recording_uri,
    pane_uri,
    parse,
    program_uri,
    template,
)
from schemux.domain.resource_watch import Follow, follow_pane, follow_program
from schemux.errors import SchemuxError
from schemux.generated.tool_facts import RESOURCE_READERS
from schemux.names import OWNED_SESSION
from schemux.panes.targets import PaneRow, PaneTarget, resolve_pane
from schemux.programs.output import text_at
from schemux.serving.state import ServingState
from schemux.serving.subscriptions import PendingBus, Subscriptions
from schemux.tmux.format import query
from schemux.tmux.owned_session import is_control_window

logger = logging.getLogger("schemux")

RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for a resource that is not there
MAX_COMPLETIONS = 100  # the most values a completion/complete result may carry
MAX_LISTENERS = 256  # subscriptions/listen streams open at once
TEMPLATE_PAGE_HOSTS = 100  # hosts whose templates one resources/templates/list page holds
RESOURCE_PAGE_HOSTS = 10  # hosts whose resources one resources/list page holds, read at once
_HOSTS_CURSOR = "hosts-from-"
TEXT = "text/plain"
PNG = "image/png"
_CONNECTION_KEY = "schemux.resource_subscriptions"

Handler = Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]
# a resource request's handler, given the request as a call (its session's, no audit)
CallHandler = Callable[[Call, ServerRequestContext[Any], Any], Awaitable[Any]]

_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "screen": "the pane's visible screen, one line per row, as capture_pane gives it",
        "scrollback": "the pane's history and screen, one line per row, as capture_pane "
        "gives them with all the history",
        "picture": "the pane's screen as it looks (colours, cursor), a PNG as picture_pane "
        "draws it",
        "output": "all the program printed, as text (escape sequences removed), as "
        "read_program's pages put together give it",
        "recording": "an asciicast v3 recording, with its timing: what the terminal was "
        "sent, its resizes and exit (schemux replay plays it)",
    }
)


def _page_start(cursor: str | None, hosts: int, method: str) -> int:
    """The index (among the configured hosts) of the first host of the page ``cursor``
    asks for; a cursor ``method`` did not give is refused."""
    if cursor is None:
        return 0
    number = cursor.removeprefix(_HOSTS_CURSOR)
    if number != cursor and re.fullmatch("[1-9][0-9]{0,8}", number) and int(number) < hosts:
        return int(number)
    raise MCPError(
        types.INVALID_PARAMS,
        f"cursor {cursor[:80]!r} is not one that {method} gave: list again without a cursor",
    )


class ResourceService:
    """The resource requests of one server, over ``state``'s hosts: each host's tmux
    server and programs, under URIs that name the host; of the ``kinds`` (pane,
    program) that a served tool reads. Each request is served as a call (``Call``: its
    MCP session's programs alone are there for it), which no audit record keeps."""

    def __init__(self, state: ServingState, kinds: frozenset[str]) -> None:
        self.state = state
        self.fleet = state.services.fleet
        self.kinds = kinds
        # a pane's text views with a tool that reads its text, its picture with one that
        # draws it (the kind "picture")
        self.pane_views = tuple(view for view in PANE_VIEWS if kind_of("pane", view) in kinds)
        self._listeners = 0

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts' names, the default host first (the one messages show)."""
        default = self.fleet.default
        return (default, *(name for name in self.fleet.names if name != default))

    def address(self, uri: str) -> ResourceAddress:
        try:
            address = parse(uri, self.hosts)
        except ResourceUriError as error:
            raise MCPError(types.INVALID_PARAMS, str(error)) from None
        kind = kind_of(address.kind, address.view)
        if kind != "call" and kind not in self.kinds:
            if kind == "picture":
                refusal = "is a pane's picture, and this server serves no tool that draws one"
            else:
                refusal = f"is a {kind}'s, and this server serves no tool that reads a {kind}"
            raise MCPError(
                types.INVALID_PARAMS, f"uri: {uri} {refusal} (--tools), so no {kind} resources"
            )
        return address

    async def list_templates(
        self,
        call: Call,
        ctx: ServerRequestContext[Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListResourceTemplatesResult:
        """Each host's templates (a pane's views, a program's output, the recordings, as
        served), the default host's first, ``TEMPLATE_PAGE_HOSTS`` hosts a page; the
        cursor is the next page's first host, and a cursor this server did not give is
        refused."""
        hosts = self.hosts
        first = _page_start(
            params.cursor if params else None, len(hosts), "resources/templates/list"
        )
        page = hosts[first : first + TEMPLATE_PAGE_HOSTS]
        following = first + len(page)
        templates = []
        for host in page:
            on = "" if host == self.fleet.default else f" on {host}"
            if self.pane_views:
                templates += [
                    types.ResourceTemplate(
                        uri_template=template(host, "pane", view),
                        name=f"pane {view}{on}",
                        title=f"A pane's {view}{on}",
                        description=f"{_DESCRIPTIONS[view]}; pane_id is a tmux pane id such as %12",
                        mime_type=PNG if view == "picture" else TEXT,
                    )
                    for view in self.pane_views
                ]
            if "program" in self.kinds:
                templates.append(
                    types.ResourceTemplate(
                        uri_template=template(host, "program", "output"),
                        name=f"program output{on}",
                        title=f"A program's output{on}",
                        description=f"{_DESCRIPTIONS['output']}; program_id as start_program "
                        "gives it",
                        mime_type=TEXT,
                    )
                )
            if self.recordings.enabled:
                templates += self._recording_templates(host, on)
        return types.ListResourceTemplatesResult(
            resource_templates=templates,
            next_cursor=f"{_HOSTS_CURSOR}{following}" if following < len(hosts) else None,
        )

    def _recording_templates(self, host: str, on: str) -> list[types.ResourceTemplate]:
        kinds = [
            (
                "call",
                "call_id",
                "an agent's call that drove a pane, its id as the audit log links it",
            )
        ]
        if "program" in self.kinds:
            kinds.insert(
                0, ("program", "program_id", "a program, its id as start_program gives it")
            )
        return [
            types.ResourceTemplate(
                uri_template=template(host, kind, "recording"),  # type: ignore[arg-type]
                name=f"{kind} recording{on}",
                title=f"A {kind}'s recording{on}",
                description=f"{_DESCRIPTIONS['recording']}; of {what}",
                mime_type=RECORDING,
            )
            for kind, _, what in kinds
        ]

    async def list_resources(
        self,
        call: Call,
        ctx: ServerRequestContext[Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListResourcesResult:
        """Every pane of the configured tmux server (screen and scrollback), then every
        program whose output can be read: on the default host, and on every other host
        a call has used (a listing connects no host). ``RESOURCE_PAGE_HOSTS`` such hosts
        a page, read at once; the cursor is the next page's first host among the
        configured ones, so a host used meanwhile neither shifts nor repeats a page. A
        host whose listing fails is left out of its page, and the log says why; a page
        that no host could list is that failure."""
        hosts = self.hosts
        first = _page_start(params.cursor if params else None, len(hosts), "resources/list")
        used = {scope.name for scope in self.fleet.scopes}
        listed = [
            index
            for index in range(first, len(hosts))
            if index == 0 or hosts[index] in used  # the default host is first
        ][:RESOURCE_PAGE_HOSTS]
        found: dict[int, list[types.Resource]] = {}
        failed: dict[int, SchemuxError] = {}

        async def one(index: int) -> None:
            try:
                found[index] = await self._host_resources(call.on(hosts[index]))
            except SchemuxError as error:
                failed[index] = error

        async with anyio.create_task_group() as group:
            for index in listed:
                group.start_soon(one, index)
        if failed and not found:  # the page is that host's (or those hosts') failure
            index = min(failed)
            raise MCPError(types.INTERNAL_ERROR, f"host {hosts[index]!r}: {failed[index].render()}")
        for index, error in sorted(failed.items()):
            logger.warning("resources/list left out host %r: %s", hosts[index], error)
        following = listed[-1] + 1 if len(listed) == RESOURCE_PAGE_HOSTS else len(hosts)
        more = any(hosts[index] in used for index in range(following, len(hosts)))
        return types.ListResourcesResult(
            resources=[resource for index in listed for resource in found.get(index, [])],
            next_cursor=f"{_HOSTS_CURSOR}{following}" if more else None,
        )

    async def _host_resources(self, on: Call) -> list[types.Resource]:
        host = on.host_name
        resources = []
        for row in await listed_panes(on) if self.pane_views else []:
            where = f"{row.session_name}: {row.pane_current_command}"
            for view in self.pane_views:
                resources.append(
                    types.Resource(
                        uri=pane_uri(host, row.pane_id, view),
                        name=f"{row.pane_id} {view}",
                        title=f"{view} of pane {row.pane_id} ({where})",
                        description=_DESCRIPTIONS[view],
                        mime_type=PNG if view == "picture" else TEXT,
                    )
                )
        for program in on.programs.visible(on.session) if "program" in self.kinds else []:
            resources.append(
                types.Resource(
                    uri=program_uri(host, program.id),
                    name=f"{program.id} output",
                    title=f"output of program {program.id}",
                    description=_DESCRIPTIONS["output"],
                    mime_type=TEXT,
                    size=program.text_size,
                )
            )
        made = set(self.recordings.made(on.session))
        for program in on.programs.visible(on.session) if "program" in self.kinds else []:
            if program.id in made:
                resources.append(
                    self._recording(program_uri(host, program.id, "recording"), program.id)
                )
        if host == self.fleet.default:  # a call's recording is the process's, listed once
            for recording_id in self.recordings.made(on.session, "c"):
                resources.append(
                    self._recording(call_recording_uri(host, recording_id), recording_id)
                )
        return resources

    @staticmethod
    def _recording(uri: str, recording_id: str) -> types.Resource:
        return types.Resource(
            uri=uri,
            name=f"{recording_id} recording",
            title=f"recording {recording_id}",
            description=_DESCRIPTIONS["recording"],
            mime_type=RECORDING,
        )

    async def read(
        self, call: Call, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        address = self.address(params.uri)
        contents: types.TextResourceContents | types.BlobResourceContents
        try:
            if address.view == "picture":
                picture = await self._picture(call.on(address.host), address)
                blob = base64.b64encode(picture).decode("ascii")
                contents = types.BlobResourceContents(uri=params.uri, mime_type=PNG, blob=blob)
            elif address.view == "recording":
                text = await self._recording_text(call.on(address.host), address)
                contents = types.TextResourceContents(
                    uri=params.uri, mime_type=RECORDING, text=text
                )
            else:
                text = await self._text(call.on(address.host), address)
                contents = types.TextResourceContents(uri=params.uri, mime_type=TEXT, text=text)
        except SchemuxError as error:
            raise MCPError(RESOURCE_NOT_FOUND, f"{params.uri}: {error.render()}") from None
        if call.settings.mask_secrets and isinstance(contents, types.TextResourceContents):
            # --mask-secrets: the text as results give it (a recording's output too)
            from schemux.text.secrets import mask_text

            contents.text = mask_text(contents.text).text
        return types.ReadResourceResult(contents=[contents])

    @staticmethod
    async def _picture(on: Call, address: ResourceAddress) -> bytes:
        """The pane's picture as PNG, drawn as picture_pane draws it."""
        server = on.tmux()
        pane = await resolve_pane(server, PaneTarget(pane_id=address.id), on.notes)
        picture = await on.services.pictures.picture(
            server, pane.pane_id, "png", mask_secrets=on.settings.mask_secrets
        )
        return picture.data

    @property
    def recordings(self) -> Recordings:
        return self.fleet.recordings

    async def _recording_text(self, on: Call, address: ResourceAddress) -> str:
        """A recording this server made for the reader's session: a program's (whose
        output that session may read), or a call's."""
        if address.kind == "program":
            on.programs.get(address.id, on.caller)
        path = self.recordings.made_for(address.id, on.session)
        if path is not None:
            await self.recordings.until_ended(address.id)  # a call's, ended after it
        try:
            if path is None:
                raise FileNotFoundError
            return await anyio.Path(path).read_text("utf-8", "replace")
        except FileNotFoundError:
            raise SchemuxError(
                f"no recording {address.id} for this session: recording is off "
                "(--no-record), it was made for another session or server, or it was "
                "removed to keep the recordings within their bounds",
                suggestion="list the resources to see the recordings there are",
            ) from None

    async def _text(self, on: Call, address: ResourceAddress) -> str:
        if address.kind == "program":
            program = on.programs.get(address.id, on.caller)
            size = program.text_size
            if program.text is None:
                raise SchemuxError(f"the output of {program.id} was let go")
            data = await text_at(program, on.programs.host, 0, size)
            return data.decode("utf-8", "replace")
        server = on.tmux()
        pane = await resolve_pane(server, PaneTarget(pane_id=address.id), on.notes)
        start = "0" if address.view == "screen" else "-"
        rows = await server.run("capture-pane", "-p", "-t", pane.pane_id, "-S", start, "-E", "-")
        return "\n".join(rows)

    async def complete(
        self, call: Call, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Pane ids and program ids for the templates' arguments, those that begin with
        what the client typed; pane ids newest first (the highest numbers), so that the
        first page of a busy server holds the panes made last."""
        ref, argument = params.ref, params.argument
        values: list[str] = []
        if isinstance(ref, types.ResourceTemplateReference):
            for host in self.hosts:
                panes = {template(host, "pane", view) for view in self.pane_views}
                if ref.uri in panes and argument.name == "pane_id":
                    rows = await listed_panes(call.on(host))
                    values = sorted({row.pane_id for row in rows}, key=lambda id_: -int(id_[1:]))
                elif (
                    "program" in self.kinds
                    and ref.uri == template(host, "program", "output")
                    and argument.name == "program_id"
                ):
                    on = call.on(host)
                    values = [program.id for program in on.programs.visible(on.session)]
        matching = [value for value in values if value.startswith(argument.value)]
        return types.CompleteResult(
            completion=types.Completion(
                values=matching[:MAX_COMPLETIONS],
                total=len(matching),
                has_more=len(matching) > MAX_COMPLETIONS,
            )
        )

    async def _follow(self, call: Call, address: ResourceAddress) -> tuple[tuple[str, str], Follow]:
        """The watch key of what ``address`` names (its host, and the pane or program),
        and how to follow it; a ``SchemuxError`` when it is not there."""
        on = call.on(address.host)
        if address.kind == "program":
            program = on.programs.get(address.id, on.caller)
            return (address.host, f"program {program.id}"), partial(follow_program, program)
        server = on.tmux()
        pane = await resolve_pane(server, PaneTarget(pane_id=address.id), on.notes)
        return (address.host, f"pane {pane.pane_id}"), partial(follow_pane, server, pane)

    async def _subscribe(
        self,
        call: Call,
        holder: Subscriptions,
        uri: str,
        deliver: Callable[[str], Awaitable[None]],
    ) -> None:
        if uri in holder.releases:
            return
        key, follow = await self._follow(call, self.address(uri))
        holder.releases[uri] = await self.state.resource_watches.subscribe(
            key, uri, follow, deliver
        )

    async def subscribe(
        self, call: Call, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        connection = _connection(ctx)
        holder = connection.state.get(_CONNECTION_KEY)
        if not isinstance(holder, Subscriptions):
            holder = connection.state[_CONNECTION_KEY] = Subscriptions()
            connection.exit_stack.push_async_callback(holder.close)
        try:
            await self._subscribe(call, holder, params.uri, connection.send_resource_updated)
        except SchemuxError as error:
            raise MCPError(RESOURCE_NOT_FOUND, f"{params.uri}: {error.render()}") from None
        return types.EmptyResult()

    async def unsubscribe(
        self, call: Call, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.address(params.uri)
        holder = _connection(ctx).state.get(_CONNECTION_KEY)
        if isinstance(holder, Subscriptions):
            await holder.release(params.uri)
        return types.EmptyResult()

    async def listen(
        self,
        call: Call,
        ctx: ServerRequestContext[Any],
        params: types.SubscriptionsListenRequestParams,
    ) -> types.SubscriptionsListenResult:
        """One listen stream: updates of the resources it names that are there (the
        acknowledgement lists those); list changes are not sent, so never acknowledged.
        A URI that does not parse refuses the stream."""
        uris = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        for uri in uris:
            self.address(uri)
        if self._listeners >= MAX_LISTENERS:
            raise MCPError(
                types.INTERNAL_ERROR,
                f"{self._listeners} listen streams are open already, the most this server allows",
            )
        self._listeners += 1
        bus = PendingBus()
        holder = Subscriptions()

        async def deliver(uri: str) -> None:
            await bus.publish(ResourceUpdated(uri))

        try:
            for uri in uris:
                # one that is not there is left out of what the stream honours
                with contextlib.suppress(SchemuxError):
                    await self._subscribe(call, holder, uri, deliver)
            honored = types.SubscriptionsListenRequestParams(
                notifications=types.SubscriptionFilter(
                    resource_subscriptions=list(holder.releases) or None
                )
            )
            call.permits.end()  # the stream's watches are no request's (see _as_call)
            return await ListenHandler(bus)(ctx, honored)
        finally:
            self._listeners -= 1
            with anyio.CancelScope(shield=True):
                await holder.close()


async def listed_panes(on: Call) -> list[PaneRow]:
    """Each pane of ``on``'s configured tmux server once (a window in several sessions
    is listed under its first, but under schemux's own session only when it is in no
    other: a watch links windows there), without schemux's control window."""
    rows = await query(on.tmux(), PaneRow, "list-panes", "-a")
    seen: dict[str, PaneRow] = {}
    for row in rows:
        if is_control_window(row.session_name, row.control):
            continue
        if row.pane_id not in seen or seen[row.pane_id].session_name == OWNED_SESSION:
            seen[row.pane_id] = row
    return list(seen.values())


def _connection(ctx: ServerRequestContext[Any]) -> Connection:
    """The client's connection: its subscriptions are kept in its ``state`` and released
    by its ``exit_stack`` when it closes. (mcp 2.3 hands low-level handlers only the
    request's session, which holds the connection without exposing it.)"""
    connection: Connection = ctx.session._connection
    return connection


def kind_of(kind: str, view: str) -> str:
    """The kind of resource (as the overlays' ``resources`` name it) a URI of ``kind`` and
    ``view`` is: a pane's picture is its own kind, served only with the tool that draws
    one."""
    return "picture" if view == "picture" else kind


def served_kinds(tools: Iterable[str]) -> frozenset[str]:
    """The kinds of resource served with ``tools``: those one of them reads or links to
    (``RESOURCE_READERS``, from the overlays)."""
    served = set(tools)
    return frozenset(kind for kind, readers in RESOURCE_READERS.items() if served & set(readers))


def serve_resources(server: Server[Any], state: ServingState, tools: Iterable[str]) -> None:
    """Serve panes and programs as resources on ``server`` (which then declares the
    ``resources`` capability, with subscriptions, and ``completions``), each kind only
    with a tool of ``tools`` that reads it: none at all without one."""
    kinds = served_kinds(tools)
    if not kinds:
        return
    service = ResourceService(state, kinds)
    handlers: list[tuple[str, type[Any], CallHandler]] = [
        ("resources/list", types.PaginatedRequestParams, service.list_resources),
        ("resources/templates/list", types.PaginatedRequestParams, service.list_templates),
        ("resources/read", types.ReadResourceRequestParams, service.read),
        ("resources/subscribe", types.SubscribeRequestParams, service.subscribe),
        ("resources/unsubscribe", types.UnsubscribeRequestParams, service.unsubscribe),
        ("subscriptions/listen", types.SubscriptionsListenRequestParams, service.listen),
        ("completion/complete", types.CompleteRequestParams, service.complete),
    ]
    for method, params, handler in handlers:
        server.add_request_handler(method, params, _as_call(state, handler))


def _as_call(state: ServingState, handler: CallHandler) -> Handler:
    """``handler``, given its request as a call on the default host, in the request's
    MCP session (``sessions``: the programs of another session are not there for it).
    Once the request is answered, what it follows (a watch's tmux server) is no call's:
    it neither starts the server nor remembers the connects that failed in it."""

    async def served(ctx: ServerRequestContext[Any], params: Any) -> Any:
        services = state.services
        call = Call(services, services.scope, session=session_of(ctx))
        try:
            return await handler(call, ctx, params)
        finally:
            call.permits.end()

    return served
