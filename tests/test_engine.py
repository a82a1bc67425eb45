"""The control-mode engine against real tmux servers on private sockets."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from schemux.errors import SchemuxError, TmuxCommandError
from schemux.names import OWNED_SESSION
from schemux.panes.targets import PaneTarget, resolve_pane
from schemux.tmux.command import THEN, command_line
from schemux.tmux.control.connection import Notification, parse_notification
from schemux.tmux.control.engine import SPARE_CLIENTS
from schemux.tmux.format import decode, field
from schemux.tmux.server import ServerAddress, TmuxServer
from tests.process_table import alive, running_with_argument
from tests.support import (
    control_client_pid,
    new_pane,
    private_tmux_server,
    spares_started,
    tmux,
    until,
    wait_until,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def socket() -> Iterator[str]:
    with private_tmux_server("engine") as socket_name:
        yield socket_name


@pytest.fixture
async def server(anyio_backend: str, socket: str) -> AsyncIterator[TmuxServer]:
    tmux_server = TmuxServer(ServerAddress(socket_name=socket))
    yield tmux_server
    await tmux_server.close()


def subprocess_lines(socket: str, *args: str) -> list[str]:
    out = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, check=True).stdout
    text = out.decode("utf-8", "surrogateescape")
    return text.split("\n")[:-1] if text else []


def raw_output(socket: str, *args: str) -> str:
    out = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, check=True).stdout
    return out.decode("utf-8", "surrogateescape")


# (only tmux_command.THEN separates commands; an argument equal to ";" is quoted like any other)
QUOTING_CASES = [
    "; ",
    "\\;",
    "a ; b",
    "a;b",
    "#{pane_id}",
    "#(echo hi)",
    "'",
    "it's",
    "'\"'\"",
    '"',
    "$HOME",
    "${HOME}",
    "~",
    "~/x",
    "\\",
    "a\\nb\\",
    "\\'",
    "line one\nline two\n",
    "tab\there",
    "\r\x01\x1b[31m\x7f",
    "unicode é € 😀 漢字",
    "{",
    "}",
    "{ display-message -p x }",
    "%if 1",
    "-t",
    "--",
    "",
    " leading and trailing ",
    "\udcff\udcfe binary",
    "x" * 100_000,
]


def test_command_line_shape() -> None:
    assert command_line(("display-message", "-p", "it's")) == (
        b"'display-message' '-p' 'it'\\''s'\n"
    )
    assert command_line(("a", THEN, "b\n")) == b"'a' ; 'b'\\012''\n"
    assert command_line(("a", ";", "b")) == b"'a' ';' 'b'\n"
    with pytest.raises(ValueError, match="NUL"):
        command_line(("a\x00",))


def test_notification_parsing() -> None:
    assert parse_notification("%output %1 a b\\012") == Notification(
        "output", ("%1", "a b\\012"), "%output %1 a b\\012"
    )
    assert parse_notification("%window-close @3").args == ("@3",)
    assert parse_notification("%exit").args == ()


@pytest.fixture(scope="module")
def quoting_socket() -> Iterator[str]:
    """One server for the quoting table: each value is set over the one before it, and
    read back, so no value's test sees another's."""
    with private_tmux_server("engine-quoting") as socket_name:
        yield socket_name


@pytest.fixture(scope="module")
async def quoting_server(anyio_backend: str, quoting_socket: str) -> AsyncIterator[TmuxServer]:
    tmux_server = TmuxServer(ServerAddress(socket_name=quoting_socket))
    yield tmux_server
    await tmux_server.close()


@pytest.mark.parametrize("value", QUOTING_CASES, ids=range(len(QUOTING_CASES)))
async def test_arguments_arrive_verbatim(
    quoting_server: TmuxServer, quoting_socket: str, value: str
) -> None:
    """Read back through tmux_format's field (tmux 3.4 and 3.5 escape what show-options
    prints: its raw text is not the value there)."""
    server, socket = quoting_server, quoting_socket
    await server.run("set-option", "-g", "@q", value)
    shown = await server.run("display-message", "-p", field("@q"))
    assert [decode(line) for line in shown] == [value]
    assert subprocess_lines(socket, "display-message", "-p", field("@q")) == shown
    if value == "" or value.startswith("-"):
        return  # set-buffer takes these as no data or as flags
    await server.run("set-buffer", "-b", "q", value)
    # (show-buffer escapes what it prints to a client attached to a session: read it raw)
    assert raw_output(socket, "show-buffer", "-b", "q") == value


async def test_send_keys_literal_arrives(server: TmuxServer, socket: str) -> None:
    pane = new_pane(socket, command="cat", width=200)
    text = 'a;b #{pane_id} #(echo hi) it\'s "q" $HOME ~ \\ é😀 ' + "y" * 1000
    await server.run("send-keys", "-t", pane.pane_id, "-l", text)
    await server.run("send-keys", "-t", pane.pane_id, "Enter")

    def captured() -> str:
        lines = subprocess_lines(socket, "capture-pane", "-p", "-J", "-t", pane.pane_id)
        return "".join(line for line in lines if line)

    await until(lambda: captured() == text + text)  # the tty's echo, then cat's copy


async def test_protocol_lookalike_and_binary_output(server: TmuxServer, socket: str) -> None:
    script = "printf '%%end 1 2 0\\n%%error x\\n%%begin 1 2 3\\n\\377\\376\\001 bin\\n'; exec cat"
    pane = new_pane(socket, command=script)
    await until(lambda: "bin" in tmux(socket, "capture-pane", "-p", "-t", pane.pane_id))
    through_engine = await server.run("capture-pane", "-p", "-t", pane.pane_id)
    assert through_engine[:3] == ["%end 1 2 0", "%error x", "%begin 1 2 3"]
    assert through_engine == subprocess_lines(socket, "capture-pane", "-p", "-t", pane.pane_id)
    assert await server.run("display-message", "-p", "still in step") == ["still in step"]


async def test_a_one_megabyte_line(server: TmuxServer) -> None:
    big = "".join(chr(0x41 + i % 26) for i in range(1 << 20))
    await server.run("set-buffer", "-b", "big", big)
    assert await server.run("show-buffer", "-b", "big") == [big]
    assert await server.run("display-message", "-p", "after") == ["after"]


async def test_two_hundred_pipelined_commands(server: TmuxServer, socket: str) -> None:
    pane = new_pane(socket)
    answers = await asyncio.gather(
        *(server.run("display-message", "-p", "-t", pane.pane_id, f"n{i}") for i in range(200))
    )
    assert answers == [[f"n{i}"] for i in range(200)]


async def test_notifications_between_replies(server: TmuxServer, socket: str) -> None:
    busy = new_pane(socket, command="yes")  # a pane printing a lot the whole time
    seen: list[Notification] = []
    added = asyncio.Event()

    def notify(notification: Notification) -> None:
        seen.append(notification)
        if notification.name == "unlinked-window-add":
            added.set()

    watcher = await server.engine.open_watcher(notify)
    try:

        async def churn(i: int) -> list[str]:
            return await server.run(
                "new-window", "-d", "-t", f"={busy.session_name}:", "-P", "-F", f"w{i}",
                "true", THEN, "display-message", "-p", f"d{i}",
            )  # fmt: skip

        answers = await asyncio.gather(*(churn(i) for i in range(50)))
        assert answers == [[f"w{i}", f"d{i}"] for i in range(50)]
        await asyncio.wait_for(added.wait(), 2)
        assert {n.name for n in seen} >= {"unlinked-window-add"}
    finally:
        await watcher.close()


async def test_errors_and_command_lists(server: TmuxServer, socket: str) -> None:
    with pytest.raises(TmuxCommandError) as caught:
        await server.run("kill-pane", "-t", "%999")
    assert caught.value.command == "kill-pane"
    assert caught.value.stderr in ("can't find pane: %999", "no such pane: %999")
    # one line, several blocks: if-shell runs further commands, each answered
    lines = await server.run(
        "display-message", "-p", "a", THEN, "if-shell", "-F", "1",
        "display-message -p b ; display-message -p c",
    )  # fmt: skip
    assert lines == ["a", "b", "c"]
    with pytest.raises(TmuxCommandError):
        await server.run("display-message", "-p", "a", THEN, "kill-pane", "-t", "%999")
    assert await server.run("display-message", "-p", "in step") == ["in step"]


async def test_cancelled_call_keeps_the_connection_in_step(server: TmuxServer) -> None:
    await server.run("display-message", "-p", "warm")
    slow = asyncio.ensure_future(server.run("run-shell", "sleep 0.3; echo slow"))
    await asyncio.sleep(0.05)
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    answers = await asyncio.gather(
        *(server.run("display-message", "-p", f"after{i}") for i in range(20))
    )
    assert answers == [[f"after{i}"] for i in range(20)]


async def test_timeout_restarts_the_connection(server: TmuxServer) -> None:
    await server.run("display-message", "-p", "warm")
    engine = server.engine
    first = await control_client_pid(server)
    engine.timeout = 0.3
    try:
        with pytest.raises(SchemuxError, match="did not answer"):
            await server.run("run-shell", "sleep 1")
    finally:
        engine.timeout = 10.0
    assert await server.run("display-message", "-p", "again") == ["again"]
    assert await control_client_pid(server) != first


async def test_a_command_queued_behind_others_waits_for_its_turn(server: TmuxServer) -> None:
    """tmux answers one client's commands in order: eight of a quarter second each, sent
    at once, take two seconds, and the last is not overdue at one (the timeout counts from
    the answer before it)."""
    await server.run("display-message", "-p", "warm")
    engine = server.engine
    first = await control_client_pid(server)
    engine.timeout = 1.0
    try:
        answers = await asyncio.gather(
            *(
                server.run("run-shell", "sleep 0.25", THEN, "display-message", "-p", str(n))
                for n in range(8)
            )
        )
    finally:
        engine.timeout = 10.0
    assert answers == [[str(n)] for n in range(8)]
    assert await control_client_pid(server) == first


async def test_server_killed_mid_command(server: TmuxServer, socket: str) -> None:
    """A command under way when its server is killed fails at once, saying the server
    exited: well before the command's own end or the engine's timeout (made long here,
    so that a loaded machine's slowness is never taken for either)."""
    server.engine.timeout = 60.0
    assert await server.run("display-message", "-p", "up") == ["up"]
    await spares_started(server)
    pid = await control_client_pid(server)
    server_pid = int((await server.run("display-message", "-p", "#{pid}"))[0])
    duration = f"120.{uuid.uuid4().int % 10**9}"  # its own argument, to find the sleep by
    pending = asyncio.ensure_future(server.run("run-shell", f"sleep {duration}"))
    try:
        await until(lambda: running_with_argument(duration))  # the command runs
        started = time.monotonic()
        os.kill(server_pid, signal.SIGKILL)
        with pytest.raises(SchemuxError, match="exited"):
            await asyncio.wait_for(pending, server.engine.timeout)
        assert time.monotonic() - started < server.engine.timeout / 2
    finally:  # the killed server's job outlives it
        for sleeper in running_with_argument(duration):
            with contextlib.suppress(ProcessLookupError):
                os.kill(sleeper, signal.SIGKILL)
    with pytest.raises(SchemuxError, match="no tmux server is running"):
        await server.run("display-message", "-p", "x")
    await until(lambda: not alive(pid))
    await until(  # a new server on the same socket, once the old one is gone
        lambda: (
            subprocess.run(
                ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "keepalive"],
                capture_output=True,
            ).returncode
            == 0
        )
    )
    assert await server.run("display-message", "-p", "back") == ["back"]
    assert await control_client_pid(server) != pid
    # the spares of the server that died are not counted: new ones started with it,
    # since a wait has wanted them
    assert len(control_client_pids(socket)) == 1 + SPARE_CLIENTS


