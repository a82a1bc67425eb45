"""A real ``schemux serve`` ended every way it can end: each signal a terminal, a
service manager or a person sends takes the one path stdin's end takes (calls in flight
cancelled, so their own cleanup runs; then the context closed), and what it spawned
cannot outlive it, even killed with SIGKILL."""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from mcp import Client

from schemux.errors import SchemuxError
from schemux.serving.in_flight import CallsInFlight
from tests import process_table
from tests.http_serving import free_port, serve_http
from tests.process_table import alive
from tests.ssh_server import ALIAS, SshServer
from tests.support import (
    Pane,
    new_pane,
    pane_format,
    private_tmux_server,
    processes_naming,
    tmux,
    until,
    wait_for_shell,
    wait_until,
)
from tests.test_program_hardening import _read_reply, _rpc
from tests.test_run_command import private_options
from tests.test_run_command_interrupts import current_command, hold_options


class ShieldedCleanup:
    """A call that cleans up as run_command does when cancelled: under asyncio.shield."""

    def __init__(self) -> None:
        self.cleaned = asyncio.Event()

    async def call(self) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.shield(self._cleanup())
            raise
        return "ended"

    async def _cleanup(self) -> None:
        await asyncio.sleep(0.2)
        self.cleaned.set()


@pytest.mark.anyio
async def test_a_call_cancelled_by_a_scope_is_cleaned_up_before_close_returns() -> None:
    """A cancel scope (the SDK's, at stdin's end) cancels at every await, which would cut
    the shielded cleanup's wait short; the call's own task is cancelled once."""
    calls, call = CallsInFlight(), ShieldedCleanup()
    with anyio.move_on_after(0.05):
        await calls.run(call.call())
    assert not call.cleaned.is_set()  # still cleaning up: close waits for it
    await calls.close()
    assert call.cleaned.is_set()


@pytest.mark.anyio
async def test_closing_cancels_the_calls_in_flight_and_answers_them() -> None:
    calls, call = CallsInFlight(), ShieldedCleanup()
    running = asyncio.ensure_future(calls.run(call.call()))
    await asyncio.sleep(0.05)
    await calls.close()
    assert call.cleaned.is_set()
    with pytest.raises(SchemuxError, match="shutting down"):
        await running
    with pytest.raises(SchemuxError, match="not started"):
        await calls.run(call.call())


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    return [child.pid for child in process_table.children(pid)]


def serve_stdio(tmux_socket: str, command: list[str] | None = None) -> subprocess.Popen[bytes]:
    """A real ``schemux serve`` over stdio (``command``, or on ``tmux_socket`` here),
    initialized."""
    process = subprocess.Popen(
        command or [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux_socket],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _rpc(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}})  # fmt: skip
    _read_reply(process, 0)
    _rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return process


def start_command(process: subprocess.Popen[bytes], pane: Pane, command: str) -> None:
    """``run_command`` sent, and running in ``pane`` (its wrapper armed, the command
    started): its answer is never read."""
    arguments = {"command": command, "pane_id": pane.pane_id, "timeout": 60}
    _rpc(process, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "run_command", "arguments": arguments}})  # fmt: skip
    wait_until(lambda: private_options(pane) != [] and current_command(pane) == "sleep", timeout=10)


# the command a call runs when schemux ends: 5 minutes, longer than the call's timeout
# (60 s), so a shell back at its prompt is the interrupt's doing, whatever the load
COMMAND_SECONDS = 300.5
# how long schemux may take to exit once ended: an exit that waited for the command or
# for the call's timeout instead of interrupting it misses this; the exit path's own
# bounded waits (the calls' cleanup, 1.5 s; a client's kill grace, 2 s) fit in it many
# times over on a loaded machine (4 s was seen under six test workers on two cores)
EXIT_SECONDS = 20


def end(process: subprocess.Popen[bytes], how: str) -> None:
    """End ``process`` by stdin's end or by the signal named ``how``, and wait for its
    exit (``EXIT_SECONDS`` at most)."""
    if how == "eof":
        assert process.stdin is not None
        process.stdin.close()
    else:
        process.send_signal(getattr(signal, how))
    process.wait(timeout=EXIT_SECONDS)


