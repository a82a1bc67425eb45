"""schemux over ssh: a real OpenSSH server on loopback (``tests.ssh_server``), the one
multiplexed connection, what a remote command is made of, and the faults.

The remote host is this machine, so the tmux server a test reaches over ssh is the one
``tmux -L`` shows here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from schemux.config import Settings, settings_from
from schemux.errors import ConfigError, ServerUnavailable
from schemux.generated.bindings import BINDINGS
from schemux.host_settings import SshTarget
from schemux.hosts.ssh import START_SECONDS, SshHost
from schemux.serving.state import ServingState
from schemux.system.processes import machine_tag, this_process
from tests import process_table
from tests.contexts import Contexts, client_of
from tests.leftovers import runtime_directories
from tests.ssh_server import ALIAS, BAD_KEY, NO_TMUX, OLD_TMUX, UNKNOWN_HOST, SshServer
from tests.support import (
    TERMINAL_QUERIES,
    call,
    call_error,
    closed_mid_connect,
    new_pane,
    pane_format,
    remove_server,
    run_apart,
    tagged_socket_name,
    tmux,
    until,
    wait_for_shell,
    wait_until,
)

pytestmark = pytest.mark.anyio

HOSTILE_WORDS = [
    ";", "a ; kill-server", "'", '"', 'it\'s "q"', "$(touch {mark})", "`touch {mark}`",
    "$HOME", "~", "*", "a\nb", "a\tb", "\\", "-n", "--", "#{pane_id}", "&& touch {mark}",
    "|", "> {mark}", "!", "%", "{a,b}", "\x1f", "\udcff", " leading space", "",
]  # fmt: skip


def context_for(target: SshTarget, socket_name: str) -> ServingState:
    return ServingState(Settings(socket_name=socket_name, ssh=target))


@pytest.fixture
def ssh_context(make_context: Contexts, tmux_socket: str, ssh_target: SshTarget) -> ServingState:
    return make_context(socket_name=tmux_socket, ssh=ssh_target)


@pytest.fixture
async def ssh_client(ssh_context: ServingState) -> AsyncIterator[Client]:
    async with client_of(ssh_context, BINDINGS) as client:
        yield client


def master_pid(context: ServingState) -> int:
    """The running master of the context's host, as ``ssh -O check`` reports it."""
    host = context.services.host
    assert isinstance(host, SshHost)
    return master_of(host)


