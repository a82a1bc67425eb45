"""The page in the browser, behind its sign-in (``http.signin``): its HTML and static files,
its live events (Server-Sent Events, ``serving.page_feed``), a pane's picture, a
program's output and a call's recording. Everything here reads; nothing types into a
pane.

The static files ship in the package (``schemux/serving/static/``), the asciinema web
player among them (``static/asciinema-player.README``: its version and licence); nothing
is fetched from elsewhere. The page's script is a file of its own, so the
Content-Security-Policy allows no inline script.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from importlib import resources
from types import MappingProxyType

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from schemux.audit.recordings import MIME_TYPE as RECORDING_TYPE
from schemux.errors import SchemuxError
from schemux.panes.targets import PaneTarget, resolve_pane
from schemux.programs.output import text_tail
from schemux.serving.page_feed import PageFeed, host_names, page_call
from schemux.serving.state import ServingState

logger = logging.getLogger("schemux")

OUTPUT_BYTES = 64 * 1024  # of a program's output, the end the page shows
KEEPALIVE_SECONDS = 15.0  # a comment on an idle event stream: a dead browser is noticed
RECORDING_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
STATIC_TYPES = MappingProxyType(
    {
        "page.html": "text/html; charset=utf-8",
        "page.css": "text/css; charset=utf-8",
        "page.js": "text/javascript; charset=utf-8",
        "asciinema-player.min.js": "text/javascript; charset=utf-8",
        "asciinema-player.css": "text/css; charset=utf-8",
        "asciinema-player.LICENSE": "text/plain; charset=utf-8",
        "asciinema-player.README": "text/plain; charset=utf-8",
    }
)
NO_STORE = MappingProxyType({"cache-control": "no-store"})


def static_file(name: str) -> bytes:
    return (resources.files("schemux.serving") / "static" / name).read_bytes()


class Page:
    """The page of one running server, over ``state``; ``signin`` says whether it is
    behind a sign-in (a token is configured). ``close`` ends its open event streams."""

    def __init__(self, state: ServingState, *, signin: bool) -> None:
        self.state = state
        self.signin = signin
        self._closing = asyncio.Event()

    def app(self) -> ASGIApp:
        return Router(
            routes=[
                Route("/", self.index, methods=["GET"]),
                Route("/static/{name}", self.static, methods=["GET"]),
                Route("/favicon.ico", self.favicon, methods=["GET"]),
                Route("/events", self.events, methods=["GET"]),
                Route("/pictures/{host}/{pane:int}", self.picture, methods=["GET"]),
                Route("/programs/{host}/{program}", self.program_output, methods=["GET"]),
                Route("/recordings/{recording}", self.recording, methods=["GET"]),
            ]
        )

    def close(self) -> None:
        self._closing.set()

    async def index(self, request: Request) -> Response:
        return Response(
            static_file("page.html"), media_type=STATIC_TYPES["page.html"], headers=NO_STORE
        )

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC_TYPES:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(
            static_file(name),
            media_type=STATIC_TYPES[name],
            headers={"cache-control": "private, max-age=3600"},
        )

    async def favicon(self, request: Request) -> Response:
        return Response(status_code=204, headers={"cache-control": "private, max-age=86400"})

    async def picture(self, request: Request) -> Response:
        """A pane's picture as PNG, drawn now (``Pictures``, as picture_pane draws it)."""
        host = request.path_params["host"]
        if host not in host_names(self.state):
            return _missing(f"no host {host!r} is shown here")
        on = page_call(self.state, host)
        server = on.tmux()
        try:
            pane = await resolve_pane(
                server, PaneTarget(pane_id=f"%{request.path_params['pane']}"), None
            )
            # the person's own view of their panes, as tmux attach shows them: --mask-secrets
            # is for what the agent reads
            picture = await on.services.pictures.picture(
                server, pane.pane_id, "png", mask_secrets=False
            )
        except SchemuxError as error:
            return _missing(error.render())
        return Response(picture.data, media_type=picture.mime_type, headers=NO_STORE)

    async def program_output(self, request: Request) -> Response:
        """The end of a program's output (``OUTPUT_BYTES``), as text."""
        host = request.path_params["host"]
        program_id = request.path_params["program"]
        if host not in host_names(self.state):
            return _missing(f"no host {host!r} is shown here")
        on = page_call(self.state, host)
        program = next((p for p in on.programs.listed() if p.id == program_id), None)
        if program is None or program.text is None:
            return _missing(f"no output of program {program_id!r} is kept here")
        text, skipped = await text_tail(program, on.programs.host, OUTPUT_BYTES)
        if skipped:
            text = f"[{skipped} bytes before this are not shown]\n{text}"
        return Response(text, media_type="text/plain; charset=utf-8", headers=NO_STORE)

    async def recording(self, request: Request) -> Response:
        """A call's or program's recording (asciicast v3, ``audit.recordings``), from
        beside the audit log: this process's or another's that shares it, as the
        timeline shows their calls."""
        recording_id = request.path_params["recording"]
        recordings = self.state.services.fleet.recordings
        if not recordings.enabled or not RECORDING_ID.fullmatch(recording_id):
            return _missing("no such recording (recording is off, or that is no id)")
        await recordings.until_ended(recording_id)  # a call's, ended after it
        try:
            data = await anyio.to_thread.run_sync(
                _read_own_file, str(recordings.path(recording_id))
            )
        except OSError:
            return _missing(f"recording {recording_id} is not kept (any more)")
        return Response(data, media_type=RECORDING_TYPE, headers=NO_STORE)

    async def events(self, request: Request) -> Response:
        return _EventStream(self.state, self.signin, self._closing)


def _read_own_file(path: str) -> bytes:
    """A file schemux wrote, never reached through a symbolic link."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as opened:
        return opened.read()


def _missing(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=404, headers=NO_STORE)


class _EventStream(Response):
    """One page's events as Server-Sent Events, until the browser goes or schemux ends;
    its watches are released whichever way it ends."""

    def __init__(self, state: ServingState, signin: bool, closing: asyncio.Event) -> None:
        super().__init__(media_type="text/event-stream", headers=NO_STORE)
        # a stream has no length: the headers Response made, but its content-length
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self._state = state
        self._signin = signin
        self._closing = closing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        feed = PageFeed(self._state, signin=self._signin)
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        try:
            async with anyio.create_task_group() as group:

                async def ended() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                async def closing() -> None:
                    await self._closing.wait()
                    group.cancel_scope.cancel()

                group.start_soon(ended)
                group.start_soon(closing)
                group.start_soon(feed.run)
                await self._write(feed, send)
        except OSError:  # the browser went while an event was written
            pass
        finally:
            await feed.close()

    async def _write(self, feed: PageFeed, send: Send) -> None:
        while True:
            events = None
            with anyio.move_on_after(KEEPALIVE_SECONDS):
                events = await feed.events.take()
            body = "".join(
                f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
                for name, data in events or ()
            )
            chunk = body.encode() if events else b": alive\n\n"
            await send({"type": "http.response.body", "body": chunk, "more_body": True})


def page_app(state: ServingState, *, signin: bool) -> tuple[ASGIApp, Page]:
    """The page's app, and the page (whose ``close`` ends its event streams)."""
    page = Page(state, signin=signin)
    return page.app(), page