@pytest.mark.parametrize("how", ["eof", "SIGTERM", "SIGINT", "SIGHUP"])
def test_every_exit_mid_command_interrupts_it_and_leaves_nothing(
    tmux_socket: str, how: str
) -> None:
    """The shell gets its prompt back, and no option, hold flag or tmux client of the
    dead schemux is left: every way out does what stdin's end does."""
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    process = serve_stdio(tmux_socket)
    try:
        start_command(process, pane, f"sleep {COMMAND_SECONDS}")
        spawned = children(process.pid)
        assert spawned  # its tmux control clients
        end(process, how)
        wait_until(lambda: current_command(pane) == "bash", timeout=10)
        assert private_options(pane) == []
        assert hold_options(tmux_socket) == []
        # they end with schemux or never: a generous wait costs only a failing run
        wait_until(lambda: not [pid for pid in spawned if alive(pid)], timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        tmux(tmux_socket, "kill-session", "-t", pane.session_id, check=False)


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP"])
async def test_a_signal_mid_command_over_http_interrupts_it(tmux_socket: str, how: str) -> None:
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    port = free_port()
    process = serve_http(tmux_socket, port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:

                async def run() -> None:
                    with anyio.move_on_after(20):  # answered with an error, or cut off
                        while process.poll() is None:
                            try:
                                async with Client(url) as client:
                                    arguments = {"command": "sleep 300.7", "pane_id": pane.pane_id}
                                    await client.call_tool("run_command", arguments)
                                    return
                            except Exception:
                                await anyio.sleep(0.2)  # not listening yet, or gone

                group.start_soon(run)
                await until(
                    lambda: private_options(pane) != [] and current_command(pane) == "sleep", 20
                )
                spawned = children(process.pid)
                process.send_signal(getattr(signal, how))
                await anyio.to_thread.run_sync(lambda: process.wait(timeout=EXIT_SECONDS))
                group.cancel_scope.cancel()
        await until(lambda: current_command(pane) == "bash", timeout=10)
        assert private_options(pane) == []
        assert hold_options(tmux_socket) == []
        await until(lambda: not [pid for pid in spawned if alive(pid)], timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        tmux(tmux_socket, "kill-session", "-t", pane.session_id, check=False)


# windows come and go all the time: tmux tells every control client
BUSY_TMUX = "while :; do tmux new-window -d 'sleep 0.2'; done"


def busy_and_killed(process: subprocess.Popen[bytes], socket_name: str) -> list[int]:
    """``process`` killed with SIGKILL while run_command waits for a command that keeps
    tmux busy (windows come and go, and tmux tells every control client) and
    wait_for_text watches a pane that prints; the processes it had started."""
    made: list[Pane] = []
    try:
        pane = new_pane(socket_name)
        made.append(pane)
        wait_for_shell(pane)
        arguments = {"command": BUSY_TMUX, "pane_id": pane.pane_id}
        _rpc(process, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "run_command", "arguments": arguments}})  # fmt: skip
        printing = new_pane(socket_name, command="sh -c 'while :; do echo x; sleep 0.01; done'")
        made.append(printing)
        waiting = {"patterns": ["never printed"], "pane_id": printing.pane_id, "timeout": 60}
        _rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "wait_for_text", "arguments": waiting}})  # fmt: skip
        wait_until(lambda: private_options(pane) != [], timeout=20)
        # killed once windows come and go (the loop has made some) and output flows
        wait_until(lambda: int(pane_format(pane, "#{session_windows}")) > 1, timeout=20)
        wait_until(lambda: "x" in tmux(socket_name, "capture-pane", "-p", "-t", printing.pane_id))
        spawned = children(process.pid)
        assert spawned
    finally:
        process.kill()
        process.wait()
        # its runtime directory stays, for the next schemux to reap (tested elsewhere)
        for directory in Path(tempfile.gettempdir()).glob(f"schemux-{process.pid}-*"):
            shutil.rmtree(directory)
        # the loop would go on making windows on a server other tests share (over ssh), and
        # the printing pane printing: its window is linked into _schemux too (the wait's
        # link, which the killed schemux left), so killing its session would not end it
        for made_pane in made:
            tmux(socket_name, "kill-pane", "-t", made_pane.pane_id, check=False)
    return spawned


def control_clients(socket_name: str) -> set[int]:
    """The ``tmux -C`` processes of the server on ``socket_name`` (on this machine, or
    on the test's ssh host, whose processes this machine sees)."""
    return {pid for pid in processes_naming(socket_name) if "-C" in argv_of(pid)}


def argv_of(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def test_after_kill_9_nothing_it_started_lives_on() -> None:
    """Its tmux clients end with it (tmux let none go whose output it could not write,
    and they lived on, parent 1), so ``kill-server`` then ends the tmux server."""
    with private_tmux_server("killed") as socket_name:
        spawned = busy_and_killed(serve_stdio(socket_name), socket_name)
        wait_until(lambda: not [pid for pid in spawned if alive(pid)], timeout=2)
        tmux(socket_name, "kill-server")
        wait_until(lambda: not processes_naming(socket_name), timeout=2)


def test_after_kill_9_over_ssh_no_client_lives_on_the_host(
    sshd: SshServer, remote_tmux_socket: str
) -> None:
    """Over ssh its local ssh sessions end with it, and the tmux clients on the host
    with them (they lived on there)."""
    others = control_clients(remote_tmux_socket)  # other tests' live ones, if any
    command = [
        sys.executable, "-m", "schemux", "serve", "--socket-name", remote_tmux_socket,
        "--ssh", ALIAS, "--ssh-config", str(sshd.config),
    ]  # fmt: skip
    spawned = busy_and_killed(serve_stdio(remote_tmux_socket, command), remote_tmux_socket)
    wait_until(lambda: not [pid for pid in spawned if alive(pid)], timeout=3)
    wait_until(lambda: control_clients(remote_tmux_socket) <= others, timeout=3)
