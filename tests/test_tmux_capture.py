"""tmux_capture against real tmux servers: exact rows, exact deltas, references that
bind to one live pane, and each failure with its own code."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.host_settings import SshTarget
from schemux.names import OWNED_SESSION
from schemux.panes.identity import peer_pidfd_problem
from schemux.serving.server import call_bound_tool
from schemux.serving.state import ServingState
from schemux.tmux.references import ServerIdentity
from tests.contexts import Contexts
from tests.support import Pane, new_pane, pane_format, private_tmux_server, tmux, until

pytestmark = pytest.mark.anyio

IDLE = "exec sleep 100000"


async def capture(ctx: ServingState, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """(is_error, structuredContent) of one call through the whole pipeline."""
    result = await call_bound_tool(BINDINGS["tmux_capture"], ctx, arguments)
    assert result.structured_content is not None, result.content
    return bool(result.is_error), result.structured_content


async def rows_of(ctx: ServingState, pane: Pane, **arguments: Any) -> list[str]:
    failed, result = await capture(ctx, target=pane.reference(), **arguments)
    assert not failed, result
    rows: list[str] = result["data"]["rows"]
    return rows


async def error_of(ctx: ServingState, **arguments: Any) -> dict[str, Any]:
    failed, result = await capture(ctx, **arguments)
    assert failed, result
    assert result["ok"] is False
    error: dict[str, Any] = result["error"]
    return error


def apply(rows: list[str], splice: dict[str, Any]) -> list[str]:
    start, delete = splice["start"], splice["delete"]
    inserted: list[str] = splice["rows"]
    return rows[:start] + inserted + rows[start + delete :]


class Screen:
    """Writes bytes to a pane's terminal as its program would, and waits until tmux has
    taken them all in (a title set last is seen)."""

    def __init__(self, pane: Pane) -> None:
        self.pane = pane
        self.tty = os.open(pane_format(pane, "#{pane_tty}"), os.O_WRONLY | os.O_NOCTTY)
        self.count = 0

    async def write(self, data: bytes) -> None:
        self.count += 1
        marker = f"sync-{self.count}"
        os.write(self.tty, data + f"\033]2;{marker}\033\\".encode())
        await until(lambda: pane_format(self.pane, "#{pane_title}") == marker)

    def close(self) -> None:
        os.close(self.tty)


@pytest.fixture
def context(
    make_context: Contexts, tmux_socket: str, transport_ssh: SshTarget | None
) -> ServingState:
    """Untracked reads on this machine, and over ssh to it (``tests.ssh_server``)."""
    return make_context(socket_name=tmux_socket, ssh=transport_ssh)


@pytest.fixture(params=["peer-pidfd", "pidfd-open"])
def tracked(
    request: pytest.FixtureRequest, make_context: Contexts, tmux_socket: str
) -> ServingState:
    """A context for tracked reads, once with each way of binding the server's identity
    (``SCHEMUX_TRACKING_BACKEND``; peer-pidfd needs Linux 6.5+)."""
    no_peer_pidfd = peer_pidfd_problem()
    if request.param == "peer-pidfd" and no_peer_pidfd is not None:
        pytest.skip(f"this kernel has no peer pidfds: {no_peer_pidfd}")
    return make_context(socket_name=tmux_socket, tracking_backend=request.param)


@pytest.fixture
def screen(tmux_socket: str) -> Iterator[Screen]:
    pane = new_pane(tmux_socket, command=IDLE, width=20, height=5)
    screen = Screen(pane)
    yield screen
    screen.close()


async def test_rows_keep_trailing_spaces_and_lf(context: ServingState, screen: Screen) -> None:
    await screen.write(b"a  \r\n  b \r\n")
    rows = await rows_of(context, screen.pane)
    assert rows == ["a  \n", "  b \n", "\n", "\n", "\n"]


async def test_an_empty_pane(context: ServingState, screen: Screen) -> None:
    failed, result = await capture(context, target=screen.pane.reference())
    assert not failed
    data = result["data"]
    assert data["rows"] == ["\n"] * 5
    assert (data["row_count"], data["bytes"], data["truncated"]) == (5, 5, False)


async def test_a_wrapped_line_is_the_rows_the_screen_shows(
    context: ServingState, screen: Screen
) -> None:
    await screen.write(b"x" * 45 + b"\r\nend")
    rows = await rows_of(context, screen.pane)
    assert rows == ["x" * 20 + "\n", "x" * 20 + "\n", "x" * 5 + "\n", "end\n", "\n"]


async def test_wide_characters_and_combining_marks(context: ServingState, screen: Screen) -> None:
    # a wide character that no longer fits on the row wraps whole to the next one
    await screen.write("0123456789012345678\u4e2d\u6587\r\ne\u0301 a\u0308\r\n".encode())
    rows = await rows_of(context, screen.pane)
    assert rows[:3] == ["0123456789012345678\n", "\u4e2d\u6587\n", "e\u0301 a\u0308\n"]


async def test_alternate_screen(context: ServingState, screen: Screen) -> None:
    await screen.write(b"normal\r\n")
    await screen.write(b"\033[?1049h\033[H\033[2Jfull-screen program")
    rows = await rows_of(context, screen.pane)
    assert rows[0] == "full-screen program\n"
    assert "normal\n" not in rows
    await screen.write(b"\033[?1049l")
    assert (await rows_of(context, screen.pane))[0] == "normal\n"


async def test_copy_mode_shows_the_program_screen_not_the_mode(
    context: ServingState, screen: Screen
) -> None:
    await screen.write(b"under copy mode\r\n")
    before = await rows_of(context, screen.pane)
    tmux(screen.pane.socket_name, "copy-mode", "-t", screen.pane.pane_id)
    await until(lambda: pane_format(screen.pane, "#{pane_in_mode}") == "1")
    assert await rows_of(context, screen.pane) == before


async def test_history_rows_and_limits(context: ServingState, screen: Screen) -> None:
    await screen.write(b"".join(b"%d\r\n" % n for n in range(1, 21)))
    rows = await rows_of(context, screen.pane, history_lines=1000)
    assert rows == [f"{n}\n" for n in range(1, 21)] + ["\n"]
    _, result = await capture(
        context, target=screen.pane.reference(), history_lines=1000, max_lines=3
    )
    assert result["data"]["rows"] == ["19\n", "20\n", "\n"]
    assert result["data"]["truncated"] is True
    assert result["data"]["history_continuity"] == "unknown"


async def test_interval_is_monotonic_and_brackets_the_capture(
    context: ServingState, screen: Screen
) -> None:
    before = time.monotonic()
    _, first = await capture(context, target=screen.pane.reference())
    _, second = await capture(context, target=screen.pane.reference())
    after = time.monotonic()
    one, two = first["data"]["interval"], second["data"]["interval"]
    assert before <= one["started"] <= one["finished"] <= two["started"] <= two["finished"]
    assert two["finished"] <= after
    assert first["data"]["capture_id"] != second["data"]["capture_id"]


_WRITES = st.lists(
    st.one_of(
        st.tuples(
            st.integers(1, 5),
            st.integers(1, 20),
            st.text(alphabet="ab \u4e2de\u0301", min_size=0, max_size=8),
        ).map(lambda w: f"\033[{w[0]};{w[1]}H{w[2]}".encode()),
        st.integers(1, 5).map(lambda row: f"\033[{row};1H\033[2K".encode()),
        st.just(b"\033[5;1H\r\n"),  # scroll one row into the history
        st.text(alphabet="xyz", min_size=15, max_size=30).map(
            lambda text: f"\033[3;1H{text}".encode()  # wraps
        ),
    ),
    min_size=1,
    max_size=4,
)


@pytest.mark.long
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(_WRITES, min_size=1, max_size=4), history=st.sampled_from([0, 3]))
def test_a_delta_is_exact(
    tmux_socket: str, screen: Screen, steps: list[list[bytes]], history: int
) -> None:
    """Each splice applied to the rows before gives, byte for byte, what a fresh snapshot
    of the same moment gives."""

    async def run() -> None:
        ctx = ServingState(Settings(socket_name=tmux_socket))
        try:
            await screen.write(b"\033c\033[3J")  # reset: a clean screen and no history
            failed, result = await capture(
                ctx, target=screen.pane.reference(), history_lines=history, track=True
            )
            assert not failed, result
            rows, cursor = result["data"]["rows"], result["data"]["next_cursor"]
            for step in steps:
                await screen.write(b"".join(step))
                failed, delta = await capture(ctx, target=screen.pane.reference(), cursor=cursor)
                assert not failed, delta
                rows = apply(rows, delta["data"]["splice"])
                fresh = await rows_of(ctx, screen.pane, history_lines=history)
                assert rows == fresh
                assert delta["data"]["row_count"] == len(fresh)
                cursor = delta["data"]["next_cursor"]
        finally:
            await ctx.close()

    asyncio.run(run())


async def test_one_changed_row_is_a_one_row_splice(tracked: ServingState, screen: Screen) -> None:
    await screen.write(b"one\r\ntwo\r\nthree")
    _, first = await capture(tracked, target=screen.pane.reference(), track=True)
    await screen.write(b"\033[2;1H\033[2KTWO")
    _, delta = await capture(
        tracked, target=screen.pane.reference(), cursor=first["data"]["next_cursor"]
    )
    data = delta["data"]
    assert data["splice"] == {"start": 1, "delete": 1, "rows": ["TWO\n"]}
    assert data["reset"] is False
    assert data["base_capture_id"] == first["data"]["capture_id"]
    assert data["process_generation"] == first["data"]["process_generation"]


async def test_a_cursor_can_be_read_again(tracked: ServingState, screen: Screen) -> None:
    _, first = await capture(tracked, target=screen.pane.reference(), track=True)
    cursor = first["data"]["next_cursor"]
    await screen.write(b"changed")
    _, one = await capture(tracked, target=screen.pane.reference(), cursor=cursor)
    _, two = await capture(tracked, target=screen.pane.reference(), cursor=cursor)
    assert one["data"]["splice"] == two["data"]["splice"]
    assert one["data"]["next_cursor"] != two["data"]["next_cursor"]


async def test_a_respawned_pane_is_reported(tracked: ServingState, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command=IDLE, width=20, height=3)
    _, first = await capture(tracked, target=pane.reference(), track=True)
    generation = first["data"]["process_generation"]
    assert generation == f"linux:{pane_format(pane, '#{pane_pid}')}:" + generation.split(":")[2]
    tmux(tmux_socket, "respawn-pane", "-k", "-t", pane.pane_id, IDLE)
    _, delta = await capture(tracked, target=pane.reference(), cursor=first["data"]["next_cursor"])
    assert delta["data"]["process_generation"] not in (None, generation)
    assert delta["data"]["reset"] is True
    assert delta["data"]["splice"]["start"] == 0
    assert delta["data"]["splice"]["delete"] == len(first["data"]["rows"])


async def test_a_pane_that_died_since_the_cursor(tracked: ServingState, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command="read line; echo bye", width=20, height=3)
    tmux(tmux_socket, "set-option", "-p", "-t", pane.pane_id, "remain-on-exit", "on")
    _, first = await capture(tracked, target=pane.reference(), track=True)
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "Enter")
    await until(lambda: pane_format(pane, "#{pane_dead}") == "1")
    failed, delta = await capture(
        tracked, target=pane.reference(), cursor=first["data"]["next_cursor"]
    )
    assert not failed, delta
    assert delta["data"]["process_generation"] is None  # no process runs there now
    assert await rows_of(tracked, pane) == apply(first["data"]["rows"], delta["data"]["splice"])


async def test_a_dead_pane_is_read_but_not_tracked(tracked: ServingState, tmux_socket: str) -> None:
    # the words are on the screen before the program ends (tmux 3.3a can lose the output
    # of a program whose terminal closes at once)
    pane = new_pane(
        tmux_socket, command="echo last words; sleep 0.3", remain_on_exit=True, width=20
    )
    # tmux scrolls the pane before it writes "Pane is dead" on the last row
    failed, result = await capture(tracked, target=pane.reference(), history_lines=10)
    assert not failed
    assert result["data"]["rows"][0] == "last words\n"
    assert result["data"]["process_generation"] is None
    error = await error_of(tracked, target=pane.reference(), track=True)
    assert (error["code"], error["delivery"]) == ("pane_dead", "observed")


def start_server(socket_name: str) -> bool:
    try:
        tmux(socket_name, "-f", "/dev/null", "new-session", "-d", "-s", "again")
    except RuntimeError:
        return False
    return True


async def test_a_reference_from_before_a_server_restart_reads_nothing() -> None:
    with private_tmux_server("restart") as socket_name:
        context = ServingState(Settings(socket_name=socket_name))
        try:
            pane = new_pane(socket_name, command=IDLE)
            old_reference = pane.reference()
            await rows_of(context, pane)
            tmux(socket_name, "kill-server")
            # the old server may still be going away
            await until(lambda: start_server(socket_name))
            for _ in range(int(pane.pane_id[1:]) + 2):  # the same pane id exists again
                tmux(
                    socket_name,
                    "new-window",
                    "-d",
                    "-t",
                    "again:",
                    "echo new-server-pane; sleep 100",
                )
            assert pane.pane_id in tmux(socket_name, "list-panes", "-a", "-F", "#{pane_id}")
            error = await error_of(context, target=old_reference)
            assert error["code"] == "stale_reference"
            assert "outside this live binding" in error["message"]
            assert "new-pane" not in str(error)
        finally:
            await context.close()


async def test_a_closed_pane(context: ServingState, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command=IDLE)
    reference = pane.reference()
    tmux(tmux_socket, "kill-pane", "-t", pane.pane_id)
    error = await error_of(context, target=reference)
    assert error["code"] == "pane_closed"


async def test_bad_cursors(tracked: ServingState, tmux_socket: str) -> None:
    one, other = new_pane(tmux_socket, command=IDLE), new_pane(tmux_socket, command=IDLE)
    error = await error_of(tracked, target=one.reference(), cursor="a" * 32)
    assert (error["code"], error["delivery"]) == ("cursor_unknown", "not_sent")
    _, first = await capture(tracked, target=one.reference(), track=True)
    error = await error_of(tracked, target=other.reference(), cursor=first["data"]["next_cursor"])
    assert (error["code"], error["delivery"]) == ("cursor_target_mismatch", "not_sent")
    assert one.pane_id in error["message"]


async def test_a_capture_hook_is_never_run(context: ServingState, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command=IDLE)
    tmux(tmux_socket, "set-hook", "-g", "after-capture-pane", "set-option -g @schemux_hooked 1")
    try:
        error = await error_of(context, target=pane.reference())
    finally:
        tmux(tmux_socket, "set-hook", "-gu", "after-capture-pane")
    assert error["code"] == "capture_hook_set"
    assert tmux(tmux_socket, "show-options", "-gqv", "@schemux_hooked").strip() == ""


async def test_schemux_own_pane_is_never_captured(context: ServingState, tmux_socket: str) -> None:
    pane = new_pane(tmux_socket, command=IDLE)
    await rows_of(context, pane)  # the owned session exists now
    owned_pane = tmux(
        tmux_socket, "display-message", "-p", "-t", f"={OWNED_SESSION}:", "#{pane_id}"
    )
    owned = Pane(tmux_socket, owned_pane.strip(), "", "", OWNED_SESSION)
    error = await error_of(context, target=owned.reference())
    assert error["code"] == "reserved_pane"


async def test_a_failed_first_call_reports_the_session_it_created() -> None:
    with private_tmux_server("effects") as socket_name:
        context = ServingState(Settings(socket_name=socket_name))
        try:
            reference = {"kind": "pane", "id": "%0", "generation": "stale"}
            error = await error_of(context, target=reference)
            [created] = error["effects"]["created"]
            assert error["effects"]["state"] == "known"
            owned_id = tmux(
                socket_name, "display-message", "-p", "-t", f"={OWNED_SESSION}:", "#{session_id}"
            )
            assert (created["kind"], created["id"]) == ("session", owned_id.strip())
            identity = tmux(
                socket_name, "display-message", "-p", "#{pid} #{start_time} #{socket_path}"
            )
            pid, start_time, socket_path = identity.strip().split(" ", 2)
            server = ServerIdentity(int(pid), int(start_time), socket_path)
            assert created["generation"] == server.generation(owned_id.strip())
            error = await error_of(context, target=reference)  # nothing created this time
            assert error["effects"] == {"state": "none", "created": []}
        finally:
            await context.close()
