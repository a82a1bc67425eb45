"""The page's way in over plain HTTP (httpx2 against the served app in this process, no
tmux): the sign-in form and its cookie's flags, sign-out, the bearer token as the
alternative, the Host and Origin refusals ``/mcp`` has, the security headers on every
answer, sessions' lifetime and cap; and the vendored player is the one its README names."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from schemux.http.config import HttpConfig
from schemux.http.signin import (
    CONTENT_SECURITY_POLICY,
    COOKIE,
    MAX_SESSIONS,
    SESSION_SECONDS,
    PageGate,
    PageSessions,
)

pytestmark = pytest.mark.anyio

TOKEN = "page-http-token-0123456789abcdef"
BASE = "http://127.0.0.1:8765"
STATIC = Path(__file__).resolve().parents[1] / "schemux" / "serving" / "static"


async def page(scope: Scope, receive: Receive, send: Send) -> None:
    """The page as the gate sees it: whatever is behind it."""
    await PlainTextResponse(f"the page at {scope['path']}")(scope, receive, send)


def gate(token: str | None = TOKEN) -> PageGate:
    return PageGate(page, HttpConfig(host="127.0.0.1", port=8765, token=token))


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=gate())
    async with httpx2.AsyncClient(transport=transport, base_url=BASE) as client:
        yield client


async def sign_in(http: httpx2.AsyncClient, token: str = TOKEN, **headers: str) -> httpx2.Response:
    return await http.post(
        "/signin",
        content=f"token={token}",
        headers={"content-type": "application/x-www-form-urlencoded", **headers},
    )


async def test_without_a_session_the_page_is_refused(http: httpx2.AsyncClient) -> None:
    index = await http.get("/")
    assert index.status_code == 401
    assert 'name="token"' in index.text  # the sign-in form, not the page
    assert "the page" not in index.text
    for path in ("/events", "/pictures/local/1", "/programs/local/p1", "/recordings/c1"):
        refused = await http.get(path)
        assert refused.status_code == 401, path
        assert refused.headers["connection"] == "close"
    assert (await http.get("/static/page.css")).text == "the page at /static/page.css"


async def test_the_right_token_gets_a_session_cookie_and_never_the_token(
    http: httpx2.AsyncClient,
) -> None:
    answer = await sign_in(http)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"
    cookie = answer.headers["set-cookie"]
    value = re.match(rf"{COOKIE}=([^;]+);", cookie)
    assert value is not None
    assert TOKEN not in cookie
    assert len(value.group(1)) >= 43  # 256 random bits
    flags = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "path=/", "samesite=strict", f"max-age={int(SESSION_SECONDS)}"} <= flags
    assert "secure" not in flags  # plain http: a Secure cookie would never come back
    assert (await http.get("/")).text == "the page at /"
    assert (await http.get("/events")).text == "the page at /events"


async def test_over_https_the_cookie_is_secure(http: httpx2.AsyncClient) -> None:
    answer = await sign_in(http, **{"x-forwarded-proto": "https"})
    assert "secure" in answer.headers["set-cookie"].lower().split("; ")


@pytest.mark.parametrize(
    "token", [TOKEN[:-1], TOKEN + "x", TOKEN.upper(), "", f"{TOKEN}&token={TOKEN}"]
)
async def test_a_wrong_token_gets_no_session(http: httpx2.AsyncClient, token: str) -> None:
    answer = await sign_in(http, token)
    assert answer.status_code == 401
    assert "set-cookie" not in answer.headers
    assert "not this server&#x27;s token" in answer.text
    assert (await http.get("/events")).status_code == 401


async def test_the_token_in_a_url_signs_nobody_in(http: httpx2.AsyncClient) -> None:
    answer = await http.get(f"/signin?token={TOKEN}")
    assert "set-cookie" not in answer.headers
    assert (await http.post(f"/signin?token={TOKEN}")).status_code == 401
    assert (await http.get(f"/?token={TOKEN}")).status_code == 401


async def test_a_form_of_another_kind_or_size_is_refused(http: httpx2.AsyncClient) -> None:
    as_json = await http.post("/signin", json={"token": TOKEN})
    assert as_json.status_code == 401
    padded = await http.post(
        "/signin",
        content=f"token={TOKEN}&pad={'x' * 5000}",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert padded.status_code == 401


async def test_signing_out_ends_the_session_on_the_server(http: httpx2.AsyncClient) -> None:
    await sign_in(http)
    session = http.cookies[COOKIE]
    assert (await http.get("/signout")).status_code == 405  # a link elsewhere signs no one out
    answer = await http.post("/signout")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/signin"
    assert "max-age=0" in answer.headers["set-cookie"].lower()
    http.cookies.set(COOKIE, session)  # a browser that kept it anyway
    assert (await http.get("/events")).status_code == 401


async def test_the_bearer_token_opens_the_page_too(http: httpx2.AsyncClient) -> None:
    assert (await http.get("/", headers={"authorization": f"Bearer {TOKEN}"})).status_code == 200
    wrong = await http.get("/", headers={"authorization": f"Bearer {TOKEN}x"})
    assert wrong.status_code == 401


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example"}, 421),
        ({"host": "evil.example:8765"}, 421),
        ({"origin": "http://evil.example"}, 403),
        ({"origin": "http://127.0.0.1.evil.example:8765"}, 403),
        ({"origin": "null"}, 403),  # only the two forms' POSTs may say null
    ],
)
async def test_host_and_origin_are_checked_as_for_mcp(
    http: httpx2.AsyncClient, headers: dict[str, str], status: int
) -> None:
    await sign_in(http)
    for path in ("/", "/events", "/static/page.js"):
        answer = await http.get(path, headers=headers)
        assert answer.status_code == status, path
        assert answer.headers["referrer-policy"] == "no-referrer"


async def test_a_sign_in_from_another_site_is_refused(http: httpx2.AsyncClient) -> None:
    answer = await sign_in(http, origin="http://evil.example")
    assert answer.status_code == 403
    assert "set-cookie" not in answer.headers
    same_page = await sign_in(http, origin="null")  # our own form, under no-referrer
    assert same_page.status_code == 303


async def test_every_answer_carries_the_security_headers(http: httpx2.AsyncClient) -> None:
    answers = [await http.get("/"), await sign_in(http), await http.get("/events")]
    for answer in answers:
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert "script-src 'self' 'wasm-unsafe-eval';" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY


async def test_without_a_token_the_page_is_open_as_mcp_is() -> None:
    transport = httpx2.ASGITransport(app=gate(None))
    async with httpx2.AsyncClient(transport=transport, base_url=BASE) as http:
        assert (await http.get("/")).text == "the page at /"
        signin = await http.get("/signin")
        assert signin.status_code == 303
        assert signin.headers["location"] == "/"
        assert (await http.get("/", headers={"host": "evil.example"})).status_code == 421


def test_sessions_end_after_their_lifetime_and_the_oldest_go_first() -> None:
    now = [1000.0]
    sessions = PageSessions(clock=lambda: now[0])
    first = sessions.begin()
    assert sessions.valid(first)
    now[0] += SESSION_SECONDS
    assert not sessions.valid(first)
    made = [sessions.begin() for _ in range(MAX_SESSIONS + 1)]
    assert len(sessions) == MAX_SESSIONS
    assert not sessions.valid(made[0])
    assert all(sessions.valid(session) for session in made[1:])
    assert not sessions.valid("")
    assert not sessions.valid(None)


def test_the_vendored_player_is_the_one_its_readme_names() -> None:
    readme = (STATIC / "asciinema-player.README").read_text()
    assert readme.startswith("asciinema-player 3.18.0,")
    for name in ("asciinema-player.min.js", "asciinema-player.css"):
        digest = hashlib.sha256((STATIC / name).read_bytes()).hexdigest()
        assert re.search(rf"{re.escape(name)} +sha256 {digest}\n", readme), name
    assert "Apache License" in (STATIC / "asciinema-player.LICENSE").read_text()
