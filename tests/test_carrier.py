"""A host of another machine carries schemux's control clients in one process there
(``schemux.tmux.control.carrier``): with the program helper, two processes a host
where each client was four. Its clients end with it, however schemux ends; a carrier
killed is started again by the next call; a host that cannot run it (no python3) gets
a process a client, as before.

The host is this machine through ``env TMUX_TMPDIR=DIR HOME=DIR/home`` (the exec kind,
as ``bench/fanout.py`` makes its hosts): a tmux server of its own, whose pids schemux
treats as another machine's.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.hosts import ExecTarget
from schemux.serving.state import ServingState
from schemux.system.child_runs import run_collecting
from schemux.tmux.control.client import header_for
from schemux.tmux.control.connection import Connection
from tests.contexts import client_of
from tests.process_table import processes
from tests.support import (
    TERMINAL_QUERIES,
    bin_without_python3,
    call,
    tagged_socket_name,
    until,
    wait_until,
)
from tests.test_exit_paths import end, serve_stdio

pytestmark = pytest.mark.anyio

CARRIER = b"carry"  # the carrier's last word


def _carried_here() -> bool:
    if shutil.which("tmux") is None:
        return False  # the unit tier runs with no tmux: these tests are not collected there
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout
    return header_for(version) is not None


needs_carrier = pytest.mark.skipif(
    not _carried_here(), reason="this tmux takes tmux -C: no attacher, so no carrier"
)


class Place:
    """The host: a directory for its tmux and its home, and the server's socket name."""

    def __init__(self, directory: Path, socket: str) -> None:
        self.directory = directory
        self.socket = socket

    def prefix(self, *more: str) -> ExecTarget:
        home = self.directory / "home"
        return ExecTarget(("env", f"TMUX_TMPDIR={self.directory}", f"HOME={home}", *more))

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["env", f"TMUX_TMPDIR={self.directory}", "tmux", "-L", self.socket, *args],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        return done.stdout

    def control_client_pids(self) -> list[int]:
        """The pids of the server's control clients (schemux's), one a client."""
        rows = self.tmux("list-clients", "-F", "#{client_control_mode} #{client_pid}")
        return [int(row.split()[1]) for row in rows.splitlines() if row.startswith("1 ")]


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Place]:
    # short: the socket's path must fit in 108 bytes
    directory = Path(os.path.realpath(f"/tmp/sxc{os.getpid()}-{tmp_path.name[-12:]}"))
    (directory / "home").mkdir(parents=True)
    found = Place(directory, tagged_socket_name("carry"))
    try:
        yield found
    finally:
        found.tmux("kill-server")
        subprocess.run(["rm", "-rf", str(directory)], check=False)


@pytest.fixture
async def served(anyio_backend: str, place: Place) -> AsyncIterator[tuple[Client, ServingState]]:
    context = ServingState(Settings(socket_name=place.socket, exec_prefix=place.prefix()))
    try:
        async with client_of(context, BINDINGS) as client:
            yield client, context
    finally:
        await context.close()


def descendants(pid: int) -> set[int]:
    """The live processes below ``pid``."""
    table = processes()
    below: dict[int, list[int]] = {}
    for process in table:
        if process.alive:
            below.setdefault(process.ppid, []).append(process.pid)
    found: set[int] = set()
    stack = list(below.get(pid, []))
    while stack:
        child = stack.pop()
        if child not in found:
            found.add(child)
            stack += below.get(child, [])
    return found


def carriers() -> set[int]:
    return {p.pid for p in processes() if p.alive and p.argv[-1:] == (CARRIER,)}


@needs_carrier
async def test_a_hosts_control_clients_and_program_helper_are_two_processes(
    served: tuple[Client, ServingState], place: Place
) -> None:
    """After a command (the shared client), a wait (the spares started, one borrowed) and
    a program (the helper): two processes of schemux's for the host, where there were
    thirteen (each client behind ``sh`` and a relay's ``sh`` and ``cat``); tmux sees
    every control client with the carrier's pid. (Failed before: 13 processes, three
    client pids.)"""
    client, _ = served
    before = descendants(os.getpid())
    await call(client, "run_command", command="true")
    place.tmux("wait-for", "-S", "carried-spares")  # kept for the next wait
    await call(client, "wait_for_channel", channel="carried-spares", timeout=10)
    await call(client, "run_program", argv=["true"])
    await until(lambda: len(place.control_client_pids()) == 3)
    made = descendants(os.getpid()) - before
    assert len(made) <= 2, [p.command[:80] for p in processes() if p.pid in made]
    (carrier,) = carriers() & made
    assert set(place.control_client_pids()) == {carrier}


@needs_carrier
async def test_closing_ends_the_carrier_and_tmux_lets_its_clients_go(
    anyio_backend: str, place: Place
) -> None:
    before = descendants(os.getpid())
    context = ServingState(Settings(socket_name=place.socket, exec_prefix=place.prefix()))
    try:
        async with client_of(context, BINDINGS) as client:
            await call(client, "run_command", command="true")
            assert carriers() & descendants(os.getpid())
    finally:
        await context.close()
    await until(lambda: not descendants(os.getpid()) - before)
    await until(lambda: place.control_client_pids() == [])
    assert place.tmux("has-session", "-t", "=_schemux") == ""  # the server stays


