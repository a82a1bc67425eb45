"""run_command_on_hosts (``schemux.domain.fanout``) through a real MCP client, on one schemux
serving a fleet of real hosts: exec-kind hosts on this machine (``env TMUX_TMPDIR=DIR``:
each its own tmux server, started by schemux with the agent's session as on a fresh
host), a host over ssh (``tests.ssh_server``), and hosts that are unreachable, refuse,
are slow or lose their server mid-call. Each host's answer is its own; the others are
never held up; a cancelled call interrupts every host's command.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.audit.reader import line
from schemux.config import ENV_HOST, AuditSettings
from schemux.host_settings import ExecTarget, FleetSettings, NamedHost, SshTarget
from schemux.panes.targets import resolve_pane
from schemux.serving.state import ServingState
from tests.conftest import stdio_parameters
from tests.contexts import Contexts, client_of
from tests.process_table import processes
from tests.ssh_server import BAD_KEY
from tests.support import call, call_error, remove_server, tagged_socket_name, tmux, wait_until
from tests.test_audit import records

pytestmark = pytest.mark.anyio

SLOW_SECONDS = 8  # each command through the slow host's prefix waits this long first


@dataclass(frozen=True)
class ExecHostOnThisMachine:
    """A host reached by ``env TMUX_TMPDIR=DIR HOME=DIR/home``: its tmux servers are this
    machine's, apart from every other host's, and its login shell reads the startup files
    of a home of its own (empty: this machine's user's may do anything, such as wait for
    a lock); ``delay`` seconds before each command (with ``tmux_only``, each tmux
    client's) makes it slow."""

    name: str
    directory: Path
    socket_name: str
    delay: float = 0
    tmux_only: bool = False

    @property
    def prefix(self) -> tuple[str, ...]:
        env = ("env", f"TMUX_TMPDIR={self.directory}", f"HOME={self.directory}/home")
        if not self.delay:
            return env
        if self.tmux_only:  # the tmux client itself waits: its end ends the wait
            wait = f"exec perl -e 'sleep shift; exec @ARGV' {self.delay:g} \"$@\""
            return (*env, "sh", "-c", f'case "$1" in tmux) {wait};; esac; exec "$@"', "sh")
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

    def screen(self) -> list[str]:
        """The agent pane's screen; nothing before schemux started the server."""
        try:
            return self.tmux("capture-pane", "-p", "-t", self.agent_pane()).splitlines()
        except RuntimeError:
            return []


class Fleet:
    """The test's hosts, configured by name in one schemux (``client``) whose tmux server
    on each host is ``socket_name``; afterwards their servers are killed and their
    directories removed (the context is closed by ``make_context``)."""

    def __init__(self, make_context: Contexts) -> None:
        self._make_context = make_context
        self.socket_name = tagged_socket_name("fleet")
        self.named: list[NamedHost] = []
        self.exec_hosts: dict[str, ExecHostOnThisMachine] = {}

    def exec_host(
        self, name: str, delay: float = 0, groups: tuple[str, ...] = (), tmux_only: bool = False
    ) -> None:
        # short: a socket's path must fit in 108 bytes
        directory = Path(tempfile.mkdtemp(prefix="sxfan", dir="/tmp"))
        (directory / "home").mkdir()
        host = ExecHostOnThisMachine(name, directory, self.socket_name, delay, tmux_only)
        self.exec_hosts[name] = host
        self.named.append(NamedHost(name, ExecTarget(host.prefix), groups))

    def host(self, name: str, target: ExecTarget | SshTarget) -> None:
        self.named.append(NamedHost(name, target))

    def context(self, **settings: Any) -> ServingState:
        return self._make_context(
            socket_name=self.socket_name, fleet=FleetSettings(tuple(self.named)), **settings
        )

    def client(self, **settings: Any) -> Client:
        return client_of(self.context(**settings))

    def close(self) -> None:
        for host in self.exec_hosts.values():
            host.tmux("kill-server", check=False)
            shutil.rmtree(host.directory, ignore_errors=True)
        remove_server(self.socket_name)  # a server started over ssh is in this /tmp too


@pytest.fixture
def fleet(make_context: Contexts) -> Iterator[Fleet]:
    made = Fleet(make_context)
    try:
        yield made
    finally:
        made.close()


async def fan_out(client: Client, **arguments: Any) -> dict[str, Any]:
    return await call(client, "run_command_on_hosts", **arguments)


def by_host(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["host"]: entry for entry in result["results"]}


def output_of(entry: dict[str, Any]) -> list[str]:
    assert entry["error"] is None, entry["error"]
    assert entry["exit_status"] == 0, entry
    assert entry["timed_out"] is False
    return list(entry["output"])


async def test_every_host_answers_in_order_with_exact_output(
    fleet: Fleet, ssh_target: SshTarget
) -> None:
    fleet.exec_host("web1", groups=("web",))
    fleet.host("far", ssh_target)
    fleet.exec_host("web2", groups=("web",))
    fleet.exec_host("db")
    command = "case $TMUX in *sxfan*) echo 1;; *) echo 0;; esac; printf '%s\\n' one 'two  words'"
    async with fleet.client() as client:
        everywhere = await fan_out(client, command=command)
        web = await fan_out(client, command="echo web", group="web")
        named = await fan_out(client, command="exit 3", hosts=["db", "web1"], max_lines=0)
    assert [entry["host"] for entry in everywhere["results"]] == ["web1", "far", "web2", "db"]
    for entry in everywhere["results"]:
        own_directory = "0" if entry["host"] == "far" else "1"  # each exec host's TMUX_TMPDIR
        assert output_of(entry) == [own_directory, "one", "two  words"], entry["host"]
    assert everywhere["exited_zero"] == 4
    assert (everywhere["exited_nonzero"], everywhere["timed_out"], everywhere["errors"]) == (
        0,
        0,
        0,
    )
    for name, host in fleet.exec_hosts.items():  # the agent's pane of each host's own server
        assert by_host(everywhere)[name]["pane_id"] == host.agent_pane()
        assert "two  words" in host.screen()  # as if a person typed it
    assert [(e["host"], output_of(e)) for e in web["results"]] == [
        ("web1", ["web"]), ("web2", ["web"]),
    ]  # fmt: skip
    assert [(e["host"], e["exit_status"]) for e in named["results"]] == [("web1", 3), ("db", 3)]
    assert named["exited_nonzero"] == 2


async def test_bad_input_is_refused_naming_the_field_and_runs_nothing(fleet: Fleet) -> None:
    fleet.exec_host("near")
    fleet.exec_host("other")
    mark = fleet.exec_hosts["near"].directory / "ran"
    touch = f"touch {mark}"
    async with fleet.client() as client:
        refusals: list[tuple[dict[str, Any], str]] = [
            ({"hosts": ["nowhere"]}, "hosts: 'nowhere' is not a configured host"),
            ({"hosts": ["near;touch /tmp/x"]}, "is not a configured host"),
            ({"hosts": ["$(id)", "near"]}, "is not a configured host"),
            ({"group": "web"}, "group: 'web' is not a configured group of hosts"),
            ({"hosts": ["near"], "group": "web"}, "hosts and group: give one of them"),
            ({"hosts": []}, "hosts: [] should be non-empty; give at least 1 item"),
            ({"timeout": 0}, "timeout: 0 is less than or equal to the minimum of 0; give more"),
            ({"max_lines": -1}, "max_lines: -1 is less than the minimum of 0; give 0 or more"),
            ({"hosts": "near"}, "hosts"),
        ]
        for arguments, expected in refusals:
            text = await call_error(client, "run_command_on_hosts", command=touch, **arguments)
            assert expected in text, (arguments, text)
    assert not mark.exists()
    for host in fleet.exec_hosts.values():  # no host was even reached
        assert host.tmux("list-sessions", check=False) == ""


HOSTILE_COMMANDS = [
    "printf '%s\\n' \"it's\" '\"q\"'",
    "echo '$(touch {mark})' \"\\`touch {mark}\\`\"",
    "echo 'a ; kill-server' ';' '&&' '|'",
    "echo '#{pane_id}' '%1' '{a,b}' '!'",
    "echo first\necho 'second\nline'",
]


async def test_hostile_commands_run_as_given_on_every_transport(
    fleet: Fleet, ssh_target: SshTarget, tmp_path: Path
) -> None:
    mark = tmp_path / "ran"
    fleet.exec_host("near")
    fleet.host("far", ssh_target)
    async with fleet.client() as client:
        for template in HOSTILE_COMMANDS:
            command = template.replace("{mark}", str(mark))
            here = await anyio.to_thread.run_sync(
                functools.partial(
                    subprocess.run, ["bash", "-c", command], capture_output=True, text=True,
                    check=True,
                )
            )  # fmt: skip
            result = await fan_out(client, command=command, suppress_history="\n" not in command)
            for entry in result["results"]:
                assert output_of(entry) == here.stdout.splitlines(), (entry["host"], command)
    assert not mark.exists()


async def test_unreachable_and_refusing_hosts_answer_their_own_errors(
    fleet: Fleet, ssh_target: SshTarget
) -> None:
    fleet.exec_host("up")
    fleet.host("noprefix", ExecTarget(("/nonexistent/schemux-prefix",)))
    fleet.host("refuses", ExecTarget(("sh", "-c", "echo no entry >&2; exit 1", "sh")))
    fleet.host("badkey", SshTarget(BAD_KEY, ssh_target.config))
    started = time.monotonic()
    async with fleet.client() as client:
        result = await fan_out(client, command="echo fine", timeout=20)
    answers = by_host(result)
    assert output_of(answers["up"]) == ["fine"]
    for name in ("noprefix", "refuses", "badkey"):
        assert answers[name]["exit_status"] is None, answers[name]
        assert answers[name]["pane_id"] is None, answers[name]
        assert answers[name]["output"] == []
        assert answers[name]["error"], name
    assert "schemux-prefix" in answers["noprefix"]["error"]
    assert "no entry" in answers["refuses"]["error"]
    assert (result["exited_zero"], result["errors"]) == (1, 3)
    assert time.monotonic() - started < 15


@dataclass
class Finished:
    """When each host's progress notification came, from the call's start."""

    started: float = field(default_factory=time.monotonic)
    hosts: dict[str, float] = field(default_factory=dict)
    values: list[float] = field(default_factory=list)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.values.append(progress)
        if message is not None and message.startswith("host "):
            self.hosts[message.split()[1].rstrip(":")] = time.monotonic() - self.started


async def test_a_slow_host_times_out_alone_and_progress_tells_each_host(fleet: Fleet) -> None:
    fleet.exec_host("fast1")
    fleet.exec_host("slow", delay=SLOW_SECONDS)
    fleet.exec_host("fast2")
    finished = Finished()
    async with fleet.client() as client:
        outcome = await client.call_tool(
            "run_command_on_hosts",
            {"command": "echo quick", "timeout": 5},
            progress_callback=finished,
        )
    assert outcome.structured_content is not None
    answers = by_host(outcome.structured_content)
    assert output_of(answers["fast1"]) == ["quick"]
    assert output_of(answers["fast2"]) == ["quick"]
    assert "host slow was not reached within 5 s" in answers["slow"]["error"]
    assert set(finished.hosts) == {"fast1", "fast2", "slow"}
    # the fast hosts answered while the slow one was still being reached
    assert finished.hosts["fast1"] < 5, finished.hosts
    assert finished.hosts["fast2"] < 5, finished.hosts
    assert finished.hosts["slow"] >= 5, finished.hosts
    assert finished.values == sorted(set(finished.values)), "progress only grows"


async def test_closing_does_not_wait_for_a_host_still_being_prepared(fleet: Fleet) -> None:
    """A host whose tmux answers slowly (its server checked, the owned session made)
    when schemux closes: the tmux client doing that is ended, not waited for (it was,
    for up to the engine's timeout)."""
    fleet.exec_host("stuck", delay=SLOW_SECONDS, tmux_only=True)
    context = fleet.context()
    async with client_of(context) as client:
        answers = by_host(await fan_out(client, command="echo quick", timeout=1))
    assert "host stuck was not reached within 1 s" in answers["stuck"]["error"]
    started = time.monotonic()
    await context.close()
    # not waited for: that tmux client answers after SLOW_SECONDS
    assert time.monotonic() - started < SLOW_SECONDS / 2


async def test_a_host_whose_server_is_killed_mid_call_answers_its_error(fleet: Fleet) -> None:
    for name in ("first", "doomed", "last"):
        fleet.exec_host(name)
    doomed = fleet.exec_hosts["doomed"]

    async def kill_when_running() -> None:
        await anyio.to_thread.run_sync(
            lambda: wait_until(lambda: "started" in doomed.screen(), timeout=20)
        )
        doomed.tmux("kill-server")

    async with fleet.client() as client, anyio.create_task_group() as group:
        group.start_soon(kill_when_running)
        command = "echo started; sleep 3; echo survived"
        answers = by_host(await fan_out(client, command=command, timeout=20))
    assert output_of(answers["first"]) == ["started", "survived"]
    assert output_of(answers["last"]) == ["started", "survived"]
    assert answers["doomed"]["exit_status"] is None
    assert answers["doomed"]["error"]


async def test_cancelled_call_interrupts_every_host_and_leaves_nothing_behind(
    fleet: Fleet, ssh_target: SshTarget
) -> None:
    fleet.exec_host("one")
    fleet.exec_host("two")
    fleet.host("far", ssh_target)
    async with fleet.client() as client:
        await fan_out(client, command="true")  # every host's server and agent pane made
        panes = {
            entry["host"]: entry["pane_id"]
            for entry in (await fan_out(client, command="true"))["results"]
        }

        def state() -> dict[str, list[str]]:
            return {name: held_on(where, panes[name]) for name, where in hosts_tmux(fleet).items()}

        before = await anyio.to_thread.run_sync(state)
        command = f"echo begun; sleep {LONG_SLEEP}; echo never"
        async with anyio.create_task_group() as group:
            group.start_soon(functools.partial(fan_out, client, command=command, timeout=60))
            # cancelled once every host's command runs (this /proc sees the sshd's too)
            await anyio.to_thread.run_sync(lambda: wait_until(lambda: len(sleeping()) == 3, 20))
            group.cancel_scope.cancel()
        try:
            await anyio.to_thread.run_sync(lambda: wait_until(lambda: state() == before, 15))
        except TimeoutError:
            pytest.fail(f"left behind: {state()}, not {before}")
        assert sleeping() == []
        after = await fan_out(client, command="echo next")
    for entry in after["results"]:
        assert output_of(entry) == ["next"], entry["host"]
    for name, where in hosts_tmux(fleet).items():
        screen = where("capture-pane", "-p", "-t", panes[name]).splitlines()
        assert "never" not in screen, name


Tmux = Callable[..., str]
LONG_SLEEP = "30.123"  # a sleep of the cancelled call's own, found by its argv


def sleeping() -> list[int]:
    return [process.pid for process in processes() if process.argv == (b"sleep", b"30.123")]


def hosts_tmux(fleet: Fleet) -> dict[str, Tmux]:
    """How the test runs tmux against each host's server."""
    where: dict[str, Tmux] = {name: host.tmux for name, host in fleet.exec_hosts.items()}
    where["far"] = functools.partial(tmux, fleet.socket_name)  # in this /tmp too
    return where


def held_on(tmux_there: Tmux, pane_id: str) -> list[str]:
    """What schemux holds on a host's server: its pane and server options, and what the
    agent's pane runs (a cancelled call leaves the same as before it)."""
    options = tmux_there("show-options", "-p", "-t", pane_id).splitlines()
    options += tmux_there("show-options", "-s").splitlines()
    held = [line for line in options if "schemux" in line]
    command = tmux_there("display-message", "-p", "-t", pane_id, "#{pane_current_command}")
    return [*held, f"running {command.strip()}"]


async def test_it_chooses_its_hosts_itself_and_takes_no_host(fleet: Fleet) -> None:
    fleet.exec_host("near")
    fleet.exec_host("other")
    async with fleet.client() as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        text = await call_error(client, "run_command_on_hosts", command="true", host="near")
    assert "host" not in listed["run_command_on_hosts"].input_schema["properties"]
    assert "host" in listed["run_command"].input_schema["properties"]  # the others take one
    assert "Invalid arguments for run_command_on_hosts" in text
    assert "host" in text
    for host in fleet.exec_hosts.values():  # refused before any host was reached
        assert host.tmux("list-sessions", check=False) == ""


async def test_the_audit_names_every_host_it_ran_on(fleet: Fleet, tmp_path: Path) -> None:
    """Each fan-out's record was the default host's, with its pane, whatever it ran on."""
    for name in ("here", "box", "web"):
        fleet.exec_host(name)
    log = tmp_path / "audit.jsonl"
    async with fleet.client(audit=AuditSettings(log)) as client:
        boxed = await fan_out(client, command="true", hosts=["box"])
        await fan_out(client, command="true")
        await fan_out(client, command="true", hosts=["web", "box"])
    with anyio.fail_after(10):  # the writer's batch
        while len(log.read_bytes().splitlines() if log.exists() else []) < 3:  # noqa: ASYNC110
            await anyio.sleep(0.05)
    one, every, two = records(log)
    assert one["host"] == "box"
    assert one["pane"] == by_host(boxed)["box"]["pane_id"]
    assert every["host"] == "here,box,web"
    assert two["host"] == "box,web"  # in the fleet's order, as the results are
    for several in (every, two):  # one pane per host: the record names none of them
        assert "pane" not in several
    assert "here,box,web: -" in line(every)
    assert "box: %" in line(one)


async def test_served_over_stdio_only_with_several_hosts(tmux_socket: str) -> None:
    """As ``schemux serve`` chooses its tools (``schemux.serving.selection``)."""
    lists = []
    for hosts in ("", f"here=local;also=exec:env TMUX_TMPDIR={tempfile.gettempdir()}"):
        parameters = stdio_parameters("--socket-name", tmux_socket, env={ENV_HOST: hosts})
        async with Client(parameters) as client:
            lists.append({tool.name for tool in (await client.list_tools()).tools})
    one, several = lists
    assert "run_command" in one
    assert "run_command_on_hosts" not in one
    assert several - one == {"run_command_on_hosts"}


async def test_hosts_not_connected_are_reached_a_few_at_a_time(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fan-out's hosts not connected yet are reached (connected, their server and
    agent shell started) at most ``max_connecting`` at a time, each in turn, where all
    at once shared the machine among them and none was reached in time (200 hosts on 2
    cores: 0 of 200 within 30 s, bench/fanout.py); connected hosts all run at once.
    (Failed before: the four cold hosts were reached four at a time.)"""
    names = [f"c{number}" for number in range(4)]
    for name in names:
        fleet.exec_host(name)
    in_flight = 0
    most: list[int] = []

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal in_flight
        in_flight += 1
        most.append(in_flight)
        try:
            return await resolve_pane(*args, **kwargs)
        finally:
            in_flight -= 1

    monkeypatch.setattr("schemux.domain.fanout.resolve_pane", counted)
    context = fleet._make_context(
        socket_name=fleet.socket_name, fleet=FleetSettings(tuple(fleet.named), max_connecting=2)
    )
    async with client_of(context) as client:
        cold = await fan_out(client, command="true")
        assert cold["exited_zero"] == 4
        assert max(most) == 2
        most.clear()
        warm = await fan_out(client, command="true")
        assert warm["exited_zero"] == 4
        assert max(most) == 4
