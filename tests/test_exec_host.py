"""The exec host (``schemux --exec PREFIX``): the tools that work over ssh work through a
command prefix. The prefix here changes what the target is: ``runuser -u USER --`` into a
throwaway user (made with ``useradd``, as ``tests.test_login_shells`` does), whose tmux
server, shells, programs and files are that user's, and whose pids schemux treats as
another machine's (the remote paths: shell facts read there, programs under the helper
and the Perl gate there). A prefix through the test sshd (``ssh -F CONFIG HOST``) checks
the other way a prefix can pass words: joined into one string for a shell there.

Needs root (as here and in CI); skipped, saying why, where users cannot be made.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shlex
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from schemux.config import Settings, settings_from
from schemux.errors import ConfigError, ServerUnavailable
from schemux.generated.bindings import BINDINGS
from schemux.hosts import ExecTarget, SshTarget
from schemux.hosts.exec_prefix import ExecHost
from schemux.serving.state import ServingState
from schemux.shell.abandoned import reap_runtime_directories
from schemux.tmux.control.connection import Connection
from schemux.tmux.format import decode, field
from tests.conftest import stdio_parameters
from tests.contexts import client_of
from tests.process_table import processes
from tests.ssh_server import ALIAS, SshServer
from tests.support import call, closed_mid_connect, tagged_socket_name, until
from tests.test_ssh import HOSTILE_WORDS
from tests.users import throwaway_user, user_processes

pytestmark = pytest.mark.anyio

# a lone surrogate is not text: the tools' arguments refuse it before anything runs
TEXT_WORDS = [word for word in HOSTILE_WORDS if "\udcff" not in word]


@pytest.fixture(scope="module")
def user() -> Iterator[pwd.struct_passwd]:
    """A throwaway user (bash its login shell), removed with its home (its tmux sockets
    and temporary files with it) afterwards."""
    with throwaway_user("/bin/bash", "runuser", "perl") as user:
        yield user


@pytest.fixture(scope="module")
def exec_target(user: pwd.struct_passwd) -> ExecTarget:
    """The user's side, with tmux's sockets and temporary files in its home. Its commands
    start in this test's directory, as runuser leaves it: one the user may not be able
    to enter (a checkout under a private directory, as a CI runner's may be)."""
    home = user.pw_dir
    return ExecTarget(
        ("runuser", "-u", user.pw_name, "--", "env", f"TMUX_TMPDIR={home}", f"TMPDIR={home}")
    )


def there(target: ExecTarget, *argv: str) -> str:
    """``argv`` run through the prefix, as the test sees the target."""
    done = subprocess.run(
        [*target.prefix, *argv], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def exec_socket(exec_target: ExecTarget) -> Iterator[str]:
    name = tagged_socket_name("exec")
    try:
        yield name
    finally:
        subprocess.run(
            [*exec_target.prefix, "tmux", "-L", name, "kill-server"],
            capture_output=True, timeout=30, check=False,
        )  # fmt: skip


@pytest.fixture(scope="module")
async def exec_client(
    anyio_backend: str, exec_target: ExecTarget, exec_socket: str
) -> AsyncIterator[Client]:
    """One context for the module's tools: the server it starts there, with the agent's
    session, serves them all."""
    context = ServingState(Settings(socket_name=exec_socket, exec_prefix=exec_target))
    try:
        async with client_of(context, BINDINGS) as client:
            yield client
    finally:
        await context.close()


async def test_commands_run_as_the_target_in_its_shell(
    exec_client: Client, user: pwd.struct_passwd, exec_target: ExecTarget, exec_socket: str
) -> None:
    # no target: schemux starts the configured server there, with the agent's session
    result = await call(exec_client, "run_command", command="id -un; echo \"$HOME\"; echo 'a;b'")
    assert result["output"] == [user.pw_name, user.pw_dir, "a;b"]
    assert result["exit_status"] == 0
    # the server is the user's: found in the user's socket directory, its process theirs
    pid = int(there(exec_target, "tmux", "-L", exec_socket, "display-message", "-p", "#{pid}"))
    assert os.stat(f"/proc/{pid}").st_uid == user.pw_uid
    snapshot = await call(exec_client, "tmux_snapshot")
    panes = [
        pane["target"]["id"]
        for session in snapshot["data"]["sessions"]
        for window in session["windows"]
        for pane in window["panes"]
    ]
    assert result["pane_id"] in panes


async def test_a_command_reports_its_end_to_the_hosts_helper_not_by_a_tmux_client(
    exec_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the host's program helper runs, the wrapper tells its command's end to the
    helper through a pipe of the helper's, with shell builtins, and waits for its answer:
    no tmux client starts in the shell for it, so schemux waits on no tmux channel and
    sets no hold flag for it. Output and status are exact, and each next call finds the
    shell at its prompt. (Failed before: every report was a tmux client, its signal
    waited for by a wait-for.)"""
    await call(exec_client, "run_program", argv=["true"])  # the helper runs
    sent: list[str] = []
    send = Connection.send

    def noting(connection: Connection, args: tuple[str, ...]) -> asyncio.Future[list[str]]:
        sent.extend(word for word in args if word == "wait-for" or "@schemux_h_" in word)
        return send(connection, args)

    monkeypatch.setattr(Connection, "send", noting)
    for _ in range(3):
        result = await call(exec_client, "run_command", command="echo one; (exit 3)")
        assert (result["output"], result["exit_status"]) == (["one"], 3)
    assert sent == []


async def test_a_gone_shells_report_pipes_are_forgotten(
    anyio_backend: str, exec_target: ExecTarget, exec_socket: str
) -> None:
    """The helper drops a gone shell's report pipes when it makes another shell's, and
    says so: their descriptors' numbers may be a later pipe's, and a shell given them
    (a new one with the gone one's pid) must never write into another's. (Failed
    before: the gone shell's pipes were still given out.)"""

    def shell_there() -> subprocess.Popen[str]:
        argv = [*exec_target.prefix, "sh", "-c", "echo $$; exec sleep 60"]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)

    context = ServingState(Settings(socket_name=exec_socket, exec_prefix=exec_target))
    first, second = shell_there(), shell_there()
    assert first.stdout is not None
    assert second.stdout is not None
    gone, other = int(first.stdout.readline()), int(second.stdout.readline())
    try:
        async with client_of(context) as client:
            await call(client, "run_program", argv=["true"])  # the helper runs
            helper = context.services.tmux().address.host.facts_helper()
            assert helper is not None
            assert await helper.shell_reports(gone) is not None
            os.kill(gone, signal.SIGKILL)  # the shell there (the prefix may be its parent)
            first.wait()
            await until(lambda: not Path(f"/proc/{gone}").exists())
            assert await helper.shell_reports(other) is not None  # the gone one's dropped
            assert await helper.shell_reports(gone) is None
    finally:
        for shell, pid in ((first, gone), (second, other)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            shell.wait()
        await context.close()


async def test_a_command_that_outlives_its_call_frees_its_shell_when_it_ends(
    exec_client: Client, exec_target: ExecTarget, exec_socket: str
) -> None:
    """A call that timed out leaves its command running; when it ends, its report, which
    no call waits for any more, is answered at once: the shell goes back to its prompt
    and the next call runs there."""
    await call(exec_client, "run_program", argv=["true"])  # the helper runs
    timed = await call(
        exec_client, "run_command", command="sleep 1; echo late-$((6*7))", timeout=0.3
    )
    assert timed["timed_out"]
    pane = timed["pane_id"]

    def shows(text: str) -> bool:
        return text in there(
            exec_target, "tmux", "-L", exec_socket, "capture-pane", "-p", "-t", pane
        )

    await until(lambda: shows("late-42"))
    result = await call(exec_client, "run_command", command="echo next", timeout=10)
    assert (result["output"], result["exit_status"]) == (["next"], 0)


async def test_a_cancelled_command_is_interrupted_and_its_shell_freed(exec_client: Client) -> None:
    """Cancelled mid-command, the call interrupts its command (C-c) and the wrapper's
    report of the interrupt is answered at once: the next call runs in the same shell."""
    await call(exec_client, "run_program", argv=["true"])  # the helper runs
    with anyio.move_on_after(1.0) as scope:
        await exec_client.call_tool("run_command", {"command": "sleep 30; echo never"})
    assert scope.cancelled_caught
    result = await call(exec_client, "run_command", command="echo after", timeout=15)
    assert (result["output"], result["exit_status"]) == (["after"], 0)


async def test_a_schemux_killed_mid_command_leaves_its_shell_free(
    exec_client: Client, exec_target: ExecTarget, exec_socket: str
) -> None:
    """schemux killed with SIGKILL while its command runs: the host's helper ends with it
    (its input ends), so the wrapper's report finds no pipe to write to and its shell
    goes back to its prompt as the command ends, held by nothing; another schemux runs
    the next command there."""
    pane = (await call(exec_client, "run_command", command="true"))["pane_id"]
    prefix = shlex.join(exec_target.prefix)
    parameters = stdio_parameters("--socket-name", exec_socket, "--exec", prefix)

    def now(format_: str) -> str:
        return there(exec_target, "tmux", "-L", exec_socket, "display", "-p", "-t", pane, format_)

    with anyio.move_on_after(30):
        async with Client(parameters) as doomed, anyio.create_task_group() as group:
            await call(doomed, "run_program", argv=["true"])  # its helper runs
            (server,) = [  # this one's: the worker may hold another schemux (stdio_client)
                p.pid
                for p in processes()
                if p.ppid == os.getpid() and b"serve" in p.argv and b"--exec" in p.argv
            ]

            async def run() -> None:
                with contextlib.suppress(MCPError):  # the server dies under it
                    await doomed.call_tool("run_command", {"command": "sleep 2"})

            group.start_soon(run)
            await until(lambda: now("#{pane_current_command}").strip() == "sleep")
            os.kill(server, signal.SIGKILL)
            group.cancel_scope.cancel()
    # the command ends and its shell reads its terminal again, not a pipe of the helper's
    await until(lambda: now("#{pane_current_command}").strip() == "bash", timeout=10)
    shell = int(now("#{pane_pid}"))
    await until(lambda: os.readlink(f"/proc/{shell}/fd/0").startswith("/dev/pts/"), timeout=5)
    result = await call(exec_client, "run_command", command="echo free", timeout=15)
    assert (result["output"], result["exit_status"]) == (["free"], 0)
    reap_runtime_directories()  # what the killed one left here, as a next start reaps


async def test_keys_waits_and_captures_reach_the_targets_pane(exec_client: Client) -> None:
    pane = (await call(exec_client, "run_command", command="true"))["pane_id"]
    async with anyio.create_task_group() as group:
        waited: dict[str, object] = {}

        async def wait() -> None:
            waited.update(
                await call(exec_client, "wait_for_text", pane_id=pane, patterns=["typed-42"])
            )

        group.start_soon(wait)
        await anyio.sleep(0.2)
        await call(exec_client, "send_keys", keys="echo typed-$((6*7))", pane_id=pane)
    assert waited, "wait_for_text returned nothing"
    screen = await call(exec_client, "capture_pane", pane_id=pane)
    assert "typed-42" in str(screen)
    snapshot = await call(exec_client, "tmux_snapshot")
    target = next(
        p["target"]
        for s in snapshot["data"]["sessions"]
        for w in s["windows"]
        for p in w["panes"]
        if p["target"]["id"] == pane
    )
    read = await call(exec_client, "tmux_capture", target=target)
    assert "typed-42" in str(read)
    # the pane's process is no process of this machine's to hold: refused, saying why
    tracked = await exec_client.call_tool("tmux_capture", {"target": target, "track": True})
    assert tracked.is_error
    assert "tracking_unavailable" in str(tracked.structured_content)
    assert "reached over exec" in str(tracked.structured_content)


async def test_programs_run_there_and_stop(exec_client: Client, user: pwd.struct_passwd) -> None:
    ran = await call(
        exec_client, "run_program", argv=["sh", "-c", "id -un; pwd"], startDirectory=user.pw_dir
    )
    assert ran["output"].splitlines() == [user.pw_name, user.pw_dir]
    assert ran["exitStatus"] == 0
    started = await call(
        exec_client, "start_program", argv=["sh", "-c", "echo started; exec sleep 300"]
    )
    page = await call(exec_client, "read_program", programId=started["programId"], timeoutMs=20_000)
    assert page["text"].startswith("started")
    await until(lambda: _sleeping(user.pw_uid))
    stopped = await call(exec_client, "stop_program", programId=started["programId"])
    assert stopped["outcome"] == "stopped", stopped
    await until(lambda: not _sleeping(user.pw_uid))


async def test_programs_default_to_the_targets_home_when_the_inherited_directory_is_not_its(
    anyio_backend: str,
    user: pwd.struct_passwd,
    exec_socket: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A prefix that leaves the directory as it is (``runuser`` does) gives the target
    schemux's own, here one the user cannot enter (as a checkout under a private
    directory is): a program given no startDirectory starts in the user's home, as a
    login's would, not in a directory that means nothing there."""
    private = tmp_path / "private dir"
    private.mkdir(mode=0o700)
    monkeypatch.chdir(private)
    home = user.pw_dir
    target = ExecTarget(
        ("runuser", "-u", user.pw_name, "--", "env", f"TMUX_TMPDIR={home}", f"TMPDIR={home}")
    )
    assert there(target, "sh", "-c", "cd . 2>/dev/null || echo cannot") == "cannot\n"
    context = ServingState(Settings(socket_name=exec_socket, exec_prefix=target))
    try:
        async with client_of(context, BINDINGS) as client:
            ran = await call(client, "run_program", argv=["pwd"])
            assert (ran["output"].splitlines(), ran["exitStatus"]) == ([home], 0)
            started = await call(client, "start_program", argv=["pwd"])
            page = await call(
                client, "read_program", programId=started["programId"], timeoutMs=20_000
            )
            assert page["text"].splitlines() == [home]
    finally:
        await context.close()


def _sleeping(uid: int) -> bool:
    """Whether the user runs ``sleep 300`` (the started program)."""
    for pid in user_processes(uid):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == b"sleep\x00300\x00":
                return True
        except OSError:
            continue
    return False


@pytest.mark.parametrize("word", TEXT_WORDS, ids=[repr(w)[:20] for w in TEXT_WORDS])
async def test_hostile_argv_reaches_the_program_verbatim(
    exec_client: Client, tmp_path: Path, word: str
) -> None:
    mark = tmp_path / "ran"
    value = word.replace("{mark}", str(mark))
    script = 'printf "%s" "$1" | od -An -v -tx1'
    result = await call(exec_client, "run_program", argv=["sh", "-c", script, "sh", value])
    assert "".join(result["output"].split()) == os.fsencode(value).hex()
    assert result["exitStatus"] == 0
    assert not mark.exists()


@pytest.mark.long
@pytest.mark.parametrize("way", ["verbatim", "joined"])
def test_each_word_reaches_the_target_as_one_argument(
    way: str, exec_target: ExecTarget, sshd: SshServer, ssh_target: SshTarget, tmp_path: Path
) -> None:
    """``runuser`` passes the words after it verbatim; ``ssh`` joins them into a string for
    the shell there: the probe tells which, and either way each word arrives whole."""
    if way == "verbatim":
        target = exec_target
    else:
        assert ssh_target.config is not None
        target = ExecTarget(("ssh", "-F", ssh_target.config, ALIAS))
    host = ExecHost(target)
    mark = tmp_path / "ran"
    try:
        assert host.check_tmux().startswith("tmux ")
        for word in HOSTILE_WORDS:
            value = word.replace("{mark}", str(mark))
            argv = host.exec_command(["printf", "%s\\0", value, "second"])
            done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
            assert done.returncode == 0, done.stderr
            assert done.stdout == os.fsencode(value) + b"\0second\0"
    finally:
        host.close()
    assert not mark.exists()


async def test_hostile_values_reach_the_targets_tmux_as_one_argument(
    exec_client: Client, exec_target: ExecTarget, exec_socket: str, tmp_path: Path
) -> None:
    """Through the control client and through a one-off client (an argv after the
    prefix), each word is one argument of tmux's there: set as an option, read back."""
    await call(exec_client, "list_sessions")  # the module's server runs, whatever ran before
    context = ServingState(Settings(socket_name=exec_socket, exec_prefix=exec_target))
    mark = tmp_path / "ran"
    try:
        server = context.services.tmux()
        option = "@schemux_test_word"
        for word in TEXT_WORDS:
            value = word.replace("{mark}", str(mark))
            await server.run("set-option", "-s", option, value)
            # through tmux_format's field: tmux 3.4 and 3.5 escape what show-options prints
            shown = await server.run_subprocess("display-message", "-p", field(option))
            assert [decode(line) for line in shown] == [value]
        await server.run("set-option", "-s", "-u", option)
    finally:
        await context.close()
    assert not mark.exists()


def test_schemux_settings_stay_out_of_the_targets_environment(
    exec_target: ExecTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    """runuser passes its environment on: schemux's own (an HTTP token) must not reach
    the target's user; the rest of the environment does."""
    monkeypatch.setenv("SCHEMUX_HTTP_TOKEN", "never-on-the-target-0123456789")
    monkeypatch.setenv("SCHEMUX_TEST_PASSED_ON", "1")
    monkeypatch.setenv("NOT_SCHEMUX_SETTING", "passed-on")
    host = ExecHost(exec_target)
    try:
        done = subprocess.run(
            host.exec_command(["env"]), capture_output=True, text=True, timeout=30, check=True
        )
    finally:
        host.close()
    assert "never-on-the-target" not in done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith("SCHEMUX_")]
    assert "NOT_SCHEMUX_SETTING=passed-on" in done.stdout


def test_a_prefix_that_runs_no_command_is_refused_in_one_line() -> None:
    """A prefix that swallows the command (or names no program) fails at connection,
    saying so, before any call."""
    for prefix, said in (
        (("sh", "-c", "exit 3"), "did not run a command given to it"),
        (("/nonexistent/prefix",), "the exec prefix cannot be run"),
    ):
        host = ExecHost(ExecTarget(prefix))
        with pytest.raises(ServerUnavailable, match=said):
            host.check_tmux()
        host.close()


def test_doctor_checks_the_exec_host(exec_target: ExecTarget, exec_socket: str) -> None:
    prefix = shlex.join(exec_target.prefix)
    doctor = subprocess.run(
        [sys.executable, "-m", "schemux", "doctor", "--exec", prefix, "-L", exec_socket],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    lines = doctor.stdout.splitlines()
    exec_line = next(line for line in lines if "  exec: " in line)
    assert exec_line.startswith("OK"), exec_line
    perl_line = next(line for line in lines if "  perl: " in line)
    assert perl_line.startswith("OK"), perl_line
    server_line = next(line for line in lines if "  server: " in line)
    assert not server_line.startswith("FAIL"), server_line
    refused = subprocess.run(
        [sys.executable, "-m", "schemux", "doctor", "--exec", "/nonexistent/prefix"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    exec_line = next(line for line in refused.stdout.splitlines() if "  exec: " in line)
    assert exec_line.startswith("FAIL"), exec_line
    assert refused.returncode == 1


def test_the_prefix_is_parsed_as_a_shell_would_and_checked() -> None:
    settings = settings_from({}, exec_prefix="kubectl exec -i 'my pod' --")
    assert settings.exec_prefix == ExecTarget(("kubectl", "exec", "-i", "my pod", "--"))
    assert settings.host_target == settings.exec_prefix
    from_env = settings_from({"SCHEMUX_EXEC": "docker exec -i c1"})
    assert from_env.exec_prefix == ExecTarget(("docker", "exec", "-i", "c1"))
    for bad, said in (
        ("docker 'unclosed", "No closing quotation"),
        ("", "names no command"),
        ("-i docker", "starts with '-'"),
    ):
        with pytest.raises(ConfigError, match=f"--exec.*{said}"):
            settings_from({"SCHEMUX_EXEC": "echo"}, exec_prefix=bad)
    with pytest.raises(ConfigError, match="not both"):
        settings_from({}, ssh="host", exec_prefix="docker exec -i c1")


async def test_closing_the_context_leaves_no_process(
    anyio_backend: str, exec_target: ExecTarget, exec_socket: str, user: pwd.struct_passwd
) -> None:
    """A context that ran a command and a program ends every process it made through the
    prefix (its control client, the program helper); the server stays, as over ssh."""
    before = _children()
    helpers_before = _helpers(user.pw_uid)
    context = ServingState(Settings(socket_name=exec_socket, exec_prefix=exec_target))
    try:
        async with client_of(context, BINDINGS) as client:
            await call(client, "run_command", command="true")
            await call(client, "run_program", argv=["true"])
            assert _helpers(user.pw_uid) > helpers_before
    finally:
        await context.close()
    await until(lambda: _children() <= before)
    await until(lambda: _helpers(user.pw_uid) <= helpers_before)
    there(exec_target, "tmux", "-L", exec_socket, "has-session")


def _children() -> set[int]:
    """This process's child processes, zombies included (not reaped yet)."""
    return {process.pid for process in processes() if process.ppid == os.getpid()}


def _helpers(uid: int) -> set[int]:
    """The user's program helpers (perl running schemux's script)."""
    found = set()
    for pid in user_processes(uid):
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if words[:2] == [b"perl", b"-e"]:
            found.add(pid)
    return found


async def test_closing_ends_a_probe_the_target_does_not_answer(anyio_backend: str) -> None:
    """A target that does not answer its probe (here a prefix that sleeps first, as a
    stopped container's ``docker exec`` can) when schemux closes: the probe is ended,
    not waited out (START_SECONDS, 30 s), and the connect says the host was closed."""
    marker = f"schemux-test-probe-{uuid.uuid4().hex[:8]}"
    host = ExecHost(ExecTarget(("perl", "-e", f"sleep 60; exec @ARGV # {marker}")))
    took, said = await closed_mid_connect(host, marker)
    assert took < 2
    assert "was closed while it was being made" in said
