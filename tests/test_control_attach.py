"""schemux's control client (``schemux.tmux.control.attach``, chosen by
``schemux.tmux.control.client``): its messages, and the client against real tmux servers,
beside a server that makes and closes sessions all the time (where ``tmux -C`` crashed
tmux 3.3a at once, 3.5a and 3.6b within 40 rounds of 10 starts)."""

from __future__ import annotations

import asyncio
import os
import signal
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from schemux.config import AgentSession
from schemux.hosts.local import LocalHost
from schemux.tmux.control import attach as control_attach
from schemux.tmux.control.client import control_client_argv, header_for, plain_path
from schemux.tmux.server import CallPermits, ServerAddress, TmuxServer
from tests.process_table import alive
from tests.support import (
    private_tmux_server,
    remove_server,
    tagged_socket_name,
    tmux,
    wait_until,
)

pytestmark = pytest.mark.anyio

HOSTILE_SESSION = "a;b $(touch x) 'q' -t"  # new-session expands formats, doubles backslashes


@pytest.mark.parametrize(
    ("version", "header"),
    [
        ("3.3a", "flags"),
        ("3.4", "flags"),
        ("3.5a", "flags"),
        ("3.6", "mark"),
        ("3.6b", "mark"),
        ("3.7c", None),
        ("next-3.8", None),
        ("master", None),
        ("", None),
        (None, None),
    ],
)
def test_the_header_follows_the_server_version(version: str | None, header: str | None) -> None:
    assert header_for(version) == header


@pytest.mark.parametrize(
    ("path", "plain"),
    [
        ("/tmp/tmux-0/default", True),
        ("/tmp/a b/sock", True),
        ("/tmp/a\\012b", False),  # tmux 3.4 and 3.5 print a newline so
        ("/tmp/a\nb", False),
        ("", False),
    ],
)
def test_only_a_plainly_printed_socket_path_is_taken(path: str, plain: bool) -> None:
    assert plain_path(path) is plain


def test_tmux_runs_the_client_where_it_is_safe_or_the_path_is_not_plain() -> None:
    tmux_argv = ["tmux", "-L", "x"]
    command = ["attach-session", "-t", "=_schemux"]
    plain = [*tmux_argv, "-u", "-C", *command]
    for version, path, python in [
        ("3.7c", "/tmp/s", "python3"),
        ("3.3a", None, "python3"),
        ("3.3a", "/tmp/a\\012b", "python3"),
        ("3.3a", "/tmp/s", None),  # no Python to run the attacher with
    ]:
        argv = control_client_argv(
            tmux_argv,
            command,
            version=version,
            socket_path=path,
            python=python,
            source_here=True,
        )
        assert argv == plain
    here = control_client_argv(
        tmux_argv, command, version="3.3a", socket_path="/tmp/s", python="py", source_here=True
    )
    assert here[:3] == ["py", "-I", "-S"]
    assert here[4:7] == ["flags", "/tmp/s", "3"]
    assert here[7:] == plain
    there = control_client_argv(
        tmux_argv, command, version="3.6", socket_path="/tmp/s", python="py", source_here=False
    )
    assert there[:4] == ["sh", "-c", there[2], "sh"]
    assert there[4:8] == ["py", "-I", "-S", "-c"]
    assert there[9:12] == ["mark", "/tmp/s", "3"]
    assert there[12:] == plain  # what sh falls back to


@pytest.mark.parametrize("header", ["flags", "mark"])
def test_a_message_carries_its_length_and_its_descriptor_mark(header: str) -> None:
    plain = control_attach.message(header, 101, b"xterm\0", pid=7)
    passed = control_attach.message(header, 104, with_fd=True, pid=7)
    if header == "flags":
        assert struct.unpack("=IHHII", plain[:16]) == (101, 22, 0, 8, 7)
        assert struct.unpack("=IHHII", passed) == (104, 16, 1, 8, 7)
    else:
        assert struct.unpack("=IIII", plain[:16]) == (101, 22, 8, 7)
        assert struct.unpack("=IIII", passed) == (104, 16 | 0x80000000, 8, 7)
    assert plain[16:] == b"xterm\0"


def test_the_flags_the_end_and_the_command_go_in_one_piece() -> None:
    sent = control_attach.command("flags", [b"attach-session", b"-t", b"=s;x"], pid=1)
    found, rest = control_attach.parse("flags", sent)
    assert rest == b""
    assert [kind for kind, _ in found] == [
        control_attach.MSG_IDENTIFY_LONGFLAGS,
        control_attach.MSG_IDENTIFY_DONE,
        control_attach.MSG_COMMAND,
    ]
    flags = struct.unpack("=Q", found[0][1])[0]
    assert flags == control_attach.CLIENT_CONTROL | control_attach.CLIENT_UTF8
    assert found[2][1] == struct.pack("=i", 3) + b"attach-session\0-t\0=s;x\0"


