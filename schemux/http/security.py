"""Who may call over HTTP: a bearer token on every request, and Host/Origin checks.

The SDK's own bearer support is shaped for OAuth resource servers (an issuer, token
introspection); a static token needs only this middleware around the whole app. The
Host/Origin checks (DNS rebinding: a web page whose name resolves to 127.0.0.1 must not
reach the tools) are the SDK's TransportSecuritySettings, on for every bind address.
"""

from __future__ import annotations

import hmac
from typing import Any

from mcp.server import Server
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from schemux.http.config import HttpConfig
from schemux.http.signin import PageGate, transport_security

REALM = "schemux"


def secured_app(server: Server[Any], config: HttpConfig, page: ASGIApp | None = None) -> ASGIApp:
    """The streamable HTTP app at /mcp with the Host/Origin checks, the session cap and
    idle timeout, and, when a token is set, bearer authentication in front of it; with
    ``page``, every other path is the page's, behind its sign-in (``http.signin``)."""
    app = server.streamable_http_app(
        host=config.host,
        transport_security=transport_security(config),
        max_sessions=config.max_sessions,
        session_idle_timeout=config.session_idle_timeout,
    )
    mcp = app if config.token is None else BearerTokenMiddleware(app, config.token)
    return mcp if page is None else BesideMcp(mcp, PageGate(page, config))


class BesideMcp:
    """``/mcp`` (and the app's lifespan) to the MCP app, any other path to the page."""

    def __init__(self, mcp: ASGIApp, page: ASGIApp) -> None:
        self.mcp = mcp
        self.page = page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == "/mcp" or path.startswith("/mcp/"):
            await self.mcp(scope, receive, send)
        else:
            await self.page(scope, receive, send)


def presented_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (the scheme in any case,
    RFC 7235); None for no header, another scheme or an empty token."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


class BearerTokenMiddleware:
    """Answers 401 to every HTTP request without ``Authorization: Bearer <token>``;
    compares in constant time, so the answer's timing tells nothing of the token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("ascii")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # a websocket: nothing is served there
            await send({"type": "websocket.close", "code": 1008})
            return
        token = presented_token(Headers(scope=scope).get("authorization"))
        # header values arrive as latin-1; encoding back gives the bytes that were sent
        if token is not None and hmac.compare_digest(token.encode("latin-1"), self._token):
            await self.app(scope, receive, send)
            return
        await unauthorized(wrong_token=token is not None)(scope, receive, send)


def unauthorized(*, wrong_token: bool) -> JSONResponse:
    """RFC 6750's answer: the challenge, with ``invalid_token`` when a token was wrong
    (and no error code when none was sent). The connection is closed after it: one that
    has not authenticated is held for no more than a request (``http.guard``)."""
    challenge = f'Bearer realm="{REALM}"'
    if wrong_token:
        challenge += ', error="invalid_token"'
        body = {"error": "invalid_token", "error_description": "the bearer token is not valid"}
    else:
        body = {"error": "unauthorized", "error_description": "a bearer token is required"}
    headers = {"WWW-Authenticate": challenge, "Connection": "close"}
    return JSONResponse(body, status_code=401, headers=headers)