async def test_a_command_written_to_a_client_that_just_died_leaves_no_unretrieved_error(
    server: TmuxServer,
) -> None:
    """The write breaks the pipe before the reader sees the client's end; the ended
    connection is then dropped without ``close``. Python 3.11.0-3.11.2 (Debian 12's)
    report that broken pipe as "Future exception was never retrieved" unless something
    waited for the pipe's close (seen as a flake of the tmux_capture restart test)."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        pid = await control_client_pid(server)
        os.kill(pid, signal.SIGKILL)
        # blocking on purpose: the loop must not read the client's end before the write
        wait_until(lambda: not alive(pid), timeout=10)
        with pytest.raises(SchemuxError, match="control client ended"):
            await server.run("display-message", "-p", "into the broken pipe")
        assert await server.run("display-message", "-p", "again") == ["again"]
        await asyncio.sleep(0.1)  # the dropped connection's reader ends
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(handler)
    assert reported == []


async def test_no_server() -> None:
    address = ServerAddress(socket_name=f"schemux-test-never-started-{os.getpid()}")
    server = TmuxServer(address)
    with pytest.raises(SchemuxError, match="no tmux server is running on socket name"):
        await server.run("display-message", "-p", "x")
    await server.close()


async def test_close_ends_the_control_client(server: TmuxServer) -> None:
    pid = await control_client_pid(server)
    await server.close()
    assert not alive(pid)
    assert await server.run("display-message", "-p", "y") == ["y"]


async def test_the_user_sees_only_the_owned_session(server: TmuxServer, socket: str) -> None:
    pane = new_pane(socket, width=100, height=30)
    pid = await control_client_pid(server)
    sessions = subprocess_lines(socket, "list-sessions", "-F", "#{session_name}")
    assert OWNED_SESSION in sessions
    assert subprocess_lines(socket, "list-clients", "-t", f"={pane.session_name}") == []
    clients = subprocess_lines(socket, "list-clients", "-F", "#{client_session} #{client_pid}")
    assert clients == [f"{OWNED_SESSION} {pid}"]  # no spare before a wait or watch wants one
    await spares_started(server)
    clients = subprocess_lines(socket, "list-clients", "-F", "#{client_session} #{client_pid}")
    # the shared client and its spares, all on the owned session
    assert len(clients) == 1 + SPARE_CLIENTS
    assert {client.split()[0] for client in clients} == {OWNED_SESSION}
    assert f"{OWNED_SESSION} {pid}" in clients
    size = subprocess_lines(
        socket, "display-message", "-p", "-t", pane.pane_id, "#{window_width}x#{window_height}"
    )
    assert size == ["100x30"]


async def test_default_target_ignores_the_owned_session(server: TmuxServer, socket: str) -> None:
    older = new_pane(socket)
    newer = new_pane(socket)
    await server.run("display-message", "-p", "attach first")  # the owned session is newest
    pane = await resolve_pane(server, PaneTarget(), None)
    assert pane.session_name != OWNED_SESSION
    assert pane.pane_id == newer.pane_id
    assert pane.pane_id != older.pane_id
    with pytest.raises(SchemuxError, match="the window of schemux's control clients"):
        await resolve_pane(server, PaneTarget(session_name=OWNED_SESSION), None)


def test_a_finished_event_loop_ends_its_control_client(socket: str) -> None:
    """asyncio.run cancels every task at its end: the reader then ends the process."""
    server = TmuxServer(ServerAddress(socket_name=socket))

    async def use() -> int:
        assert await server.run("display-message", "-p", "x") == ["x"]
        return await control_client_pid(server)

    first = asyncio.run(use())
    assert not alive(first)
    second = asyncio.run(use())  # same engine, a new loop: a new connection
    assert second != first
    assert not alive(second)


async def test_a_failing_watcher_does_not_end_its_connection(server: TmuxServer) -> None:
    def broken(notification: Notification) -> None:
        raise RuntimeError("watcher bug")

    await server.run("display-message", "-p", "start")
    watcher = await server.engine.open_watcher(broken)
    try:
        pid = (await watcher.run("display-message", "-p", "#{client_pid}"))[0]
        await server.run("new-session", "-d", "-s", "churn", "cat")
        await server.run("new-window", "-d", "-t", "=churn:", "true")
        assert await watcher.run("display-message", "-p", "ok") == ["ok"]
        assert watcher.alive
        assert (await watcher.run("display-message", "-p", "#{client_pid}"))[0] == pid
    finally:
        await watcher.close()


@pytest.mark.long
async def test_clients_ended_while_attaching_leave_tmux_running(
    server: TmuxServer, socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tmux 3.3a dereferences a NULL control state (control_stop) when a control client
    dies after announcing itself and before its identification ends: waits cancelled
    at every moment of their clients' start (the engine closed while it starts, as on
    schemux's exit) must leave the server up."""
    for index in range(300):  # one identification message each: a longer window
        monkeypatch.setenv(f"SCHEMUX_TEST_PAD_{index}", "x" * 60)
    pid = tmux(socket, "display-message", "-p", "#{pid}").strip()
    await server.run("display-message", "-p", "the owned session made")
    await server.close()
    monkeypatch.setattr(server.engine, "prepare", lambda starter: None)  # straight to the clients
    for attempt in range(100):
        running = asyncio.ensure_future(server.run("display-message", "-p", "x"))
        await asyncio.sleep((attempt % 10) * 0.0006)
        await server.close()
        with contextlib.suppress(asyncio.CancelledError, SchemuxError):
            await running
    assert tmux(socket, "display-message", "-p", "#{pid}").strip() == pid


