"""Who may see the page beside ``/mcp``: the sign-in form, its sessions, sign-out, and the
checks ``/mcp`` has.

A browser cannot send a bearer header on its own, and a token in a URL ends up in
history, logs and ``Referer`` headers. So the page has a sign-in form that POSTs the
token (``/signin``, a form body, never a query); it is compared in constant time, and a
right one gets a session: a random id (256 bits) in an ``HttpOnly``, ``SameSite=Strict``
cookie (``Secure`` when the page is reached over https), which holds nothing of the token
and which the server keeps only as its SHA-256. Sessions live in memory (a restart signs
everyone out), for ``SESSION_SECONDS`` at most, ``MAX_SESSIONS`` at once (the oldest goes);
``/signout`` ends one. A request may instead carry ``Authorization: Bearer <token>``, as
``/mcp``'s do (a script's). Without a token configured (loopback only), the page is open,
as ``/mcp`` is.

Every request is first held to the Host and Origin checks of ``/mcp`` (the SDK's, with the
same patterns: a page elsewhere whose name resolves here gets nothing, and a form on
another site cannot post here; but ``Origin: null`` on the two forms' POSTs, which is
what a browser sends from a page whose Referrer-Policy is ``no-referrer``); every answer
carries the page's security headers (``PAGE_HEADERS``: a strict Content-Security-Policy,
``Referrer-Policy: no-referrer``). Only ``/static/`` (the page's own code and styles,
shipped in the package) and ``/favicon.ico`` are served without a session, so that the
sign-in form has its stylesheet.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from types import MappingProxyType
from urllib.parse import parse_qs

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from schemux.http.config import HttpConfig
from schemux.logs import RepeatedLog

logger = logging.getLogger("schemux")

COOKIE = "schemux-page"
SESSION_SECONDS = 12 * 3600.0
MAX_SESSIONS = 32
MAX_FORM_BYTES = 4096  # a sign-in form: a token of a few hundred characters at most
PUBLIC_PREFIX = "/static/"
FAVICON = "/favicon.ico"  # asked for by every browser, before any sign-in

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        # the asciinema player's terminal is WebAssembly, compiled from its own bundle
        "script-src 'self' 'wasm-unsafe-eval'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "font-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    )
)
PAGE_HEADERS = MappingProxyType(
    {
        "content-security-policy": CONTENT_SECURITY_POLICY,
        "referrer-policy": "no-referrer",
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "cross-origin-opener-policy": "same-origin",
        "cross-origin-resource-policy": "same-origin",
    }
)

SIGNIN_FORM = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>schemux: sign in</title>
<link rel="stylesheet" href="/static/page.css">
</head>
<body class="signin">
<main>
<h1>schemux</h1>
<p>This page shows the terminals this schemux serves. Sign in with the token it was
given (<code>SCHEMUX_HTTP_TOKEN</code> or <code>--token-file</code>).</p>
{message}
<form method="post" action="/signin">
<label>Token <input type="password" name="token" autocomplete="off" required autofocus></label>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>
"""
WRONG_TOKEN = "That is not this server's token."


def transport_security(config: HttpConfig) -> TransportSecuritySettings:
    """The Host and Origin checks (DNS rebinding) of every request, ``/mcp``'s and the
    page's alike."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=config.host_patterns(),
        allowed_origins=config.origin_patterns(),
    )


def matches(presented: str | None, token: bytes) -> bool:
    """Whether ``presented`` is the token, compared in constant time."""
    return presented is not None and hmac.compare_digest(presented.encode("utf-8"), token)


class PageSessions:
    """The signed-in browsers: each session's id kept as its SHA-256 (a lookup's timing
    says nothing of the ids), with its end; ``MAX_SESSIONS`` at most, the oldest dropped."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, limit: int = MAX_SESSIONS
    ) -> None:
        self._clock = clock
        self._limit = limit
        self._ends: OrderedDict[bytes, float] = OrderedDict()

    @staticmethod
    def _key(session_id: str) -> bytes:
        return hashlib.sha256(session_id.encode("utf-8", "replace")).digest()

    def begin(self) -> str:
        """A new session's id."""
        session_id = secrets.token_urlsafe(32)
        self._ends[self._key(session_id)] = self._clock() + SESSION_SECONDS
        while len(self._ends) > self._limit:
            self._ends.popitem(last=False)
        return session_id

    def valid(self, session_id: str | None) -> bool:
        if not session_id:
            return False
        key = self._key(session_id)
        end = self._ends.get(key)
        if end is None:
            return False
        if end <= self._clock():
            del self._ends[key]
            return False
        return True

    def end(self, session_id: str | None) -> None:
        if session_id:
            self._ends.pop(self._key(session_id), None)

    def __len__(self) -> int:
        return len(self._ends)


def _secure(request: Request) -> bool:
    """Whether the browser reached the page over https (schemux itself serves http; a
    proxy in front says so in the Origin it passes on, or ``X-Forwarded-Proto``). A
    cookie marked Secure that need not be costs only a sign-in that does not hold."""
    origin = request.headers.get("origin", "")
    forwarded = request.headers.get("x-forwarded-proto", "")
    return (
        request.url.scheme == "https"
        or origin.startswith("https://")
        or forwarded.lower() == "https"
    )


def _session_cookie(response: Response, value: str, *, secure: bool, max_age: int) -> None:
    response.set_cookie(
        COOKIE,
        value,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="strict",
        secure=secure,
    )


