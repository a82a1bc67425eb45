"""Facts about a remote server's shells: the host's program helper and the server's
run-shell give the same readings; a server whose pids the helper does not see (another
pid namespace) is read by run-shell (``schemux.shell.facts``)."""

from __future__ import annotations

import os
import signal
import termios
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from schemux.config import Settings
from schemux.errors import SchemuxError
from schemux.host_settings import SshTarget
from schemux.serving.state import ServingState
from schemux.shell.facts import _ECHO_SCRIPT, RemoteShellFacts, Snapshot
from tests.process_table import processes
from tests.support import new_pane, pane_format, tmux, until, wait_until
from tests.test_terminal_barrier import HOLDER, modes, unread_input

pytestmark = pytest.mark.anyio


async def _context(target: SshTarget, socket_name: str) -> ServingState:
    return ServingState(Settings(socket_name=socket_name, ssh=target))


@pytest.fixture
async def remote_context(
    anyio_backend: str, remote_tmux_socket: str, ssh_target: SshTarget
) -> AsyncIterator[ServingState]:
    context = await _context(ssh_target, remote_tmux_socket)
    try:
        yield context
    finally:
        await context.close()


@pytest.fixture
async def local_server_context(
    anyio_backend: str, main_tmux_socket: str, ssh_target: SshTarget
) -> AsyncIterator[ServingState]:
    context = await _context(ssh_target, main_tmux_socket)
    try:
        yield context
    finally:
        await context.close()


async def _until_helper_answers(facts: RemoteShellFacts, pid: int) -> bool:
    """Whether the helper answers (it starts in the background at the first reading)."""
    for _ in range(500):
        read, _snapshot = await facts.read_by_helper(pid)
        if read or not facts.server.helper_sees_pids:
            return read
        await anyio.sleep(0.02)
    raise TimeoutError("the helper did not start")


async def _both(facts: RemoteShellFacts, pid: int) -> tuple[Snapshot | None, Snapshot | None]:
    read, by_helper = await facts.read_by_helper(pid)
    assert read, "the helper should see the server's pids"
    return by_helper, await facts.read_by_run_shell(pid)


async def test_the_helper_and_run_shell_read_the_same_facts(
    remote_context: ServingState, remote_tmux_socket: str, tmp_path: Path
) -> None:
    pane = new_pane(remote_tmux_socket)
    try:
        server = remote_context.services.tmux()
        facts = RemoteShellFacts(server)
        pid = int(pane_format(pane, "#{pane_pid}"))
        tty = pane_format(pane, "#{pane_tty}")

        assert await _until_helper_answers(facts, pid)
        # an idle bash at its prompt: its own group holds the terminal, readline's modes
        by_helper, by_run_shell = await _both(facts, pid)
        assert by_helper == by_run_shell
        assert by_helper is not None
        assert (by_helper.name, by_helper.tty, by_helper.leader) == ("bash", tty, "none")
        assert by_helper.pgrp == by_helper.tpgid
        assert (by_helper.canonical, by_helper.echo) == (False, False)

        # a builtin reading a redirection (as the hooks read a call's answer): the shell's
        # descriptor 0 is the file for that while; its terminal is still the pane's, in
        # canonical mode (both read the file's, none, before)
        fifo = tmp_path / "answer"
        os.mkfifo(fifo)
        writer = os.open(fifo, os.O_RDWR)  # the shell's open of it does not block
        try:
            tmux(remote_tmux_socket, "send-keys", "-t", pane.pane_id, "-l", f"read x <{fifo}")
            tmux(remote_tmux_socket, "send-keys", "-t", pane.pane_id, "Enter")
            await until(lambda: pane_format(pane, "#{cursor_x}") == "0")  # the line was run
            await anyio.sleep(0.2)  # the builtin has opened the file and reads it
            by_helper, by_run_shell = await _both(facts, pid)
            assert by_helper == by_run_shell
            assert by_helper is not None
            assert (by_helper.tty, by_helper.canonical) == (tty, True)
        finally:
            os.write(writer, b"done\n")
            os.close(writer)
        await until(lambda: pane_format(pane, "#{cursor_x}") != "0")  # at its prompt again

        # no such process
        assert await _both(facts, 4_000_000) == (None, None)

        # a foreground program holds the terminal: another group leads it
        tmux(remote_tmux_socket, "send-keys", "-t", pane.pane_id, "-l", "exec 2>&1; sleep 30")
        tmux(remote_tmux_socket, "send-keys", "-t", pane.pane_id, "Enter")
        wait_until(lambda: pane_format(pane, "#{pane_current_command}") == "sleep")
        by_helper, by_run_shell = await _both(facts, pid)
        assert by_helper == by_run_shell
        assert by_helper is not None
        assert by_helper.leader == "other"
        assert by_helper.pgrp != by_helper.tpgid
        assert (by_helper.canonical, by_helper.echo) == (True, True)  # sleep's cooked mode

        # the terminal's echo, both ways
        assert await facts._read(_ECHO_SCRIPT, tty=tty) == "- - - - - 1"
        assert await facts.echo_on(tty) is True
        assert server.helper_sees_pids

        # values that are not a pid or a pane's terminal are refused by the helper
        helper = remote_context.services.host.facts_helper()
        assert helper is not None
        identity = await facts._identity()
        mark = tmp_path / "mark"
        for bad in (f"1; touch {mark}", "$(touch {mark})", "-1", "", "1\n2"):
            with pytest.raises(SchemuxError, match="bad pid"):
                await helper.shell_facts(b"facts", identity, bad.encode(), b"bash")
        for bad_tty in (f"/dev/pts/0; touch {mark}", "/etc/passwd", "/dev/pts/../tty", "-"):
            assert await helper.shell_facts(b"echo", identity, bad_tty.encode()) == [b"-"]
        assert not mark.exists()
    finally:
        tmux(remote_tmux_socket, "kill-session", "-t", pane.session_name, check=False)


