"""One command fanned out to many hosts (``schemux.fanout``), on real hosts: exec-kind
hosts on this machine (``env TMUX_TMPDIR=DIR``: each its own tmux server, started by
schemux with the agent's session as on a fresh host), a host over ssh (``tests.
ssh_server``), and hosts that are unreachable, slow or lose their server mid-call. Each
host's answer is its own; the others are never held up.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from schemux import progress
from schemux.config import ExecTarget, SshTarget
from schemux.context import ToolContext
from schemux.errors import SchemuxError
from schemux.fanout import HostAnswer, ServerOpener, run_on_hosts
from schemux.tmux import TmuxServer
from tests.contexts import Contexts
from tests.support import remove_server, tagged_socket_name, wait_until

pytestmark = pytest.mark.anyio

SLOW_SECONDS = 8  # each command through the slow host's prefix waits this long first


@dataclass(frozen=True)
class ExecHostOnThisMachine:
    """A host reached by ``env TMUX_TMPDIR=DIR HOME=DIR/home``: its tmux servers are this
    machine's, apart from every other host's, and its login shell reads the startup files
    of a home of its own (empty: this machine's user's may do anything, such as wait for
    a lock); ``delay`` seconds before each command makes it slow."""

    name: str
    directory: Path
    socket_name: str
    delay: float = 0

    @property
    def prefix(self) -> tuple[str, ...]:
        env = ("env", f"TMUX_TMPDIR={self.directory}", f"HOME={self.directory}/home")
        if not self.delay:
            return env
        return (*env, "sh", "-c", f'sleep {self.delay:g}; exec "$@"', "sh")

    def tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["env", f"TMUX_TMPDIR={self.directory}", "tmux", "-L", self.socket_name, *args],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def agent_pane(self) -> str:
        return self.tmux("list-panes", "-t", "=agent", "-F", "#{pane_id}").split()[0]


class Hosts:
    """The test's hosts, their contexts (closed by ``make_context``) and their servers
    (killed, directories removed, at the end)."""

    def __init__(self, make_context: Contexts) -> None:
        self._make_context = make_context
        self.exec_hosts: list[ExecHostOnThisMachine] = []
        self.ssh_sockets: list[str] = []  # servers started over ssh, in this /tmp too
        self.contexts: dict[str, ToolContext] = {}

    def exec_host(self, name: str, delay: float = 0) -> ExecHostOnThisMachine:
        # short: a socket's path must fit in 108 bytes
        directory = Path(tempfile.mkdtemp(prefix="sxfan", dir="/tmp"))
        (directory / "home").mkdir()
        host = ExecHostOnThisMachine(name, directory, tagged_socket_name(name), delay)
        self.exec_hosts.append(host)
        self.contexts[name] = self._make_context(
            socket_name=host.socket_name, exec_prefix=ExecTarget(host.prefix)
        )
        return host

    def ssh_host(self, name: str, target: SshTarget) -> None:
        socket_name = tagged_socket_name(name)
        self.ssh_sockets.append(socket_name)
        self.contexts[name] = self._make_context(socket_name=socket_name, ssh=target)

    def prefix_host(self, name: str, prefix: tuple[str, ...]) -> None:
        self.contexts[name] = self._make_context(
            socket_name=tagged_socket_name(name), exec_prefix=ExecTarget(prefix)
        )

    def openers(self, *names: str) -> list[tuple[str, ServerOpener]]:
        def opener(context: ToolContext) -> ServerOpener:
            async def open_server() -> TmuxServer:
                return context.tmux()

            return open_server

        return [(name, opener(self.contexts[name])) for name in names or self.contexts]

    def close(self) -> None:
        for host in self.exec_hosts:
            host.tmux("kill-server", check=False)
            shutil.rmtree(host.directory, ignore_errors=True)
        for socket_name in self.ssh_sockets:
            remove_server(socket_name)


@pytest.fixture
def hosts(make_context: Contexts) -> Iterator[Hosts]:
    made = Hosts(make_context)
    try:
        yield made
    finally:
        made.close()


def by_host(answers: list[HostAnswer]) -> dict[str, HostAnswer]:
    return {answer.host: answer for answer in answers}


def output_of(answer: HostAnswer) -> list[str]:
    assert answer.result is not None, answer.error
    assert answer.result.exit_status == 0, answer
    return answer.result.lines


async def test_every_host_answers_in_order_with_exact_output(
    hosts: Hosts, ssh_target: SshTarget
) -> None:
    for name in ("web1", "web2", "db"):
        hosts.exec_host(name)
    hosts.ssh_host("far", ssh_target)
    answers = await run_on_hosts(
        hosts.openers("db", "far", "web1", "web2"),
        "case $TMUX in *sxfan*) echo 1;; *) echo 0;; esac; printf '%s\\n' one 'two  words'",
        timeout=30,
        suppress_history=True,
    )
    assert [answer.host for answer in answers] == ["db", "far", "web1", "web2"]
    for answer in answers:
        seen_directory = "0" if answer.host == "far" else "1"  # each exec host's own TMUX_TMPDIR
        assert output_of(answer) == [seen_directory, "one", "two  words"], answer.host
        assert answer.pane_id is not None
    for host in hosts.exec_hosts:  # the agent's pane of each host's own server ran it
        assert by_host(answers)[host.name].pane_id == host.agent_pane()


HOSTILE_COMMANDS = [
    "printf '%s\\n' \"it's\" '\"q\"'",
    "echo '$(touch {mark})' \"\\`touch {mark}\\`\"",
    "echo 'a ; kill-server' ';' '&&' '|'",
    "echo '#{pane_id}' '%1' '{a,b}' '!'",
    "echo first\necho 'second\nline'",
]


@pytest.mark.parametrize("command", HOSTILE_COMMANDS, ids=range(len(HOSTILE_COMMANDS)))
async def test_hostile_commands_run_as_given_on_every_transport(
    hosts: Hosts, ssh_target: SshTarget, tmp_path: Path, command: str
) -> None:
    mark = tmp_path / "ran"
    command = command.replace("{mark}", str(mark))
    hosts.exec_host("near")
    hosts.ssh_host("far", ssh_target)
    bash = ["bash", "-c", command]
    here = await anyio.to_thread.run_sync(
        lambda: subprocess.run(bash, capture_output=True, text=True, check=True)
    )
    answers = await run_on_hosts(
        hosts.openers(), command, timeout=30, suppress_history="\n" not in command
    )
    for answer in answers:
        assert output_of(answer) == here.stdout.splitlines(), answer.host
    assert not mark.exists()


async def test_a_command_no_shell_takes_is_refused_before_any_host_is_reached(
    hosts: Hosts,
) -> None:
    host = hosts.exec_host("near")
    with pytest.raises(SchemuxError, match="single line"):
        await run_on_hosts(hosts.openers(), "echo a\necho b", timeout=5, suppress_history=True)
    assert host.tmux("list-sessions", check=False) == ""  # no server was started


async def test_unreachable_and_refusing_hosts_answer_their_own_errors(
    hosts: Hosts, ssh_target: SshTarget
) -> None:
    hosts.exec_host("up")
    hosts.prefix_host("noprefix", ("/nonexistent/schemux-prefix",))
    hosts.prefix_host("refuses", ("sh", "-c", "echo no entry >&2; exit 1", "sh"))
    hosts.ssh_host("badkey", SshTarget("schemux-test-badkey", ssh_target.config))
    started = time.monotonic()
    answers = by_host(
        await run_on_hosts(hosts.openers(), "echo fine", timeout=20, suppress_history=True)
    )
    assert output_of(answers["up"]) == ["fine"]
    for name in ("noprefix", "refuses", "badkey"):
        answer = answers[name]
        assert answer.result is None, answer
        assert answer.pane_id is None, answer
        assert answer.error, name
    assert "schemux-prefix" in (answers["noprefix"].error or "")
    assert "no entry" in (answers["refuses"].error or "")
    assert time.monotonic() - started < 15


async def test_a_slow_host_times_out_alone(hosts: Hosts) -> None:
    hosts.exec_host("fast1")
    hosts.exec_host("slow", delay=SLOW_SECONDS)
    hosts.exec_host("fast2")
    finished: dict[str, float] = {}
    started = time.monotonic()

    async def record(value: float, total: float | None, message: str | None) -> None:
        if message is not None and message.startswith("host "):
            finished[message.split()[1].rstrip(":")] = time.monotonic() - started

    async with progress.reporting(record):
        progress.expect(5, "waiting for the hosts")
        answers = by_host(
            await run_on_hosts(hosts.openers(), "echo quick", timeout=5, suppress_history=True)
        )
    assert output_of(answers["fast1"]) == ["quick"]
    assert output_of(answers["fast2"]) == ["quick"]
    assert "not reached within 5 s" in (answers["slow"].error or "")
    assert set(finished) == {"fast1", "fast2", "slow"}
    # the fast hosts answered while the slow one was still being reached
    assert finished["fast1"] < 5, finished
    assert finished["fast2"] < 5, finished
    assert finished["slow"] >= 5, finished


async def test_a_host_whose_server_is_killed_mid_call_answers_its_error(hosts: Hosts) -> None:
    first = hosts.exec_host("first")
    doomed = hosts.exec_host("doomed")
    hosts.exec_host("last")
    await run_on_hosts(hosts.openers(), "true", timeout=30, suppress_history=True)

    async def kill_when_running() -> None:
        def running() -> bool:
            screen = doomed.tmux("capture-pane", "-p", "-t", doomed.agent_pane())
            return "started" in screen.splitlines()

        await anyio.to_thread.run_sync(lambda: wait_until(running, timeout=10))
        doomed.tmux("kill-server")

    async with anyio.create_task_group() as group:
        group.start_soon(kill_when_running)
        command = "echo started; sleep 3; echo survived"
        answers = by_host(
            await run_on_hosts(hosts.openers(), command, timeout=20, suppress_history=True)
        )
    assert output_of(answers["first"]) == ["started", "survived"]
    assert output_of(answers["last"]) == ["started", "survived"]
    assert answers["doomed"].result is None
    assert answers["doomed"].error
    assert first.tmux("list-sessions")  # the others' servers are untouched