class PageGate:
    """The page (``page``, an ASGI app) behind the sign-in: ``/signin`` and ``/signout``
    answered here, every other request passed on only with a session or the bearer token
    (or when no token is configured), after the Host and Origin checks."""

    def __init__(self, page: ASGIApp, config: HttpConfig) -> None:
        self.page = page
        self._token = None if config.token is None else config.token.encode("ascii")
        self._checks = TransportSecurityMiddleware(transport_security(config))
        self.sessions = PageSessions()
        self._repeated: RepeatedLog | None = None  # made on the loop, at the first refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # a websocket: nothing is served there
            await send({"type": "websocket.close", "code": 1008})
            return
        send = _with_page_headers(send)
        request = Request(scope, receive)
        refused = await self._checks.validate_request(_as_checked(request), is_post=False)
        if refused is not None:
            refused.headers["connection"] = "close"
            await refused(scope, receive, send)
            return
        path = scope["path"]
        if path == "/signin":
            response = await self._signin(request)
        elif path == "/signout":
            response = self._signout(request)
        elif self.signed_in(request) or path.startswith(PUBLIC_PREFIX) or path == FAVICON:
            await self.page(scope, receive, send)
            return
        elif path == "/" and request.method == "GET":
            response = self._form(status=401)
        else:
            response = JSONResponse(
                {"error": "unauthorized", "error_description": "sign in at /signin first"},
                status_code=401,
                headers={"connection": "close"},
            )
        await response(scope, receive, send)

    def signed_in(self, request: Request) -> bool:
        """Whether the request may see the page: no token is configured, it carries a
        session's cookie, or the bearer token."""
        if self._token is None:
            return True
        if self.sessions.valid(request.cookies.get(COOKIE)):
            return True
        authorization = request.headers.get("authorization", "")
        scheme, _, presented = authorization.strip().partition(" ")
        return scheme.lower() == "bearer" and matches(presented.strip() or None, self._token)

    def _form(self, *, status: int, message: str = "") -> HTMLResponse:
        shown = f'<p class="refused">{html.escape(message)}</p>' if message else ""
        headers = {"cache-control": "no-store"}
        if status == 401:
            headers["connection"] = "close"
        return HTMLResponse(SIGNIN_FORM.format(message=shown), status_code=status, headers=headers)

    async def _signin(self, request: Request) -> Response:
        if self._token is None or (request.method == "GET" and self.signed_in(request)):
            return RedirectResponse("/", status_code=303)
        if request.method == "GET":
            return self._form(status=200)
        if request.method != "POST":
            return Response(status_code=405, headers={"allow": "GET, POST"})
        presented = await _form_token(request)
        if not matches(presented, self._token):
            self._refusal(request)
            return self._form(status=401, message=WRONG_TOKEN)
        response = RedirectResponse("/", status_code=303)
        secure = _secure(request)
        _session_cookie(
            response, self.sessions.begin(), secure=secure, max_age=int(SESSION_SECONDS)
        )
        response.headers["cache-control"] = "no-store"
        return response

    def _signout(self, request: Request) -> Response:
        if request.method != "POST":  # a link or an image elsewhere cannot sign anyone out
            return Response(status_code=405, headers={"allow": "POST"})
        self.sessions.end(request.cookies.get(COOKIE))
        response = RedirectResponse("/signin", status_code=303)
        _session_cookie(response, "", secure=_secure(request), max_age=0)
        return response

    def _refusal(self, request: Request) -> None:
        """A wrong token is logged (never what was sent), a flood of them as counts."""
        if self._repeated is None:
            self._repeated = RepeatedLog(logger)
        client = request.client.host if request.client else "?"
        self._repeated.log(logging.WARNING, f"page: a sign-in from {client} with a wrong token")


def _as_checked(request: Request) -> Request:
    """The request as the Host and Origin checks see it: a form's POST to ``/signin`` or
    ``/signout`` with ``Origin: null`` as one without an Origin. Browsers send ``null``
    for a form posted from a page whose Referrer-Policy is ``no-referrer`` (the page's
    own); what ``null`` could also hide, a sandboxed page elsewhere, gains nothing there:
    a sign-in needs the token, and its SameSite=Strict cookie never comes with a
    sign-out from another site."""
    if (
        request.method != "POST"
        or request.url.path not in ("/signin", "/signout")
        or request.headers.get("origin") != "null"
    ):
        return request
    headers = [(name, value) for name, value in request.scope["headers"] if name != b"origin"]
    return Request({**request.scope, "headers": headers})


async def _form_token(request: Request) -> str | None:
    """The ``token`` field of a url-encoded form body of at most ``MAX_FORM_BYTES``; None
    for any other body."""
    if Headers(scope=request.scope).get("content-type", "").split(";")[0].strip() != (
        "application/x-www-form-urlencoded"
    ):
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return None
    try:
        fields = parse_qs(body.decode("ascii"), keep_blank_values=True, max_num_fields=8)
    except (UnicodeDecodeError, ValueError):
        return None
    values = fields.get("token", [])
    return values[0] if len(values) == 1 else None


def _with_page_headers(send: Send) -> Send:
    """``send`` with the page's security headers on its response's start (those the
    response set itself win)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {name.lower() for name, _ in headers}
            for name, value in PAGE_HEADERS.items():
                if name.encode("latin-1") not in present:
                    headers.append((name.encode("latin-1"), value.encode("latin-1")))
            message = {**message, "headers": headers}
        await send(message)

    return sending