async def test_a_server_in_another_pid_namespace_is_read_by_run_shell(
    local_server_context: ServingState, main_tmux_socket: str
) -> None:
    # the main server runs on this machine, outside the sshd's pid namespace: its pane
    # pids mean other processes there, or none
    pane = new_pane(main_tmux_socket)
    try:
        server = local_server_context.services.tmux()
        facts = RemoteShellFacts(server)
        pid = int(pane_format(pane, "#{pane_pid}"))
        assert not await _until_helper_answers(facts, pid)
        assert not server.helper_sees_pids
        assert await facts.read_by_helper(pid) == (False, None)
        snapshot = await facts.snapshot(pid)
        assert snapshot is not None
        assert snapshot.name == "bash"
        assert snapshot == await facts.read_by_run_shell(pid)
    finally:
        tmux(main_tmux_socket, "kill-session", "-t", pane.session_name, check=False)


async def test_the_helpers_terminal_barrier_waits_out_a_stopped_server(
    remote_context: ServingState, remote_tmux_socket: str, tmp_path: Path
) -> None:
    """The helper's barrier (``answers``) as ``schemux.shell.barrier``'s: past its give-up
    while the server is stopped, answered once the server goes on, the answer taken off
    the terminal and its modes as they were; the helper serves other requests while it
    waits; values that are not a pid or a time are refused."""
    pane = new_pane(remote_tmux_socket, command=HOLDER)
    try:
        tty = pane_format(pane, "#{pane_tty}")
        pid = int(pane_format(pane, "#{pane_pid}"))
        await until(lambda: not modes(tty)[3] & termios.ICANON)  # type: ignore[operator]
        before = modes(tty)
        facts = RemoteShellFacts(remote_context.services.tmux())
        assert await _until_helper_answers(facts, pid)
        helper = remote_context.services.host.facts_helper()
        assert helper is not None
        identity = await facts._identity()
        # the server as this pid namespace sees it (the sshd's has its own pids)
        (server,) = [
            found.pid
            for found in processes()
            if found.argv[:1] == (b"tmux",)
            and b"keepalive" in found.argv
            and remote_tmux_socket.encode() in found.argv
        ]
        os.kill(server, signal.SIGSTOP)
        try:
            async with anyio.create_task_group() as group:
                ended: list[float] = []

                async def barrier() -> None:
                    args = (str(pid).encode(), b"0.2")
                    assert await helper.shell_facts(b"answers", identity, *args, seconds=30) == [
                        b"1"
                    ]
                    ended.append(time.monotonic())

                group.start_soon(barrier)
                await anyio.sleep(0.8)  # four times the give-up
                assert not ended
                # meanwhile the helper answers the others
                assert await helper.shell_facts(b"echo", identity, tty.encode()) == [b"0"]
                resumed = time.monotonic()
                os.kill(server, signal.SIGCONT)
            assert ended[0] - resumed < 1.5
        finally:
            os.kill(server, signal.SIGCONT)
        assert unread_input(tty) == 0  # the answer was taken
        assert modes(tty) == before
        mark = tmp_path / "mark"
        for bad in (f"1; touch {mark}", "-1", "", "1\n2"):
            with pytest.raises(SchemuxError, match="bad pid"):
                await helper.shell_facts(b"answers", identity, bad.encode(), b"2")
        with pytest.raises(SchemuxError, match="bad pid"):
            await helper.shell_facts(b"answers", identity, str(pid).encode(), b"2; x")
        assert not mark.exists()
    finally:
        tmux(remote_tmux_socket, "kill-session", "-t", pane.session_name, check=False)
