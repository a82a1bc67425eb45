"""One error model (``schemux.errors``), rendered by the pipeline per contract family:
text with isError for the command and program families, the ``tmux_*`` envelope for
tmux_capture and tmux_snapshot; and a failure's effects known without asking tmux."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from schemux.config import Settings
from schemux.domain.call import Call
from schemux.domain.failures import reporting_effects
from schemux.errors import (
    MESSAGE_CHARACTERS,
    ConnectionLost,
    Created,
    Effects,
    Refused,
    SchemuxError,
    ServerUnavailable,
    TmuxCommandError,
    TrackingUnavailable,
    UnsendableArgument,
)
from schemux.generated.bindings import BINDINGS
from schemux.serving.binding import ToolBinding
from schemux.serving.server import build_server, call_bound_tool
from schemux.serving.state import ServingState
from schemux.tmux.server import ServerAddress, TmuxServer
from tests.generated_data import TOOL_DOCUMENTS
from tests.support import StandInBinding

pytestmark = pytest.mark.anyio

StandIn = Callable[[Call, dict[str, Any]], Any]

# arguments each tool's inputSchema accepts; the bound call never looks at them
ARGUMENTS: dict[str, dict[str, Any]] = {
    "run_command": {"command": "true"},
    "run_program": {"argv": ["true"]},
    "tmux_capture": {"target": {"kind": "pane", "id": "%1", "generation": "g"}},
    "tmux_snapshot": {},
}
ENVELOPE_TOOLS = ["tmux_capture", "tmux_snapshot"]
TEXT_TOOLS = ["run_command", "run_program"]

# hostile text: quotes, a command substitution, a format, a newline, a leading dash
HOSTILE = '-pane "%1"; rm -rf ~ $(id) #{pane_id}\nsecond line'


def bound(tool: str, call: StandIn) -> ToolBinding:
    document = TOOL_DOCUMENTS[tool]
    model = "".join(part.title() for part in tool.split("_")) + "Input"
    return StandInBinding(document=document, input_model=model, stand_in=call)


def raising(error: BaseException) -> StandIn:
    async def call(ctx: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        raise error

    return call


async def outcome(tool: str, error: BaseException) -> tuple[bool, str, dict[str, Any] | None]:
    """(isError, text, structuredContent) of one call whose handler raises ``error``."""
    context = ServingState(Settings())
    try:
        result = await call_bound_tool(bound(tool, raising(error)), context, ARGUMENTS[tool])
    finally:
        await context.close()
    [content] = result.content
    assert content.type == "text"
    return bool(result.is_error), content.text, result.structured_content


def with_effects(error: SchemuxError, effects: Effects) -> SchemuxError:
    error.effects = effects
    return error


def test_only_the_tmux_family_describes_failures_as_results() -> None:
    enveloped = {name for name, binding in BINDINGS.items() if binding.error_envelope}
    assert enveloped == set(ENVELOPE_TOOLS)


@pytest.mark.parametrize("tool", TEXT_TOOLS)
@pytest.mark.parametrize("effects", [None, Effects("none")], ids=["before-tmux", "in-tmux"])
async def test_the_text_families_get_the_message_and_the_suggestion(
    tool: str, effects: Effects | None
) -> None:
    """Whatever the error carries, a tool without an envelope in its contract answers
    with text (no structuredContent), the suggestion on a line of its own."""
    error = SchemuxError(f"pane {HOSTILE} is gone", suggestion=f"list panes ({HOSTILE})")
    error.effects = effects
    failed, text, structured = await outcome(tool, error)
    assert failed
    assert structured is None
    assert text == f"pane {HOSTILE} is gone\nSuggestion: list panes ({HOSTILE})"


@pytest.mark.parametrize("tool", TEXT_TOOLS)
async def test_a_long_message_is_cut_short_in_text(tool: str) -> None:
    failed, text, _ = await outcome(tool, SchemuxError("x" * 5000, suggestion="y" * 3000))
    assert failed
    message, suggestion = text.split("\nSuggestion: ")
    assert message == "x" * MESSAGE_CHARACTERS + "…(3000 more characters)"
    assert suggestion == "y" * MESSAGE_CHARACTERS + "…(1000 more characters)"


SESSION = Created("session", "$3", "0123456789abcdef0123456789abcdef")
KNOWN = Effects("known", (SESSION,))
KNOWN_JSON = {
    "state": "known",
    "created": [{"kind": "session", "id": "$3", "generation": SESSION.generation}],
}
NONE_JSON: dict[str, Any] = {"state": "none", "created": []}

# (error, effects, the envelope's error object): every kind with its code and delivery
ENVELOPES: list[tuple[SchemuxError, Effects, dict[str, Any]]] = [
    (
        ServerUnavailable("no tmux server is running", suggestion=f"start one: {HOSTILE}"),
        Effects("none"),
        {
            "code": "server_unavailable",
            "message": f"no tmux server is running\nSuggestion: start one: {HOSTILE}",
            "delivery": "not_sent",
            "effects": NONE_JSON,
        },
    ),
    (
        Refused("stale_reference", f"the reference to pane {HOSTILE} is stale"),
        KNOWN,
        {
            "code": "stale_reference",
            "message": f"the reference to pane {HOSTILE} is stale",
            "delivery": "observed",
            "effects": KNOWN_JSON,
        },
    ),
    (
        Refused("cursor_unknown", "cursor c is not one this schemux server issued", "not_sent"),
        Effects("none"),
        {
            "code": "cursor_unknown",
            "message": "cursor c is not one this schemux server issued",
            "delivery": "not_sent",
            "effects": NONE_JSON,
        },
    ),
    (
        TrackingUnavailable("this kernel cannot open pidfds"),
        Effects("none"),
        {
            "code": "tracking_unavailable",
            "message": "tracking is refused: this kernel cannot open pidfds",
            "delivery": "observed",
            "effects": NONE_JSON,
        },
    ),
    (
        TmuxCommandError("display-message", "can't find pane: %1"),
        KNOWN,
        {
            "code": "tmux_error",
            "message": "tmux display-message failed: can't find pane: %1",
            "delivery": "observed",
            "effects": KNOWN_JSON,
        },
    ),
    (
        UnsendableArgument("tmux set-option cannot be sent: a NUL"),
        Effects("none"),
        {
            "code": "tmux_error",
            "message": "tmux set-option cannot be sent: a NUL",
            "delivery": "not_sent",
            "effects": NONE_JSON,
        },
    ),
    (
        ConnectionLost("the tmux server exited"),
        Effects("none"),
        {
            "code": "connection_lost",
            "message": "the tmux server exited",
            "delivery": "possibly_sent",
            "effects": NONE_JSON,
        },
    ),
    (
        SchemuxError("tmux did not answer within 10 s", suggestion="retry"),
        Effects("none"),
        {
            "code": "tmux_error",
            "message": "tmux did not answer within 10 s\nSuggestion: retry",
            "delivery": "possibly_sent",
            "effects": NONE_JSON,
        },
    ),
]


@pytest.mark.parametrize("tool", ENVELOPE_TOOLS)
@pytest.mark.parametrize(
    ("error", "effects", "expected"),
    ENVELOPES,
    ids=[type(error).__name__ for error, _, _ in ENVELOPES],
)
async def test_the_tmux_family_gets_its_envelope(
    tool: str, error: SchemuxError, effects: Effects, expected: dict[str, Any]
) -> None:
    """One envelope for both tools, checked against each one's outputSchema: the
    structuredContent, the same JSON as text, and isError."""
    failed, text, structured = await outcome(tool, with_effects(error, effects))
    assert failed
    assert structured == {"ok": False, "error": expected}
    assert json.loads(text) == structured


@pytest.mark.parametrize("tool", ENVELOPE_TOOLS)
async def test_the_tmux_family_refusing_before_any_tmux_work_is_text(tool: str) -> None:
    """An error raised outside the call's tmux work (no effects: an argument the handler
    refuses) reads like an invalid argument, as text."""
    error = SchemuxError("socket_name is not a tmux socket name", suggestion="pass a name")
    failed, text, structured = await outcome(tool, error)
    assert failed
    assert structured is None
    assert text == "socket_name is not a tmux socket name\nSuggestion: pass a name"


async def test_an_envelope_that_breaks_the_contract_is_never_sent() -> None:
    """The envelope goes through the outputSchema like any result: four created objects
    are more than the contract's maxItems."""
    many = Effects("known", (SESSION,) * 4)
    failed, text, structured = await outcome("tmux_snapshot", with_effects(Refused("x", "y"), many))
    assert failed
    assert structured is None
    assert "tmux_snapshot produced a result that breaks its own contract" in text