@needs_carrier
@pytest.mark.parametrize("how", ["eof", "SIGKILL"])
def test_a_schemux_that_ends_takes_the_carrier_and_its_clients(place: Place, how: str) -> None:
    """However schemux ends (SIGKILL too: the carrier is tethered), the carrier ends and
    tmux lets its clients go, within seconds."""
    prefix = shlex.join(place.prefix().prefix)
    command = [sys.executable, "-m", "schemux", "serve", "--socket-name", place.socket]
    process = serve_stdio(place.socket, [*command, "--exec", prefix])
    try:
        assert process.stdin is not None
        process.stdin.write(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command",'
            b'"arguments":{"command":"true"}}}\n'
        )
        process.stdin.flush()
        wait_until(lambda: len(place.control_client_pids()) >= 3, timeout=30)
        carrier = set(place.control_client_pids())
        assert len(carrier) == 1
        assert carrier <= carriers()
        end(process, how)
    finally:
        process.kill()
        process.wait()
    wait_until(lambda: not carrier & carriers(), timeout=5)
    wait_until(lambda: place.control_client_pids() == [], timeout=5)


@needs_carrier
async def test_a_carrier_killed_is_started_again_by_the_next_call(
    served: tuple[Client, ServingState], place: Place
) -> None:
    """A call sent before schemux saw the carrier's end fails saying its client ended,
    as with a client process killed; the call after it starts a new carrier."""
    client, _ = served
    await call(client, "run_command", command="true")
    (first,) = set(place.control_client_pids())
    os.kill(first, signal.SIGKILL)
    await until(lambda: first not in place.control_client_pids())
    raced = await client.call_tool("run_command", {"command": "echo again"})
    if raced.is_error:
        assert "control client ended" in str(raced.content)
    result = await call(client, "run_command", command="echo again")
    assert result["output"] == ["again"]
    (second,) = set(place.control_client_pids())
    assert second != first


async def test_a_host_without_python3_gets_a_client_process_each(
    anyio_backend: str, place: Place, tmp_path: Path
) -> None:
    """Its PATH has everything but python3: the carrier cannot run, so each control
    client is a process of its own (``tmux -C``), and calls work as before."""
    bin_dir = bin_without_python3(tmp_path)
    target = place.prefix(f"PATH={bin_dir}")
    context = ServingState(Settings(socket_name=place.socket, exec_prefix=target))
    try:
        async with client_of(context, BINDINGS) as client:
            result = await call(client, "run_command", command="echo plain")
            assert result["output"] == ["plain"]
            place.tmux("wait-for", "-S", "plain-spares")  # kept for the next wait
            await call(client, "wait_for_channel", channel="plain-spares", timeout=10)
            await until(lambda: len(place.control_client_pids()) == 3)
            assert len(set(place.control_client_pids())) == 3
            assert not carriers() & descendants(os.getpid())
    finally:
        await context.close()
    await until(lambda: place.control_client_pids() == [])


async def test_a_hosts_terminal_barrier_is_its_helpers_and_starts_no_process(
    served: tuple[Client, ServingState], place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the host's program helper runs, the terminal barrier of a command's end
    (tmux's answers to its queries taken off the shell's terminal) is the helper's: no
    run-shell, whose script started a dozen processes on the host each time (most of a
    fan-out's work there). A command's queries still never reach the next command's line.
    (Failed before: every command's end sent a run-shell.)"""
    client, _ = served
    await call(client, "run_program", argv=["true"])  # the helper runs
    sent: list[str] = []
    send = Connection.send

    def noting(connection: Connection, args: tuple[str, ...]) -> asyncio.Future[list[str]]:
        sent.extend(word for word in args if word in ("run-shell", "run"))
        return send(connection, args)

    monkeypatch.setattr(Connection, "send", noting)
    for query in [*TERMINAL_QUERIES.values(), "".join(TERMINAL_QUERIES.values())]:
        asked = await call(client, "run_command", command=f"printf '{query}'")
        assert asked["exit_status"] == 0
        after = await call(client, "run_command", command="echo one; echo two")
        assert (after["output"], after["exit_status"]) == (["one", "two"], 0)
    assert sent == []


async def test_a_hosts_first_call_asks_its_tmux_version_once(
    anyio_backend: str, place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connect's probe read the host's ``tmux -V``: the server's start does not run
    it again (a process less in each host's first call, which a cold fan-out to many
    hosts pays on schemux's event loop). (Failed before: one ``tmux -u -V``.)"""
    ran: list[list[str]] = []

    async def noting(argv: list[str], *args: Any, **kwargs: Any) -> tuple[int, bytes, bytes]:
        ran.append(argv)
        return await run_collecting(argv, *args, **kwargs)

    monkeypatch.setattr("schemux.tmux.server.run_collecting", noting)
    context = ServingState(Settings(socket_name=place.socket, exec_prefix=place.prefix()))
    try:
        async with client_of(context, BINDINGS) as client:
            await call(client, "run_command", command="true")
    finally:
        await context.close()
    assert ran  # the server's start ran its one-off clients here
    assert [argv for argv in ran if argv[-1] == "-V"] == []