def master_of(host: SshHost) -> int:
    """The host's running master, as ``ssh -O check`` reports it."""
    config = str(host.target.config)
    done = subprocess.run(
        ["ssh", "-F", config, "-S", host.control_path, "-O", "check", "--", ALIAS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stderr.split("pid=")[1].split(")")[0])


def ssh_children() -> set[int]:
    """This process's ssh children (the sessions the engine holds open)."""
    return {child.pid for child in process_table.children(os.getpid()) if child.name() == "ssh"}


async def test_commands_run_on_the_host_over_one_connection(
    ssh_client: Client, ssh_context: ServingState, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    command = "echo 'a;b' \"$((6*7))\""
    first = await call(ssh_client, "run_command", command=command, pane_id=pane.pane_id)
    assert first["output"] == ["a;b 42"]
    master = master_pid(ssh_context)
    sessions = ssh_children()
    for number in range(5):
        result = await call(
            ssh_client, "run_command", command=f"echo {number}", pane_id=pane.pane_id
        )
        assert result["output"] == [str(number)]
    # no ssh process per tmux command: the same master, the same open sessions
    assert master_pid(ssh_context) == master
    assert ssh_children() == sessions


async def test_terminal_replies_are_never_typed_over_ssh(
    ssh_client: Client, tmux_socket: str
) -> None:
    """A command that prints terminal queries in a pane of the host's server: tmux's
    answers are taken off the pane's input on the host (run-shell) while the wrapper
    holds the shell, so none reaches the next command's line (issue 32, item 2)."""
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    for name, query in [*TERMINAL_QUERIES.items(), ("all", "".join(TERMINAL_QUERIES.values()))]:
        asked = await call(
            ssh_client, "run_command", command=f"printf '{query}'", pane_id=pane.pane_id
        )
        assert asked["exit_status"] == 0, (name, asked)
        after = await call(
            ssh_client, "run_command", command="echo one; echo two", pane_id=pane.pane_id
        )
        assert (after["output"], after["exit_status"]) == (["one", "two"], 0), (name, after)


@pytest.fixture(scope="module")
def words_host(ssh_target: SshTarget) -> Iterator[SshHost]:
    """One connection for the table of words: each word's command is a session of its
    master, as each of a host's commands is, and the master starts once, not once a word."""
    host = SshHost(ssh_target)
    try:
        run_apart(host.connect)
        yield host
    finally:
        host.close()


@pytest.mark.parametrize("word", HOSTILE_WORDS, ids=[repr(w)[:20] for w in HOSTILE_WORDS])
def test_a_remote_command_receives_each_word_verbatim(
    words_host: SshHost, tmp_path: Path, word: str
) -> None:
    mark = tmp_path / "ran"
    value = word.replace("{mark}", str(mark))
    argv = words_host.exec_command(["printf", "%s\\0", value, "second"])
    done = subprocess.run(argv, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == os.fsencode(value) + b"\0second\0"
    assert not mark.exists()


def test_a_connection_replaced_by_a_new_one_counts_as_lost(ssh_target: SshTarget) -> None:
    """What began on a master that was killed was lost, even once another call has
    started a new master that answers: the new one does not carry it."""
    host = SshHost(ssh_target)
    try:
        run_apart(host.connect)
        first = host.connection
        assert host.lost(first) is None
        os.kill(master_of(host), signal.SIGKILL)
        wait_until(lambda: host.lost() is not None)
        run_apart(host.connect)
        assert host.lost() is None
        assert host.lost(host.connection) is None
        assert host.lost(first) == f"the ssh connection to host {ALIAS!r} was lost"
    finally:
        host.close()


def test_a_connect_waiting_while_the_host_closes_starts_nothing(ssh_target: SshTarget) -> None:
    """A connect asked for before a close, and still waiting for the host's lock when the
    close comes, is refused: no master, no runtime directory after the close (a call
    cancelled as schemux closed left both)."""
    host = SshHost(ssh_target)
    temporary = Path(tempfile.gettempdir())
    before = set(runtime_directories(temporary))

    async def connect_during_close() -> str:
        host._lock.acquire()  # the connect's thread waits here, as behind another caller
        closing = threading.Thread(target=host.close)
        try:
            connecting = asyncio.ensure_future(host.connect())
            await asyncio.sleep(0.2)
            closing.start()
            await anyio.to_thread.run_sync(lambda: wait_until(host._connecting.ticket))
        finally:
            host._lock.release()
        try:
            with pytest.raises(ServerUnavailable) as refused:
                await connecting
        finally:
            await anyio.to_thread.run_sync(closing.join)
        return str(refused.value)

    try:
        message = run_apart(connect_during_close)
    finally:
        host.close()
    assert "was closed while it was being made" in message
    assert host.connection == 0  # no master was started
    assert set(runtime_directories(temporary)) == before


async def test_closing_ends_a_master_start_the_host_does_not_answer(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A host that does not answer (here its ProxyCommand sleeps) when schemux closes:
    ssh and its proxy are ended, not waited out (START_SECONDS, 30 s), and the connect
    says the host was closed; no runtime directory is left."""
    marker = f"schemux-test-proxy-{os.getpid()}-{time.monotonic_ns()}"
    config = tmp_path / "ssh_config"
    config.write_text(f"Host silent\n  ProxyCommand perl -e 'sleep 60' {marker}\n")
    temporary = Path(tempfile.gettempdir())
    before = set(runtime_directories(temporary))
    host = SshHost(SshTarget("silent", str(config)))
    took, said = await closed_mid_connect(host, marker)
    assert took < 2
    assert "was closed while it was being made" in said
    assert set(runtime_directories(temporary)) == before


async def test_a_dropped_connection_fails_the_call_at_once_and_the_next_reconnects(
    ssh_client: Client, ssh_context: ServingState, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    await call(ssh_client, "run_command", command="true", pane_id=pane.pane_id)
    master = master_pid(ssh_context)
    failed_at: list[float] = []
    message: list[str] = []

    call_timeout = 25

    async def long_call() -> None:
        message.append(
            await call_error(
                ssh_client, "run_command", command="sleep 30", pane_id=pane.pane_id,
                timeout=call_timeout,
            )
        )  # fmt: skip
        failed_at.append(time.monotonic())

    async with anyio.create_task_group() as group:
        group.start_soon(long_call)
        await until(lambda: pane_format(pane, "#{pane_current_command}") == "sleep", timeout=10)
        os.kill(master, 9)
        killed_at = time.monotonic()
    # an error, not a timed-out result, and long before the call's own timeout could
    # fire: the drop failed it (about 0.1 s quiet, 2.2 s once on a loaded machine)
    assert failed_at[0] - killed_at < call_timeout / 2
    assert f"host {ALIAS!r}" in message[0], message[0]
    assert "ssh connection" in message[0], message[0]
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "C-c")  # the sleep goes on
    await until(lambda: pane_format(pane, "#{pane_current_command}") == "bash", timeout=5)
    result = await call(ssh_client, "run_command", command="echo back", pane_id=pane.pane_id)
    assert result["output"] == ["back"]
    assert master_pid(ssh_context) != master


@pytest.mark.parametrize(
    ("alias", "expected"),
    [
        (BAD_KEY, "Permission denied (publickey)"),
        (UNKNOWN_HOST, "Host key verification failed"),
        (NO_TMUX, "tmux: not found"),
        (OLD_TMUX, "tmux 3.2a on host 'schemux-test-oldtmux' is too old"),
    ],
    ids=["auth", "unknown-host", "no-tmux", "old-tmux"],
)
async def test_a_host_that_cannot_serve_fails_the_first_call_in_one_line(
    anyio_backend: str, sshd: SshServer, tmux_socket: str, alias: str, expected: str
) -> None:
    target = SshTarget(alias, str(sshd.config))
    context = context_for(target, tmux_socket)
    try:
        async with client_of(context, BINDINGS) as client:
            started = time.monotonic()
            text = await call_error(client, "run_command", command="true")
            # failed on ssh's or the host's answer, not by waiting out the master's start
            assert time.monotonic() - started < START_SECONDS / 2
    finally:
        await context.close()
    first_line = text.splitlines()[0]
    assert expected in first_line, text
    assert f"host {alias!r}" in first_line, text


@pytest.mark.parametrize(
    ("alias", "expected"),
    [(ALIAS, None), (BAD_KEY, "Permission denied"), (OLD_TMUX, "too old")],
    ids=["ok", "auth", "old-tmux"],
)
def test_serve_and_doctor_check_the_host_at_start(
    sshd: SshServer, tmux_socket: str, alias: str, expected: str | None
) -> None:
    """``schemux call`` (like ``serve``) connects before it serves; doctor says how it
    went, with the remote tmux's version."""
    options = ["--ssh", alias, "--ssh-config", str(sshd.config), "-L", tmux_socket]
    seen = new_pane(tmux_socket, command="sleep 300")  # a session the snapshot must list
    doctor = subprocess.run(
        [sys.executable, "-m", "schemux", "doctor", *options],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    ssh_line = next(line for line in doctor.stdout.splitlines() if "  ssh: " in line)
    tools = subprocess.run(
        [sys.executable, "-m", "schemux", "call", *options, "tmux_snapshot", "{}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if expected is None:
        assert tools.returncode == 0, tools.stderr
        assert f'"{seen.session_name}"' in tools.stdout  # a session of the server there
        assert ssh_line.startswith("OK"), ssh_line
        assert "tmux 3." in ssh_line
        assert f"host {alias!r}" in ssh_line
        server_line = next(line for line in doctor.stdout.splitlines() if "  server: " in line)
        assert server_line.startswith("OK"), server_line
        assert f"on host {alias!r}" in server_line, server_line
        perl_line = next(line for line in doctor.stdout.splitlines() if "  perl: " in line)
        assert perl_line.startswith("OK"), perl_line
        assert "perl 5." in perl_line, perl_line
        assert f"on host {alias!r} (programs run under it)" in perl_line, perl_line
        python_line = next(line for line in doctor.stdout.splitlines() if "  python3: " in line)
        assert python_line.startswith("OK"), python_line
        assert "(control clients run under it)" in python_line or "safely" in python_line
    else:
        assert ssh_line.startswith("FAIL"), ssh_line
        assert expected in ssh_line, ssh_line
        assert tools.returncode == 2
        assert tools.stderr.count("\n") == 1, tools.stderr
        assert expected in tools.stderr, tools.stderr
    tmux(tmux_socket, "kill-session", "-t", seen.session_id)


async def test_programs_run_over_ssh(
    anyio_backend: str, remote_tmux_socket: str, ssh_target: SshTarget
) -> None:
    """Every program tool works over ssh, on a tmux server in the ssh session's pid
    namespace (tests/test_programs_ssh.py has the rest)."""
    context = context_for(ssh_target, remote_tmux_socket)
    try:
        async with client_of(context, BINDINGS) as client:
            ran = await call(client, "run_program", argv=["sh", "-c", "echo ran; exit 4"])
            assert (ran["output"], ran["exitStatus"]) == ("ran", 4)
            started = await call(client, "start_program", argv=["sh", "-c", "echo up; sleep 30"])
            program_id = started["programId"]
            page = await call(client, "read_program", programId=program_id, maxLines=1)
            assert page["text"] == "up\n"
            stopped = await call(client, "stop_program", programId=program_id)
            assert (stopped["outcome"], stopped["wasRunning"]) == ("stopped", True)
    finally:
        await context.close()


async def test_capture_over_ssh_reads_but_cannot_track(
    ssh_client: Client, tmux_socket: str
) -> None:
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    await call(ssh_client, "run_command", command="echo remote-screen", pane_id=pane.pane_id)
    snapshot = await call(ssh_client, "tmux_snapshot")
    found = [
        p["target"]
        for s in snapshot["data"]["sessions"]
        for w in s["windows"]
        for p in w["panes"]
        if p["target"]["id"] == pane.pane_id
    ]
    # the remote server's generation: the same server seen from here gives the same
    assert found == [pane.reference()]
    target = found[0]
    read = await call(ssh_client, "tmux_capture", target=target)
    assert "remote-screen" in str(read)
    tracked = await ssh_client.call_tool("tmux_capture", {"target": target, "track": True})
    assert tracked.is_error
    assert "tracking_unavailable" in str(tracked.structured_content), tracked
    assert "ssh" in str(tracked.structured_content)
    assert pane_format(pane, "#{pane_current_command}") == "bash"


async def test_the_first_call_starts_the_server_on_the_host_with_the_agent_session(
    anyio_backend: str, sshd: SshServer, ssh_target: SshTarget
) -> None:
    """No server on that socket of the host: the first call starts it there, with the
    agent's login shell in the remote user's home, and waits until that shell is ready."""
    name = tagged_socket_name("ssh-start")
    context = context_for(ssh_target, name)
    try:
        async with client_of(context, BINDINGS) as client:
            result = await call(client, "run_command", command='echo "$0"; pwd')
        assert result["output"] == ["-bash", str(sshd.config.parent / "home")]
        sessions = tmux(name, "list-sessions", "-F", "#{session_name}").split()
        assert sorted(sessions) == ["_schemux", "agent"]
        mark = tmux(name, "show-options", "-p", "-v", "-t", result["pane_id"], "@schemux_agent")
        assert mark.strip() == "1"
    finally:
        await context.close()
        remove_server(name)


def other_machine() -> str:
    """A machine tag that is not this machine's (its machine part differs)."""
    here = machine_tag()
    return ("0" if here[0] != "0" else "1") + here[1:]


def earlier_boot() -> str:
    """This machine's tag with another boot's part."""
    here = machine_tag()
    return here[:8] + ("0" if here[8] != "0" else "1") + here[9:]


DEAD_PID = 2**22 + 7  # above pid_max's default: runs no process here


@pytest.mark.parametrize(
    ("owner", "kept_over_ssh", "kept_here"),
    [
        # a mark of before the machine was written: judged here only
        (f"{DEAD_PID}-1", True, False),
        # this machine's dead owner: reaped wherever the server is
        (lambda: f"{DEAD_PID}-1-{machine_tag()}", False, False),
        # another machine's: never judged here, whatever its pid
        (lambda: f"{DEAD_PID}-1-{other_machine()}", True, True),
        (lambda: f"{os.getpid()}-1-{other_machine()}", True, True),
        # this machine's earlier boot: gone, whatever runs with that pid now
        (lambda: f"{os.getpid()}-{this_process().start_ticks}-{earlier_boot()}", False, False),
        # this process: alive
        (lambda: this_process().tag, True, True),
    ],
    ids=["unmarked", "ours-dead", "other-dead-pid", "other-live-pid", "earlier-boot", "alive"],
)
async def test_marks_are_judged_only_on_their_owners_machine(
    anyio_backend: str,
    tmux_socket: str,
    ssh_target: SshTarget,
    owner: str | Callable[[], str],
    kept_over_ssh: bool,
    kept_here: bool,
) -> None:
    """An owner is a pid of the machine it ran on, which its mark names: the marks a
    schemux of this machine left on a server (of this host or another) are reaped by the
    next one of this machine; another machine's are never judged here. Link marks and
    program panes here; run_command's hold flags go through the same Owner.may_run."""
    identity = owner if isinstance(owner, str) else owner()
    mark = f"@schemux-link-{identity}-{os.getpid():x}"
    for ssh, kept in [(ssh_target, kept_over_ssh), (None, kept_here)]:
        pane = new_pane(tmux_socket)
        option = ("set-option", "-p", "-t", pane.pane_id, "@schemux-program", identity)
        tmux(tmux_socket, *option, ";", "set-option", "-s", mark, "@999999")
        try:
            context = ServingState(Settings(socket_name=tmux_socket, ssh=ssh))
            try:
                await context.services.abandoned.settled(context.services.tmux())
            finally:
                await context.close()
            options = tmux(tmux_socket, "show-options", "-s")
            assert (mark in options) is kept, (ssh, identity, options)
            panes = tmux(tmux_socket, "list-panes", "-a", "-F", "#{pane_id}").split()
            assert (pane.pane_id in panes) is kept, (ssh, identity)
        finally:
            tmux(tmux_socket, "set-option", "-su", mark, check=False)
            tmux(tmux_socket, "kill-pane", "-t", pane.pane_id, check=False)


def connection_processes(sshd: SshServer) -> list[int]:
    """The sshd processes serving connections (the listener's descendants; the listener
    is the child of ``unshare``, ``tests.ssh_server``)."""
    found: list[int] = []
    parents = {sshd.process.pid}
    for depth in range(4):  # the listener, the connection's process, its child, ...
        table = process_table.processes()
        children = [process.pid for process in table if process.ppid in parents]
        if depth:
            found += children
        parents = set(children)
    return found


@pytest.mark.flaky_external(
    "ssh's keep-alive: its timers give up on a stopped server about 2 s after it stops, "
    "and later the more work holds the machine's cores (7.5 s once, under six workers)"
)
async def test_a_host_that_stops_answering_fails_the_call_by_ssh_keep_alive(
    ssh_client: Client, tmux_socket: str, ssh_target: SshTarget, sshd: SshServer
) -> None:
    """The network hangs (the server's side stops, nothing closes): ssh's keep-alive
    gives up on it, and the call fails; the next call connects again. The keep-alive
    gives up after about two seconds (``ALIVE_INTERVAL``), later when other work holds
    the machine's cores (2.6 s, and once 7.5, under six test workers): the bound tells
    it from the call's own 25-s timeout."""
    pane = new_pane(tmux_socket)
    wait_for_shell(pane)
    await call(ssh_client, "run_command", command="true", pane_id=pane.pane_id)
    failed_at: list[float] = []
    message: list[str] = []

    async def long_call() -> None:
        message.append(
            await call_error(
                ssh_client, "run_command", command="sleep 30", pane_id=pane.pane_id, timeout=25
            )
        )
        failed_at.append(time.monotonic())

    stopped: list[int] = []
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(long_call)
            await until(lambda: pane_format(pane, "#{pane_current_command}") == "sleep", timeout=10)
            for pid in connection_processes(sshd):
                with contextlib.suppress(ProcessLookupError):  # a command's process ended
                    os.kill(pid, signal.SIGSTOP)
                    stopped.append(pid)
            stopped_at = time.monotonic()
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert failed_at[0] - stopped_at < 12, failed_at[0] - stopped_at
    assert "ssh connection" in message[0], message[0]
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "C-c")  # the sleep goes on
    await until(lambda: pane_format(pane, "#{pane_current_command}") == "bash", timeout=5)
    result = await call(ssh_client, "run_command", command="echo back", pane_id=pane.pane_id)
    assert result["output"] == ["back"]


@pytest.mark.parametrize(
    ("env", "options", "problem"),
    [
        ({"SCHEMUX_SSH": "-oProxyCommand=touch /tmp/x"}, {}, "starts with '-'"),
        ({}, {"ssh": "host name"}, "whitespace"),
        ({}, {"ssh": ""}, "it is empty"),
        ({"SCHEMUX_SSH_CONFIG": "/etc/ssh/ssh_config"}, {}, "needs --ssh"),
        ({}, {"ssh_config": "/etc/ssh/ssh_config"}, "needs --ssh"),
    ],
)
def test_an_ssh_setting_that_is_not_one_is_refused_naming_it(
    env: dict[str, str], options: dict[str, str], problem: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        settings_from(env, ssh=options.get("ssh"), ssh_config=options.get("ssh_config"))
    assert problem in str(raised.value)
    assert "--ssh" in str(raised.value)


def test_options_win_over_the_environment_for_ssh() -> None:
    env = {"SCHEMUX_SSH": "env-host", "SCHEMUX_SSH_CONFIG": "/env/config"}
    assert settings_from(env).ssh == SshTarget("env-host", "/env/config")
    chosen = settings_from(env, ssh="option-host", ssh_config="/option/config")
    assert chosen.ssh == SshTarget("option-host", "/option/config")
    assert settings_from({}).ssh is None


def test_doctor_says_when_the_host_has_no_perl(sshd: SshServer, tmux_socket: str) -> None:
    """A host whose PATH has no perl (nor tmux) can run no program: doctor's perl line
    fails and says how to fix it."""
    doctor = subprocess.run(
        [sys.executable, "-m", "schemux", "doctor", "--ssh", NO_TMUX,
         "--ssh-config", str(sshd.config), "-L", tmux_socket],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    perl_line = next(line for line in doctor.stdout.splitlines() if "  perl: " in line)
    assert perl_line.startswith("FAIL"), perl_line
    assert f"perl cannot run on host {NO_TMUX!r}" in perl_line, perl_line
    assert "programs over ssh need it" in doctor.stdout
    assert doctor.returncode == 1


def test_the_remote_side_runs_the_tmux_under_test_in_the_runs_tmux_directory(
    sshd: SshServer,
) -> None:
    """The test sshd gives a remote command the tmux the tests run (so that a run
    against another tmux build has it on both sides: .ci/against-tmux) and the run's
    TMUX_TMPDIR (so that both sides find the same servers, never the user's)."""
    done = subprocess.run(
        ["ssh", "-F", str(sshd.config), ALIAS, 'tmux -V; printf "%s\\n" "$TMUX_TMPDIR"'],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    local = subprocess.run(["tmux", "-V"], capture_output=True, text=True, check=True).stdout
    assert done.stdout.splitlines() == [local.strip(), os.environ["TMUX_TMPDIR"]]