SNAPSHOT = {
    "ok": True,
    "data": {"server": {"socket_path": "/tmp/s", "pid": 1, "version": "3.3"}, "sessions": []},
}


@pytest.mark.parametrize("tool", ["tmux_snapshot", "run_command"])
async def test_an_unexpected_exception_is_a_tool_error_and_the_server_goes_on(
    tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A handler's bug (not a SchemuxError) is a short text error in every family,
    never an envelope; the traceback goes to the log, and the next call is served."""
    calls = 0

    async def call(ctx: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise KeyError(HOSTILE)
        if tool == "run_command":
            return {
                "pane_id": "%1",
                "timed_out": False,
                "elapsed_seconds": 0,
                "effective_timeout": 1,
            }
        return SNAPSHOT

    server = build_server(ServingState(Settings()), {tool: bound(tool, call)})
    async with Client(server) as client:
        result = await client.call_tool(tool, ARGUMENTS[tool])
        assert result.is_error
        assert result.structured_content is None
        [content] = result.content
        assert content.type == "text"
        assert content.text.startswith(f"{tool} failed unexpectedly: KeyError: ")
        assert "(details are in the server's log)" in content.text
        assert any(r.exc_info is not None for r in caplog.records if r.name == "schemux")
        result = await client.call_tool(tool, ARGUMENTS[tool])
        assert not result.is_error, result.content
    assert calls == 2


@pytest.fixture
def no_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TmuxServer:
    """A TmuxServer of an address where no tmux server runs, that fails the test if
    anything is sent to tmux."""
    server = TmuxServer(ServerAddress(socket_path=str(tmp_path / "nothing-runs-here")))

    async def forbidden(*args: str, **kwargs: Any) -> list[str]:
        raise AssertionError(f"tmux was asked {args} on the error path")

    monkeypatch.setattr(server, "run", forbidden)
    monkeypatch.setattr(server, "run_subprocess", forbidden)
    return server


async def test_a_failure_reports_the_sessions_made_during_its_call_without_asking_tmux(
    no_server: TmuxServer,
) -> None:
    earlier = Created("session", "$0", "f" * 32)
    made = Created("session", "$1", "e" * 32)
    no_server.created_sessions.append(earlier)  # by an earlier call: not this one's

    async def work() -> None:
        no_server.created_sessions.append(made)
        raise ConnectionLost("the tmux server exited")

    with pytest.raises(ConnectionLost) as caught:
        await reporting_effects(no_server, work())
    assert caught.value.effects == Effects("known", (made,))


async def test_a_failure_that_made_nothing_says_so(no_server: TmuxServer) -> None:
    with pytest.raises(UnsendableArgument) as caught:
        await reporting_effects(no_server, raising_work(UnsendableArgument("a NUL")))
    assert caught.value.effects == Effects("none")


async def test_attempt_leaves_results_and_bugs_alone(no_server: TmuxServer) -> None:
    async def fine() -> int:
        return 7

    assert await reporting_effects(no_server, fine()) == 7
    with pytest.raises(KeyError):
        await reporting_effects(no_server, raising_work(KeyError("bug")))


async def raising_work(error: BaseException) -> None:
    raise error