def test_identity_leaves_out_the_flags_and_what_tmux_leaves_out() -> None:
    environ = {b"TERM": b"screen", b"BIG": b"x" * 20000, b"A": b"1"}
    found, rest = control_attach.parse("flags", control_attach.identity("flags", environ, b"/", 5))
    assert rest == b""
    kinds = [kind for kind, _ in found]
    assert control_attach.MSG_IDENTIFY_LONGFLAGS not in kinds
    assert control_attach.MSG_IDENTIFY_DONE not in kinds
    environment = [data for kind, data in found if kind == control_attach.MSG_IDENTIFY_ENVIRON]
    assert environment == [b"A=1\0", b"TERM=screen\0"]  # BIG is over tmux's message size


def test_parse_keeps_a_partial_message_and_refuses_a_broken_one() -> None:
    whole = control_attach.message("mark", 203, struct.pack("=i", 0))
    found, rest = control_attach.parse("mark", whole + whole[:10])
    assert found == [(203, struct.pack("=i", 0))]
    assert rest == whole[:10]
    with pytest.raises(control_attach.Refused):
        control_attach.parse("flags", struct.pack("=IHHII", 203, 3, 0, 8, 0))


def test_the_carriers_frames_keep_a_partial_frame_and_carry_any_bytes() -> None:
    """A carrier's frames (``schemux.tmux.control.carrier``): whole ones read, the rest
    kept for the next read, a payload's bytes as they were (NULs, newlines, a frame's
    look-alike)."""
    payload = b"%end 1 2\n\0" + control_attach.frame(control_attach.EXIT, 9)
    sent = control_attach.frame(control_attach.DATA, 7, payload)
    sent += control_attach.frame(control_attach.EOF, 7)
    found, rest = control_attach.frames(sent + sent[:5])
    assert found == [(control_attach.DATA, 7, payload), (control_attach.EOF, 7, b"")]
    assert rest == sent[:5]


def test_a_command_too_long_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(control_attach.Refused, match="command too long"):
        control_attach.command("flags", [b"x" * 20000], pid=1)


@pytest.fixture
def socket() -> Iterator[str]:
    with private_tmux_server("attach") as socket_name:
        tmux(socket_name, "new-session", "-d", "-s", "_schemux", "cat")
        yield socket_name


def server_facts(socket: str) -> tuple[str, str]:
    version, path = tmux(socket, "display-message", "-p", "#{version}\t#{socket_path}").split("\t")
    return version, path.strip()


def client_argv(
    socket: str, command: list[str], python: str = sys.executable, source_here: bool = True
) -> list[str]:
    version, path = server_facts(socket)
    if header_for(version) is None:
        pytest.skip(f"tmux {version} runs tmux -C as the control client")
    return control_client_argv(
        ["tmux", "-L", socket],
        command,
        version=version,
        socket_path=path,
        python=python,
        source_here=source_here,
    )


async def run_client(argv: list[str], lines: bytes) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(lines), 10)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


ATTACH_OWNED = ["attach-session", "-f", "no-output", "-t", "=_schemux"]