async def test_a_pane_id_with_its_session_is_resolved_in_one_round_trip(
    server: TmuxServer, socket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pane = new_pane(socket)
    await server.run("display-message", "-p", "warm")
    commands: list[str] = []
    run = server.run

    async def counted(*args: str) -> list[str]:
        commands.append(args[0])
        return await run(*args)

    monkeypatch.setattr(server, "run", counted)
    target = PaneTarget(pane_id=pane.pane_id, session_name=pane.session_name)
    found = await resolve_pane(server, target, None)
    assert (found.pane_id, found.session_id) == (pane.pane_id, pane.session_id)
    assert commands == ["list-panes"]
    with pytest.raises(SchemuxError, match="no pane matches"):
        await resolve_pane(server, PaneTarget(pane_id="%99999"), None)


def control_client_pids(socket: str) -> set[str]:
    """The pids of the control clients attached (plain clients such as ``wait-for`` have
    no session, so tmux does not list them)."""
    return set(subprocess_lines(socket, "list-clients", "-F", "#{client_pid}"))


async def test_waits_and_watches_start_no_control_client_after_the_first(
    server: TmuxServer, socket: str
) -> None:
    await server.run("display-message", "-p", "start")
    assert len(control_client_pids(socket)) == 1  # the spares start with the first wait
    await spares_started(server)
    started = control_client_pids(socket)
    assert len(started) == 1 + SPARE_CLIENTS
    for attempt in range(10):  # given up: the client stays blocked until the signal
        waiting = asyncio.ensure_future(server.wait(f"given-up-{attempt}"))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        await server.run("wait-for", "-S", "--", f"given-up-{attempt}")
    # more waits at once than spares: the others are plain wait-for clients
    waits = [asyncio.ensure_future(server.wait(f"together-{n}")) for n in range(SPARE_CLIENTS + 3)]
    await asyncio.sleep(0.2)
    for n in range(SPARE_CLIENTS + 3):
        await server.run("wait-for", "-S", "--", f"together-{n}")
    await asyncio.wait_for(asyncio.gather(*waits), 5)
    for _ in range(5):
        watcher = await server.engine.open_watcher(lambda notification: None)
        assert await watcher.run("display-message", "-p", "watching") == ["watching"]
        await watcher.close()
    assert control_client_pids(socket) == started
    flags = subprocess_lines(socket, "list-clients", "-F", "#{client_flags}")
    assert all("no-output" in client for client in flags)  # the watchers' output is off again


async def test_the_first_watch_starts_the_spares_and_borrows_one(
    server: TmuxServer, socket: str
) -> None:
    """An engine that has only run commands has one client; the first watch starts the
    spares (all at once) and borrows one of them, which it gives back."""
    await server.run("display-message", "-p", "start")
    assert len(control_client_pids(socket)) == 1
    watcher = await server.engine.open_watcher(lambda notification: None)
    try:
        assert await watcher.run("display-message", "-p", "watching") == ["watching"]
        started = control_client_pids(socket)
        assert len(started) == 1 + SPARE_CLIENTS
    finally:
        await watcher.close()
    assert control_client_pids(socket) == started  # given back and kept, none ended


async def test_a_watcher_borrowed_after_another_gets_output_of_a_pane_it_paused(
    server: TmuxServer, socket: str
) -> None:
    pane = new_pane(socket, command="cat")
    await server.run("link-window", "-d", "-s", pane.window_id, "-t", f"={OWNED_SESSION}:")
    outputs: list[str] = []
    first = await server.engine.open_watcher(lambda notification: None)
    await first.run("refresh-client", "-A", f"{pane.pane_id}:pause")
    await first.close()
    heard = asyncio.Event()

    def notify(notification: Notification) -> None:
        if notification.name == "output" and notification.args[0] == pane.pane_id:
            outputs.append(notification.args[-1])
            heard.set()

    second = await server.engine.open_watcher(notify)
    try:
        await second.run("refresh-client", "-A", f"{pane.pane_id}:continue")
        await server.run("send-keys", "-t", pane.pane_id, "-l", "hello")
        await asyncio.wait_for(heard.wait(), 5)
        assert "hello" in "".join(outputs)
    finally:
        await second.close()
        await server.run("unlink-window", "-t", f"={OWNED_SESSION}:{pane.window_id}")


async def test_waits_and_watches_beside_a_churning_server_leave_it_running(
    server: TmuxServer, socket: str
) -> None:
    """tmux 3.3a to 3.5a crash when a notification (here: sessions made and closed,
    panes killed) reaches a control client still identifying itself; schemux starts its
    control clients once, so no number of waits and watches gives tmux that moment."""
    pid = tmux(socket, "display-message", "-p", "#{pid}").strip()
    await server.run("display-message", "-p", "start")
    stop = False

    def churn() -> int:
        cycles = 0
        while not stop:
            name = f"churn-{cycles}"
            tmux(socket, "new-session", "-d", "-s", name, "sleep 5")
            tmux(socket, "kill-session", "-t", f"={name}")
            cycles += 1
        return cycles

    churning = asyncio.ensure_future(asyncio.to_thread(churn))
    try:
        for attempt in range(60):
            waiting = asyncio.ensure_future(server.wait(f"churn-wait-{attempt}"))
            await asyncio.sleep(0.005)
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
            watcher = await server.engine.open_watcher(lambda notification: None)
            await watcher.close()
    finally:
        stop = True
        cycles = await churning
    assert cycles > 20
    assert tmux(socket, "display-message", "-p", "#{pid}").strip() == pid


@pytest.mark.parametrize(("stretch", "attaches"), [(1.0, False), (6.0, True)])
async def test_a_client_s_attach_waits_longer_on_a_loaded_machine(
    server: TmuxServer, monkeypatch: pytest.MonkeyPatch, stretch: float, attaches: bool
) -> None:
    """A control client that takes longer than the engine's timeout to attach (0.8 s here,
    as with many servers starting at once on a busy machine): on an idle machine the start
    fails saying what it waited for; with the machine's load per core at 6, the wait is six
    times as long and the client attaches (issue 32, item 1: 40 hosts starting beside busy
    loops lost answers to a fixed 10 s)."""
    monkeypatch.setattr("schemux.tmux.control.engine.load_stretch", lambda: stretch)
    server.engine.timeout = 0.4
    control = server.engine.control
    server.engine.control = lambda argv: ["sh", "-c", 'sleep 0.8; exec "$@"', "sh", *control(argv)]
    running = server.run("display-message", "-p", "attached")
    if attaches:
        assert await running == ["attached"]
    else:
        with pytest.raises(SchemuxError, match=r"did not accept a control client within 0 s"):
            await running


async def test_listeners_hear_the_shared_client_each_whatever_another_does(
    server: TmuxServer, socket: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Every listener is given the shared client's notifications, also when another
    listener fails (logged), and none after its end."""
    heard: list[str] = []
    later: list[Notification] = []
    sessions = asyncio.Event()

    def failing(notification: Notification) -> None:
        raise RuntimeError("a listener's bug")

    def hearing(notification: Notification) -> None:
        heard.append(notification.name)
        if notification.name == "sessions-changed":
            sessions.set()

    end_failing = server.engine.listen(failing)
    end_hearing = server.engine.listen(hearing)
    await server.run("display-message", "-p", "started")
    await server.run("new-session", "-d", "-s", "listened")
    await asyncio.wait_for(sessions.wait(), 5)
    assert "a listener of %sessions-changed failed" in caplog.text
    end_failing()
    end_hearing()
    end_later = server.engine.listen(later.append)
    count = len(heard)
    await server.run("kill-session", "-t", "=listened")
    await until(lambda: "sessions-changed" in [n.name for n in later])
    assert len(heard) == count
    end_later()