async def attached(
    argv: list[str],
) -> tuple[asyncio.subprocess.Process, asyncio.StreamWriter, asyncio.StreamReader]:
    """The client ``argv`` started and attached (its first answer read): the process,
    its stdin and its stdout."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    await asyncio.wait_for(proc.stdout.readline(), 10)
    return proc, proc.stdin, proc.stdout


def client_programs(socket: str) -> list[str]:
    """The program of each control client attached to the server."""
    pids = tmux(socket, "list-clients", "-F", "#{client_pid}").split()
    return [os.path.basename(os.readlink(f"/proc/{pid}/exe")) for pid in pids]


async def test_the_client_runs_commands_and_says_when_it_ends(socket: str) -> None:
    tmux(socket, "new-session", "-d", "-s", HOSTILE_SESSION)
    argv = client_argv(socket, ["attach-session", "-f", "no-output", "-t", f"={HOSTILE_SESSION}"])
    status, out, _ = await run_client(argv, b"display-message -p '#{session_name}'\n")
    assert status == 0
    assert HOSTILE_SESSION in out.splitlines()
    assert out.splitlines()[-1] == "%exit"


@pytest.mark.parametrize(
    ("python", "source_here", "program"),
    [
        (sys.executable, True, "python"),  # this machine: from its file
        (sys.executable, False, "python"),  # another host: from its source
        ("/nonexistent/python3", False, "tmux"),  # a host without python3
        ("false", False, "tmux"),  # one too old (the probe fails)
    ],
)
async def test_the_client_is_the_attacher_where_it_can_run_else_tmux(
    socket: str, python: str, source_here: bool, program: str
) -> None:
    proc, stdin, _ = await attached(client_argv(socket, ATTACH_OWNED, python, source_here))
    assert [name.rstrip("0123456789.") for name in client_programs(socket)] == [program]
    stdin.close()
    await asyncio.wait_for(proc.wait(), 10)


async def test_a_terminal_s_signals_leave_the_client_attached_and_sigterm_ends_it(
    socket: str,
) -> None:
    """As tmux's own client: ^C, ^\\ and job control's signals are ignored."""
    proc, stdin, stdout = await attached(client_argv(socket, ATTACH_OWNED))
    for ignored in (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGTTIN):
        proc.send_signal(ignored)
    stdin.write(b"display-message -p still-here\n")
    with anyio.fail_after(10):
        while (line := await stdout.readline()) not in (b"still-here\n", b""):
            pass
    assert line == b"still-here\n"
    proc.terminate()
    assert await asyncio.wait_for(proc.wait(), 10) == -signal.SIGTERM
    assert tmux(socket, "list-clients", "-F", "#{client_pid}") == ""


async def test_a_server_not_running_is_said_on_stderr(socket: str) -> None:
    argv = client_argv(socket, ["attach-session", "-t", "=_schemux"])
    server_pid = int(tmux(socket, "display-message", "-p", "#{pid}"))
    tmux(socket, "kill-server")
    # kill-server answers before the server has gone: a client started meanwhile was
    # seen to reach it and end without a word
    wait_until(lambda: not alive(server_pid), timeout=5)
    status, out, err = await run_client(argv, b"")
    assert status == 1
    assert "no server running on" in err
    assert out == ""


async def test_a_server_that_dies_ends_the_client_with_tmux_s_reason(socket: str) -> None:
    proc, _, stdout = await attached(client_argv(socket, ATTACH_OWNED))
    os.kill(int(tmux(socket, "display-message", "-p", "#{pid}")), 9)
    out = await asyncio.wait_for(stdout.read(), 10)
    assert out.decode().splitlines()[-1] == "%exit server exited unexpectedly"
    assert await proc.wait() == 1


async def test_clients_start_beside_a_churning_server_and_leave_it_running(socket: str) -> None:
    """100 control clients start while three other clients make and close sessions."""
    argv = client_argv(socket, ATTACH_OWNED)
    stop = asyncio.Event()

    async def churn(index: int) -> int:
        rounds = 0
        while not stop.is_set():
            name = f"churn{index}-{rounds}"
            proc = await asyncio.create_subprocess_exec(
                *["tmux", "-L", socket, "new-session", "-d", "-s", name, ";"],
                *["kill-session", "-t", name],
                stderr=subprocess.DEVNULL,
            )
            await proc.wait()
            rounds += 1
        return rounds

    churners = [asyncio.create_task(churn(index)) for index in range(3)]
    try:
        for _ in range(10):
            ends = await asyncio.gather(*(run_client(argv, b"") for _ in range(10)))
            assert [status for status, _, _ in ends] == [0] * 10
    finally:
        stop.set()
        churned = sum(await asyncio.gather(*churners))
    assert churned > 50
    assert tmux(socket, "display-message", "-p", "-t", "=_schemux", "ok").strip() == "ok"


async def test_a_server_schemux_starts_gets_the_attacher_too() -> None:
    """The version and socket path are learnt after starting the server as well, so its
    first control clients are not tmux -C."""
    socket_name = tagged_socket_name("attach-started")
    server = TmuxServer(ServerAddress(socket_name=socket_name), agent=AgentSession())
    try:
        permits = CallPermits()
        permits.allow_start(server)
        await server.for_call(permits).run("display-message", "-p", "started")
        version = tmux(socket_name, "display-message", "-p", "#{version}").strip()
        if header_for(version) is None:
            pytest.skip(f"tmux {version} runs tmux -C as the control client")
        programs = {name.rstrip("0123456789.") for name in client_programs(socket_name)}
        assert programs == {"python"}
    finally:
        await server.close()
        remove_server(socket_name)


def test_this_machine_offers_its_interpreter_only_where_it_may_run_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert LocalHost().python == sys.executable
    unrunnable = tmp_path / "python3"
    unrunnable.write_text("")
    unrunnable.chmod(0o600)
    monkeypatch.setattr(sys, "executable", str(unrunnable))
    assert LocalHost().python is None
