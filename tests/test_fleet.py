"""Many hosts in one schemux (issue 20): hosts configured by name, every tool routed by
its ``host``, references and program ids routing themselves, bad hosts refused before
anything runs, and connections made lazily, bounded, closed when idle.

The hosts are this machine and two exec-kind hosts whose prefix (``env TMUX_TMPDIR=DIR``)
puts their tmux servers in a directory of their own: three tmux servers of one socket
name, told apart by where tmux runs, as hosts are. Exec-kind hosts are reached as other
machines are (their pids are not taken for this machine's: programs there run under the
helper and Perl gate). The ssh fixture's sshd adds a host reached by OpenSSH.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from schemux.config import AuditSettings, Settings
from schemux.domain.fleet import Fleet
from schemux.domain.resource_uris import pane_uri, program_uri, template
from schemux.errors import SchemuxError, ServerUnavailable
from schemux.generated.bindings import BINDINGS
from schemux.generated.tool_facts import SEVERAL_HOSTS_TOOLS
from schemux.host_settings import ExecTarget, FleetSettings, HostTarget, NamedHost, SshTarget
from schemux.hosts import Host
from schemux.hosts.exec_prefix import START_SECONDS
from schemux.hosts.local import LocalHost
from schemux.hosts.ssh import SshHost
from schemux.names import OWNED_SESSION
from schemux.programs.store import ProgramCaller
from schemux.serving import resources
from schemux.serving.host_addressing import HostChoice
from schemux.serving.state import ServingState
from schemux.tmux.control.client import header_for
from tests.conftest import stdio_parameters
from tests.contexts import client_of
from tests.process_table import processes
from tests.ssh_server import ALIAS, SshServer, ssh_server
from tests.support import (
    bin_without_python3,
    call,
    call_error,
    new_pane,
    remove_server,
    tagged_socket_name,
    tmux,
    until,
    wait_until,
)
from tests.test_doctor import doctor
from tests.test_exit_paths import end, serve_stdio
from tests.test_program_hardening import _rpc
from tests.test_ssh import HOSTILE_WORDS

pytestmark = pytest.mark.anyio

NAMES = ("here", "alpha", "beta")
HOSTILE_HOSTS: list[Any] = [
    "", "gamma", "HERE", "here ", " here", "-L", "here;id", "$(id)", "../alpha", "alpha\n",
    "alpha\x00", "al*", 7, True, ["alpha"], {"name": "alpha"},
]  # fmt: skip


@pytest.fixture(scope="module")
def host_dirs() -> Iterator[dict[str, str]]:
    """The TMUX_TMPDIR of each exec host (short: a socket's path is at most 107 bytes)."""
    dirs = {name: tempfile.mkdtemp(prefix="sxf-", dir="/tmp") for name in NAMES[1:]}
    try:
        yield dirs
    finally:
        for path in dirs.values():
            shutil.rmtree(path, ignore_errors=True)


def exec_target(directory: str) -> ExecTarget:
    return ExecTarget(("env", f"TMUX_TMPDIR={directory}"))


@pytest.fixture(scope="module")
def fleet_socket(host_dirs: dict[str, str]) -> Iterator[str]:
    """The socket name of every host's server; each is killed afterwards."""
    name = tagged_socket_name("fleet")
    try:
        yield name
    finally:
        for directory in host_dirs.values():
            subprocess.run(
                [*exec_target(directory).prefix, "tmux", "-L", name, "kill-server"],
                capture_output=True, timeout=30, check=False,
            )  # fmt: skip
        remove_server(name)


def fleet_settings(socket: str, dirs: dict[str, str], **fleet: Any) -> Settings:
    hosts = (
        NamedHost("here"),
        NamedHost("alpha", exec_target(dirs["alpha"]), ("remote",)),
        NamedHost("beta", exec_target(dirs["beta"]), ("remote",)),
    )
    return Settings(socket_name=socket, wait_ceiling=30, fleet=FleetSettings(hosts, **fleet))


@pytest.fixture(scope="module")
async def fleet(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str]
) -> AsyncIterator[tuple[Client, ServingState]]:
    context = ServingState(fleet_settings(fleet_socket, host_dirs))
    try:
        async with client_of(context, BINDINGS) as client:
            yield client, context
    finally:
        await context.close()


def socket_dir_of(name: str, dirs: dict[str, str]) -> str:
    """What a pane's ``$TMUX`` starts with on host ``name``."""
    return dirs.get(name, tempfile.gettempdir()) + "/tmux-"


async def test_every_tool_serves_host_as_the_configured_names(
    fleet: tuple[Client, ServingState],
) -> None:
    client, _ = fleet
    tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == set(BINDINGS)
    for tool in tools:
        properties = dict(tool.input_schema["properties"])
        if tool.name in SEVERAL_HOSTS_TOOLS:  # it chooses its hosts itself (hosts, group)
            assert "host" not in properties
            continue
        host = properties.pop("host")
        assert host["enum"] == list(NAMES)
        assert host["type"] == "string"
        assert "omitted: here" in host["description"]
        # the rest is the one-host schema, unchanged
        alone = BINDINGS[tool.name].served_document("projected", BINDINGS)["inputSchema"]
        assert properties == alone["properties"]
        assert tool.input_schema.get("required") == alone.get("required")


@pytest.mark.parametrize("mode", ["exact", "openai-strict", "compact"])
def test_each_schema_mode_takes_host(mode: Any) -> None:
    choice = HostChoice(NAMES, "here")
    for binding in BINDINGS.values():
        schema = binding.served_document(mode, BINDINGS, choice)["inputSchema"]
        forms = schema.get("oneOf") or [schema]
        for form in forms:  # the exact tmux_capture: each closed form takes it
            assert set(form["properties"]["host"]["enum"]) - {None} == set(NAMES)
        if mode == "openai-strict":
            assert "host" in schema["required"]
            assert None in schema["properties"]["host"]["enum"]


@pytest.mark.parametrize("mode", ["projected", "compact", "exact", "openai-strict"])
async def test_one_host_serves_the_tools_as_before(
    anyio_backend: str, main_tmux_socket: str, mode: Any
) -> None:
    context = ServingState(Settings(socket_name=main_tmux_socket, schemas=mode))
    try:
        async with client_of(context, BINDINGS) as client:
            tools = (await client.list_tools()).tools
    finally:
        await context.close()
    for tool in tools:
        served = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        before = BINDINGS[tool.name].served_document(mode, BINDINGS)
        assert json.dumps(served, sort_keys=True) == json.dumps(before, sort_keys=True)
        # no property named host anywhere (run_command_on_hosts's "hosts" is its own)
        assert '"host":' not in json.dumps(tool.input_schema.get("properties", {}))


async def test_run_command_runs_on_the_host_named(
    fleet: tuple[Client, ServingState], host_dirs: dict[str, str]
) -> None:
    client, context = fleet
    for name in (*NAMES, None):
        given = {} if name is None else {"host": name}
        result = await call(client, "run_command", command='echo "at:$TMUX"', **given)
        line = result["output"][0]
        assert result["output"] == [line], result
        assert line.startswith("at:" + socket_dir_of(name or "here", host_dirs)), line
    assert [scope.name for scope in context.services.fleet.scopes] == list(NAMES)


async def test_each_tool_acts_on_its_host_only(
    fleet: tuple[Client, ServingState], fleet_socket: str, host_dirs: dict[str, str]
) -> None:
    client, _ = fleet
    pane = (await call(client, "run_command", command="true", host="beta"))["pane_id"]
    # the typed line does not hold the marker; the output, printed a while later, does.
    # Typed once the wait watches (only text written after it began counts): how long the
    # call takes to get there (a tool's first call, under load, can take over a second)
    # is no part of the test
    marker = "fleet-beta-42"
    waiting = asyncio.ensure_future(
        call(client, "wait_for_text", patterns=[marker], pane_id=pane, timeout=15, host="beta")
    )
    with anyio.fail_after(10):
        while not watching_clients(fleet_socket, host_dirs["beta"]):  # noqa: ASYNC110
            await anyio.sleep(0.02)
    typed = 'sleep 1; echo fleet-"beta"-$((40+2))'
    await call(client, "send_keys", keys=typed, enter=True, host="beta")
    found = await waiting
    assert found["found"] is True
    elsewhere = await call(client, "wait_for_text", patterns=[marker], timeout=0.3, host="alpha")
    assert elsewhere["found"] is False
    screen = await call(client, "capture_pane", pane_id=pane, host="beta")
    assert marker in screen["result"]
    snap = await call(client, "snapshot_pane", pane_id=pane, host="beta")
    assert marker in snap["content"]
    assert marker not in (await call(client, "snapshot_pane", host="alpha"))["content"]
    batch = await call(
        client, "send_keys_batch", operations=[{"keys": "echo batch", "pane_id": pane}],
        host="beta",
    )  # fmt: skip
    assert batch["succeeded"] == 1
    shell = await call(client, "run_shell_command", command='echo "at:$TMUX"', host="alpha")
    assert shell["output"].startswith("at:" + host_dirs["alpha"])
    program = await call(client, "run_program", argv=["sh", "-c", 'echo "at:$TMUX"'], host="beta")
    assert program["output"].startswith("at:" + host_dirs["beta"]), program
    signalled = asyncio.ensure_future(
        call(client, "wait_for_channel", channel="fleet-done", timeout=10, host="alpha")
    )
    await asyncio.sleep(0.3)
    await call(client, "signal_channel", channel="fleet-done", host="alpha")
    assert (await signalled)["result"]


async def test_hostile_words_reach_each_host_as_words(
    fleet: tuple[Client, ServingState], tmp_path: Path
) -> None:
    """Routing changes nothing of what a call sends: a program's argv arrives word for
    word on every host, and nothing a word says is run."""
    client, _ = fleet
    mark = tmp_path / "owned"
    # printable words (a terminal shows a control character otherwise than it is), the
    # empty one first (a last empty line is not output)
    words = sorted(
        (
            word.replace("{mark}", str(mark))
            for word in HOSTILE_WORDS
            if word.isprintable() and "\udcff" not in word
        ),
        key=bool,
    )
    for name in NAMES:
        result = await call(client, "run_program", argv=["printf", "%s\\n", *words], host=name)
        assert result["output"] == "\n".join(words), name
    assert not mark.exists()


async def test_a_snapshot_and_its_references_route_themselves(
    fleet: tuple[Client, ServingState], host_dirs: dict[str, str]
) -> None:
    client, _ = fleet
    await call(client, "run_command", command="true", host="alpha")
    snapshot = await call(client, "tmux_snapshot", host="alpha")
    assert snapshot["data"]["server"]["socket_path"].startswith(host_dirs["alpha"])
    session = snapshot["data"]["sessions"][0]
    target = session["windows"][0]["panes"][0]["target"]
    assert target["generation"].startswith("alpha:")
    assert session["target"]["generation"].startswith("alpha:")
    captured = await call(client, "tmux_capture", target=target)  # no host: alpha's
    assert captured["ok"] is True
    assert captured["data"]["target"] == target
    # a tracked capture's cursor goes with its target (tracking needs this machine's pids)
    here = (await call(client, "tmux_snapshot", host="here"))["data"]["sessions"]
    local = here[0]["windows"][0]["panes"][0]["target"]
    tracked = await call(client, "tmux_capture", target=local, track=True)
    cursor = tracked["data"]["next_cursor"]
    again = await call(client, "tmux_capture", target=local, cursor=cursor)
    assert again["ok"] is True
    assert await call(client, "tmux_capture", target=target, host="alpha")
    wrong = await call_error(client, "tmux_capture", target=target, host="beta")
    assert "target.generation is of host alpha, not of host beta" in wrong
    forged = {**target, "generation": "gamma:" + target["generation"].partition(":")[2]}
    assert "names host 'gamma', which is not configured" in await call_error(
        client, "tmux_capture", target=forged
    )


async def test_a_snapshot_without_host_lists_every_host_in_turn(
    fleet: tuple[Client, ServingState],
) -> None:
    client, _ = fleet
    result = await client.call_tool("tmux_snapshot", {})
    assert not result.is_error
    assert result.structured_content is not None
    sessions = result.structured_content["data"]["sessions"]
    hosts = [session["target"]["generation"].partition(":")[0] for session in sessions]
    assert hosts == sorted(hosts, key=NAMES.index)  # grouped, in the configured order
    assert set(hosts) == set(NAMES)
    for session in sessions:  # every reference of a session is its host's
        host = session["target"]["generation"].partition(":")[0]
        for window in session["windows"]:
            assert window["target"]["generation"].startswith(host + ":")
            for pane in window["panes"]:
                assert pane["target"]["generation"].startswith(host + ":")
    assert len(result.content) == 1  # every host answered


async def test_a_capture_since_cursor_routes_itself(fleet: tuple[Client, ServingState]) -> None:
    client, _ = fleet
    first = await call(client, "capture_since", host="beta")
    assert first["cursor"].startswith("beta:")
    await call(client, "send_keys", keys="echo since-beta", enter=True, host="beta")
    later = await call(client, "capture_since", cursor=first["cursor"])
    assert later["cursor"].startswith("beta:")
    assert "on host alpha" not in json.dumps(later)
    wrong = await call_error(client, "capture_since", cursor=first["cursor"], host="alpha")
    assert "cursor is of host beta, not of host alpha" in wrong


async def test_program_ids_route_themselves(fleet: tuple[Client, ServingState]) -> None:
    client, context = fleet
    started = await call(
        client, "start_program", argv=["sh", "-c", "echo hi-beta; sleep 30"], host="beta"
    )
    program = started["programId"]
    assert context.services.on("beta").programs.get(program, ProgramCaller(None))
    read = await call(client, "read_program", programId=program, timeoutMs=5000)
    assert "hi-beta" in read["text"]
    wrong = await call_error(client, "stop_program", programId=program, host="alpha")
    assert "programId is of host beta, not of host alpha" in wrong
    stopped = await call(client, "stop_program", programId=program)
    assert stopped["wasRunning"] is True
    snapshot = await call(client, "tmux_snapshot", host="beta")
    assert snapshot["ok"] is True


@pytest.mark.parametrize("host", HOSTILE_HOSTS)
async def test_a_host_not_configured_is_refused_before_anything_runs(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str], host: Any
) -> None:
    context = ServingState(fleet_settings(fleet_socket, host_dirs))
    try:
        async with client_of(context, BINDINGS) as client:
            text = await call_error(client, "run_command", command="touch /tmp/never", host=host)
            assert "Invalid arguments for run_command: host:" in text
            assert "is not a configured host (one of here, alpha, beta)" in text
            stopped = await call_error(client, "stop_program", programId="p", host=host)
            assert "Invalid arguments for stop_program: host:" in stopped
        assert [scope.connects for scope in context.services.fleet.scopes] == [0]
    finally:
        await context.close()


async def test_the_audit_names_each_call_s_host(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    settings = fleet_settings(fleet_socket, host_dirs)
    context = ServingState(dataclasses.replace(settings, audit=AuditSettings(log)))
    try:
        async with client_of(context, BINDINGS) as client:
            await call(client, "run_command", command="true", host="beta")
            await call(client, "run_command", command="true")
            await call_error(client, "run_command", command="true", host="gamma")
            await call(client, "tmux_snapshot")
    finally:
        await context.close()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [record["host"] for record in records] == ["beta", "here", "here", "here,alpha,beta"]
    assert records[1]["outcome"] == "ok"
    assert records[2]["outcome"] == "invalid_arguments"


async def test_two_hosts_that_reach_one_server_are_said_once_in_the_log(
    anyio_backend: str,
    fleet_socket: str,
    host_dirs: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two exec hosts whose prefixes differ but reach one tmux server (as two ssh aliases
    of one machine do) cannot be told apart at start: once both have connected, the log
    says so, once; a host on another server is not named."""
    alpha = exec_target(host_dirs["alpha"])
    hosts = (
        NamedHost("alpha", alpha),
        NamedHost("alias", ExecTarget((*alpha.prefix, "SCHEMUX_TEST_ALIAS=1"))),
        NamedHost("beta", exec_target(host_dirs["beta"])),
    )
    settings = Settings(socket_name=fleet_socket, wait_ceiling=30, fleet=FleetSettings(hosts))
    context = ServingState(settings)
    try:
        async with client_of(context, BINDINGS) as client:
            with caplog.at_level(logging.WARNING, logger="schemux"):
                for name in ("alpha", "beta", "alias", "alias", "alpha"):
                    await call(client, "tmux_snapshot", host=name)
    finally:
        await context.close()
    said = [record.getMessage() for record in caplog.records if "same tmux server" in
            record.getMessage()]  # fmt: skip
    assert len(said) == 1, said
    assert said[0].startswith("hosts alpha and alias reach the same tmux server"), said
    assert "beta" not in said[0]


async def test_nothing_connects_before_a_call_needs_it(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str]
) -> None:
    context = ServingState(fleet_settings(fleet_socket, host_dirs))
    try:
        async with client_of(context, BINDINGS) as client:
            await client.list_tools()
            assert [(s.name, s.connects) for s in context.services.fleet.scopes] == [("here", 0)]
            await call(client, "run_command", command="true", host="alpha")
            made = {scope.name: scope.connects for scope in context.services.fleet.scopes}
            assert made == {"here": 0, "alpha": 1}  # beta is not even made
    finally:
        await context.close()


async def test_an_idle_host_is_closed_and_opened_again_on_use(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str]
) -> None:
    context = ServingState(fleet_settings(fleet_socket, host_dirs, idle_seconds=0.4))
    try:
        async with client_of(context, BINDINGS) as client:
            await call(client, "run_command", command="true", host="alpha")
            alpha = context.services.on("alpha")
            assert alpha.connected
            assert alpha.connects == 1
            await until(lambda: not alpha.connected)
            result = await call(client, "run_command", command="echo again", host="alpha")
            assert result["output"] == ["again"]
            assert alpha.connects == 2
    finally:
        await context.close()


async def test_a_host_that_cannot_be_reached_fails_alone(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str]
) -> None:
    """A host slow to connect holds up no other host's call; one refused says so."""
    gate = tempfile.mkdtemp(prefix="sxf-gate-", dir="/tmp")
    held = f'while [ ! -e {gate}/go ]; do sleep 0.05; done; exec "$@"'
    slow = ExecTarget(("sh", "-c", held, "sh", "env", f"TMUX_TMPDIR={host_dirs['alpha']}"))
    refused = ExecTarget(("false",))
    settings = fleet_settings(fleet_socket, host_dirs)
    hosts = (*settings.fleet.hosts, NamedHost("slow", slow), NamedHost("down", refused))
    context = ServingState(
        Settings(
            socket_name=fleet_socket, wait_ceiling=30, fleet=FleetSettings(hosts, max_connecting=2)
        )
    )
    try:
        async with client_of(context, BINDINGS) as client:
            waiting = asyncio.ensure_future(
                call(client, "run_command", command="echo slow", host="slow")
            )
            down = await call_error(client, "run_command", command="true", host="down")
            assert "did not run a command given to it" in down
            for name in ("alpha", "beta"):  # slow holds one of the two slots
                result = await call(client, "run_command", command=f"echo {name}", host=name)
                assert result["output"] == [name]
            assert not waiting.done()
            (Path(gate) / "go").touch()  # the slow host answers from now on
            assert (await asyncio.wait_for(waiting, 60))["output"] == ["slow"]
            listed = await client.call_tool("tmux_snapshot", {})
            assert not listed.is_error
            notes = [block.text for block in listed.content[1:] if block.type == "text"]
            assert len(notes) == 1
            assert notes[0].startswith("host down is not listed: ")
    finally:
        await context.close()
        shutil.rmtree(gate, ignore_errors=True)


class CountingHost(LocalHost):
    """This machine, whose connect takes a while in a thread of the executor it is given
    (as a remote host's does) and counts how many run at once."""

    def __init__(self, counts: dict[str, int], release: threading.Event) -> None:
        self.counts = counts
        self.release = release
        self.guard = threading.Lock()

    async def connect(self, executor: Executor | None = None) -> None:
        await asyncio.get_running_loop().run_in_executor(executor, self._connect)

    def _connect(self) -> None:
        with self.guard:
            self.counts["now"] += 1
            self.counts["most"] = max(self.counts["most"], self.counts["now"])
        try:
            self.release.wait(30)
        finally:
            with self.guard:
                self.counts["now"] -= 1


async def test_at_most_the_bound_connect_at_once(anyio_backend: str) -> None:
    counts = {"now": 0, "most": 0}
    release = threading.Event()

    def make(target: HostTarget | None) -> Host:
        return CountingHost(counts, release)

    hosts = tuple(NamedHost(f"h{index}") for index in range(6))
    fleet = Fleet(Settings(fleet=FleetSettings(hosts, max_connecting=2)), make_host=make)
    try:
        connecting = [
            asyncio.ensure_future(fleet.on(name).connection.connect()) for name in fleet.names
        ]
        await until(lambda: counts["now"] == 2)
        await asyncio.sleep(0.2)  # a third, were it let in, would be counted by now
        assert counts == {"now": 2, "most": 2}
        release.set()
        await asyncio.gather(*connecting)
        assert counts["most"] == 2
        assert all(scope.connected for scope in fleet.scopes)
        assert [scope.connects for scope in fleet.scopes] == [1] * 6
    finally:
        release.set()
        await fleet.close()


class RefusingHost(LocalHost):
    """A host whose connect fails, once ``answer`` is set, and counts its tries."""

    def __init__(self, answer: asyncio.Event) -> None:
        self.answer = answer
        self.tries = 0

    async def connect(self, executor: Executor | None = None) -> None:
        self.tries += 1
        await self.answer.wait()
        raise ServerUnavailable(f"try {self.tries} refused", suggestion="later")


async def test_callers_waiting_for_a_connect_share_its_failure(anyio_backend: str) -> None:
    """Callers of one host at once share its connect's failure (each would try again,
    one after another: 30 s each for a host that does not answer); a later one tries."""
    answer = asyncio.Event()
    host = RefusingHost(answer)
    fleet = Fleet(Settings(fleet=FleetSettings((NamedHost("a"),))), make_host=lambda _: host)
    try:
        connection = fleet.on("a").connection
        first = asyncio.ensure_future(connection.connect())
        await until(lambda: host.tries == 1)
        second = asyncio.ensure_future(connection.connect())
        await asyncio.sleep(0)  # one turn of the loop: the second runs until it waits
        answer.set()
        for waited in (first, second):
            with pytest.raises(ServerUnavailable, match="try 1 refused") as raised:
                await waited
            assert raised.value.suggestion == "later"
        with pytest.raises(ServerUnavailable, match="try 2 refused"):
            await connection.connect()
        assert host.tries == 2
    finally:
        await fleet.close()


# asyncio's default threads, which every to_thread of schemux's shares
DEFAULT_THREADS = min(32, (os.cpu_count() or 1) + 4)


def hanging(marker: str) -> ExecTarget:
    """A prefix that never answers in a test's time (a stopped container's ``docker
    exec``, say): its ``sh`` waits in a child of its own, ``sleep MARKER``."""
    return ExecTarget(("sh", "-c", f'sleep {marker}; exec "$@"', "sh"))


def hang_marker() -> str:
    """A number of seconds no other process sleeps, longer than a connect's whole
    time (``START_SECONDS``): each test's own, to find its hosts' probes by."""
    return f"{int(START_SECONDS) + 30}.{uuid.uuid4().int % 10**9:09d}"


def probes(marker: str) -> int:
    """How many hosts' probes wait in their prefix's ``sleep MARKER``."""
    return len([p for p in processes() if p.alive and p.argv == (b"sleep", marker.encode())])


def left_of(marker: str) -> list[str]:
    """Every live process of those probes (the prefixes' shells, their sleeps)."""
    return [p.command for p in processes() if p.alive and marker in p.command]


async def test_hosts_that_hang_hold_up_nothing_but_themselves(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str]
) -> None:
    """More hosts that never answer than asyncio has default threads: each is tried at
    once (a fan-out answers each one's own error), and while their connects hang, local
    work (a program read, a text wait) and a healthy host's first call answer; closing
    schemux then ends every one of them rather than waiting them out."""
    marker = hang_marker()
    hung = [f"hung{index}" for index in range(DEFAULT_THREADS + 1)]
    settings = fleet_settings(fleet_socket, host_dirs, max_connecting=len(hung) + 1)
    hosts = (
        *settings.fleet.hosts,
        *(NamedHost(name, hanging(marker), ("hung",)) for name in hung),
    )
    fleet = dataclasses.replace(settings.fleet, hosts=hosts)
    context = ServingState(dataclasses.replace(settings, fleet=fleet))
    began = time.monotonic()
    try:
        async with client_of(context, BINDINGS) as client:
            result = await call(
                client, "run_command_on_hosts", command="true", group="hung", timeout=2
            )
            for entry in result["results"]:  # each its own error
                assert f"host {entry['host']} was not reached within 2 s" in entry["error"]
            assert [entry["host"] for entry in result["results"]] == hung
            await until(lambda: probes(marker) == len(hung))  # every one tried
            started = await call(client, "start_program", argv=["echo", "ready"], host="here")
            await call(client, "read_program", programId=started["programId"], timeoutMs=0)
            waited = await call(client, "wait_for_text", patterns=[marker], timeout=0.5)
            assert waited["found"] is False
            healthy = await call(client, "run_command", command="echo healthy", host="alpha")
            assert healthy["output"] == ["healthy"]
            # all of it answered before any hung connect ended
            assert probes(marker) == len(hung)
    finally:
        await context.close()
    assert time.monotonic() - began < START_SECONDS  # not waited out
    await until(lambda: not left_of(marker), timeout=3)


async def test_a_call_tries_a_host_that_fails_to_connect_once(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str], tmp_path: Path
) -> None:
    """A host whose connect fails (no tmux there) is tried once by a call, not again
    at each of its steps (one ``run_command`` tried it 3 times, a fan-out 5 times a
    host); the next call tries again."""
    settings = fleet_settings(fleet_socket, host_dirs)

    def without_tmux(name: str) -> NamedHost:
        # each connect is one probe, which finds no tmux: its first word back, then 127
        log = shlex.quote(str(tmp_path / name))
        script = f'echo try >> {log}; PATH=/nonexistent; shift; exec /bin/sh "$@"'
        return NamedHost(name, ExecTarget(("sh", "-c", script, "sh")))

    def tries(name: str) -> int:
        log = tmp_path / name
        return len(log.read_text().splitlines()) if log.exists() else 0

    hosts = (*settings.fleet.hosts, without_tmux("bare1"), without_tmux("bare2"))
    fleet = dataclasses.replace(settings.fleet, hosts=hosts)
    context = ServingState(dataclasses.replace(settings, fleet=fleet))
    try:
        async with client_of(context, BINDINGS) as client:
            said = await call_error(client, "run_command", command="true", host="bare1")
            assert "tmux cannot run on" in said
            assert tries("bare1") == 1
            result = await call(
                client, "run_command_on_hosts", command="echo up", hosts=["bare1", "bare2", "alpha"]
            )
            answers = {entry["host"]: entry for entry in result["results"]}
            assert answers["alpha"]["output"] == ["up"]
            for name in ("bare1", "bare2"):
                assert "tmux cannot run on" in answers[name]["error"]
            assert (tries("bare1"), tries("bare2")) == (2, 1)
    finally:
        await context.close()


@pytest.mark.parametrize("how", ["eof", "SIGKILL"])
def test_connects_in_flight_end_with_schemux(fleet_socket: str, how: str) -> None:
    """A ``schemux serve`` that ends (its client gone, or killed outright) while three
    hosts connect leaves none of their processes: a close kills them, and a schemux
    killed takes them with it (each connect's process group)."""
    marker = hang_marker()
    names = ["hung0", "hung1", "hung2"]
    prefix = shlex.join(hanging(marker).prefix)
    hosts = [word for name in names for word in ("--host", f"{name}=exec:{prefix}")]
    command = [sys.executable, "-m", "schemux", "serve", "--socket-name", fleet_socket, *hosts]
    process = serve_stdio(fleet_socket, command)
    try:
        arguments = {"command": "true", "hosts": names, "timeout": 60}
        params = {"name": "run_command_on_hosts", "arguments": arguments}
        _rpc(process, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        wait_until(lambda: probes(marker) == len(names), timeout=10)
        end(process, how)
    finally:
        process.kill()
        process.wait()
        for directory in Path(tempfile.gettempdir()).glob(f"schemux-{process.pid}-*"):
            shutil.rmtree(directory)  # a schemux killed leaves it for the next to reap
    wait_until(lambda: not left_of(marker), timeout=3)


def test_select_by_names_group_and_every(anyio_backend: str) -> None:
    hosts = (NamedHost("a", groups=("web",)), NamedHost("b"), NamedHost("c", groups=("web",)))
    fleet = Fleet(Settings(fleet=FleetSettings(hosts)))
    assert fleet.select(every=True) == ["a", "b", "c"]
    assert fleet.select(group="web") == ["a", "c"]
    assert fleet.select(names=["c", "a", "c"]) == ["a", "c"]
    assert fleet.groups == {"web": ("a", "c")}
    assert (fleet.default, fleet.several) == ("a", True)
    with pytest.raises(SchemuxError, match="hosts: 'd' is not a configured host"):
        fleet.select(names=["d"])
    with pytest.raises(SchemuxError, match="group: 'db' is not a configured group"):
        fleet.select(group="db")


@pytest.fixture(scope="module")
def second_sshd(sshd: SshServer) -> Iterator[tuple[SshServer, str]]:
    """Another sshd, in a pid namespace of its own, whose sessions have a TMUX_TMPDIR of
    their own (a tmux server of the same name there is another server, as on another
    machine); and that directory."""
    directory = tempfile.mkdtemp(prefix="sxf-ssh-", dir="/tmp")
    try:
        with contextlib.ExitStack() as running:
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("TMUX_TMPDIR", directory)  # what its sessions are given
                server = running.enter_context(ssh_server())
            yield server, directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


async def test_two_ssh_hosts_beside_an_exec_host(
    anyio_backend: str,
    ssh_target: SshTarget,
    remote_tmux_socket: str,
    second_sshd: tuple[SshServer, str],
    host_dirs: dict[str, str],
) -> None:
    """Two sshd (each its own pid namespace) and an exec host in one fleet: each routed by
    name, programs and references by themselves."""
    farther, farther_dir = second_sshd
    hosts = (
        NamedHost("alpha", exec_target(host_dirs["alpha"])),
        NamedHost("far", ssh_target),
        NamedHost("farther", SshTarget(ALIAS, str(farther.config))),
    )
    settings = Settings(socket_name=remote_tmux_socket, wait_ceiling=30, fleet=FleetSettings(hosts))
    context = ServingState(settings)
    # far's server is the run's shared one: its default pane is whichever session another
    # test used last, and one made from here (tmux -L) has no SSH_CONNECTION (tmux's
    # update-environment drops what the creating client lacks). So the calls on far name
    # a session made over ssh, and a newer one made from here stands for those others.
    over_ssh = session_over_ssh(ssh_target, remote_tmux_socket)
    made_here = new_pane(remote_tmux_socket).session_name
    on_far = {"host": "far", "session_name": over_ssh}
    try:
        async with client_of(context, BINDINGS) as client:
            ports = {}
            for name, where in (("far", on_far), ("farther", {"host": "farther"})):
                result = await call(client, "run_command", command="echo $SSH_CONNECTION", **where)
                ports[name] = result["output"][0].split()[-1]
            assert ports["farther"] == str(farther.port)
            assert ports["far"] != ports["farther"]
            started = await call(
                client, "start_program", argv=["sh", "-c", "echo hi-farther"], host="farther"
            )
            read = await call(
                client, "read_program", programId=started["programId"], timeoutMs=5000
            )
            assert "hi-farther" in read["text"]
            snapshot = await call(client, "tmux_snapshot", host="farther")
            assert snapshot["data"]["server"]["socket_path"].startswith(farther_dir)
            # a pane of the agent's session: one in schemux's own may be a program's,
            # which goes when its program has ended and been read
            target = next(
                pane["target"]
                for session in snapshot["data"]["sessions"]
                if session["name"] != OWNED_SESSION
                for window in session["windows"]
                for pane in window["panes"]
            )
            assert (await call(client, "tmux_capture", target=target))["ok"] is True
            wrong = await call_error(client, "tmux_capture", target=target, host="far")
            assert "is of host farther, not of host far" in wrong
            # a dropped connection (its master ended) is made again by the next call
            far = context.services.on("far")
            assert isinstance(far.host, SshHost)
            ended = [
                "ssh", "-F", str(ssh_target.config), "-S", far.host.control_path, "-O", "exit",
                "--", ALIAS,
            ]  # fmt: skip
            await anyio.run_process(ended, check=False)
            assert far.host.lost() is not None
            # a call the drop overtakes says so, as with --ssh; the next connects again
            again = await client.call_tool("run_command", {"command": "echo back", **on_far})
            if again.is_error:
                assert "connection to host 'schemux-test' was lost" in str(again.content)
                again = await client.call_tool("run_command", {"command": "echo back", **on_far})
            assert again.structured_content is not None
            assert again.structured_content["output"] == ["back"]
            assert far.connects == 2
            everywhere = await call(client, "tmux_snapshot")
            named = {
                s["target"]["generation"].partition(":")[0] for s in everywhere["data"]["sessions"]
            }
            assert named == {"alpha", "far", "farther"}
    finally:
        await context.close()
        for session in (over_ssh, made_here):
            tmux(remote_tmux_socket, "kill-session", "-t", f"={session}", check=False)
        for directory in (host_dirs["alpha"], farther_dir):
            kill = [
                "env",
                f"TMUX_TMPDIR={directory}",
                "tmux",
                "-L",
                remote_tmux_socket,
                "kill-server",
            ]
            await anyio.run_process(kill, check=False)


def watching_clients(socket_name: str, directory: str) -> int:
    """``tests.support.watching_clients`` of the server of an exec host's ``directory``."""
    flags = subprocess.run(
        ["env", f"TMUX_TMPDIR={directory}", "tmux", "-L", socket_name, "list-clients",
         "-t", "=_schemux", "-F", "#{client_flags}"],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    return sum("no-output" not in line for line in flags.splitlines())


def session_over_ssh(target: SshTarget, socket_name: str) -> str:
    """The name of a new session on the tmux server ``socket_name`` of ``target``, made
    over ssh, so that its shell has the ssh session's environment."""
    assert target.config is not None
    name = f"t{uuid.uuid4().hex[:8]}"
    command = f"exec tmux -L {shlex.quote(socket_name)} new-session -d -s {name}"
    ssh = ["ssh", "-F", target.config, target.destination, command]
    subprocess.run(ssh, check=True, timeout=30)
    return name


def host_line(lines: list[str], name: str) -> str:
    [line] = [line for line in lines if f" host {name}: " in line]
    return line


def test_doctor_checks_every_host_at_once(tmp_path: Path, host_dirs: dict[str, str]) -> None:
    """One line a host; "waits" connects only once "opens" has, so checking one host after
    the other (waits is first) would fail it."""
    flag = tmp_path / "opened"
    waits = f'i=0; while [ ! -e {flag} ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done; [ -e {flag} ] && exec "$@"'  # noqa: E501
    opens = f'touch {flag}; exec "$@"'
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(
        f"""
[hosts.waits]
kind = "exec"
prefix = ["sh", "-c", {json.dumps(waits)}, "sh"]
[hosts.opens]
kind = "exec"
prefix = ["sh", "-c", {json.dumps(opens)}, "sh", "env", "TMUX_TMPDIR={host_dirs["alpha"]}"]
[hosts.here]
kind = "local"
"""
    )
    status, lines = doctor("--hosts", str(hosts), "--host", "down=exec:false")
    assert host_line(lines, "waits").startswith("OK    host waits: exec: reached; tmux ")
    assert "perl " in host_line(lines, "waits")
    assert host_line(lines, "opens").startswith("OK ")
    assert host_line(lines, "here").startswith("OK    host here: local: tmux ")
    down = host_line(lines, "down")
    assert down.startswith("FAIL  host down: the host of 'false': ")
    assert "did not run a command given to it" in down
    assert status == 1
    status, lines = doctor(SCHEMUX_HOSTS=str(hosts))
    assert status == 0
    assert [line.split()[2] for line in lines if " host " in line] == ["waits:", "opens:", "here:"]


def test_doctor_warns_of_a_host_without_python3_where_tmux_can_crash(tmp_path: Path) -> None:
    """A host whose PATH has everything but python3: its control clients would be tmux -C,
    which its tmux 3.3 to 3.6 can crash under; doctor warns and says what to install."""
    bin_dir = bin_without_python3(tmp_path)
    status, lines = doctor("--host", f"bare=exec:env PATH={bin_dir}", "--host", "here=local")
    line = host_line(lines, "bare")
    version = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout
    if header_for(version) is None:
        assert line.startswith("OK "), line
        assert "runs tmux -C safely" in line
    else:
        assert line.startswith("WARN  host bare: exec: reached; tmux "), line
        assert "; no python3 on the host of 'env PATH=" in line, line
        assert ": control clients are tmux -C; fix: " in line, line
        assert "install python3 (3.7 or newer) on that host" in "\n".join(lines)
    assert status == 0


def test_doctor_refuses_a_bad_host_setting() -> None:
    status, lines = doctor("--host", "Web=local")
    assert status == 1
    assert any("settings: --host 'Web=local': 'Web' is not a host name" in line for line in lines)


async def test_serve_over_stdio_with_named_hosts(
    anyio_backend: str, fleet_socket: str, host_dirs: dict[str, str]
) -> None:
    """The command as a client starts it: the hosts from options and the environment."""
    parameters = stdio_parameters(
        "--socket-name", fleet_socket, "--host", "here=local",
        "--host", f"alpha=exec:env TMUX_TMPDIR={host_dirs['alpha']}",
        env={"SCHEMUX_DEFAULT_HOST": "alpha"},
    )  # fmt: skip
    async with Client(parameters) as client:
        tools = (await client.list_tools()).tools
        assert all(
            tool.input_schema["properties"]["host"]["enum"] == ["here", "alpha"]
            for tool in tools
            if tool.name not in SEVERAL_HOSTS_TOOLS  # it chooses its hosts itself
        )
        assert {tool.name for tool in tools} >= set(SEVERAL_HOSTS_TOOLS)  # served: two hosts
        result = await call(client, "run_command", command='echo "at:$TMUX"')
        assert result["output"][0].startswith("at:" + host_dirs["alpha"])
        result = await call(client, "run_command", command='echo "at:$TMUX"', host="here")
        assert not result["output"][0].startswith("at:" + host_dirs["alpha"])


def templates_of(hosts: Iterable[str]) -> list[str]:
    """Each host's four templates (every tool served, no recordings), in the hosts'
    order."""
    return [
        uri
        for host in hosts
        for uri in (
            template(host, "pane", "screen"),
            template(host, "pane", "scrollback"),
            template(host, "pane", "picture"),
            template(host, "program", "output"),
        )
    ]


async def test_templates_of_a_large_fleet_come_in_pages(anyio_backend: str, tmp_path: Path) -> None:
    """250 hosts (none connected: listing templates reaches no host) answer 1,000 templates
    in pages of 100 hosts, in the fleet's order, each page's cursor the next; a cursor the
    server did not give is refused."""
    names = [f"h{index:03}" for index in range(250)]
    hosts = tuple(NamedHost(name, exec_target(str(tmp_path))) for name in names)
    context = ServingState(Settings(socket_name="unused", fleet=FleetSettings(hosts)))
    try:
        async with client_of(context, BINDINGS) as client:
            pages: list[list[str]] = []
            cursor: str | None = None
            while True:
                listed = await client.list_resource_templates(cursor=cursor)
                pages.append([each.uri_template for each in listed.resource_templates])
                cursor = listed.next_cursor
                if cursor is None:
                    break
            assert [len(page) for page in pages] == [400, 400, 200]
            assert [uri for page in pages for uri in page] == templates_of(names)
            for forged in ("hosts-from-250", "hosts-from-0", "hosts-from-01", "hosts-from-²", "x"):
                with pytest.raises(MCPError, match="not one that resources/templates/list gave"):
                    await client.list_resource_templates(cursor=forged)
    finally:
        await context.close()


async def test_resources_come_in_pages_of_hosts_and_a_failing_host_is_left_out(
    fleet_socket: str,
    host_dirs: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two hosts a page (the default and each used host, in the fleet's order, read at
    once); a used host that fails is left out of its page and the log says why, a page
    of it alone is its error; a cursor the server did not give is refused."""
    monkeypatch.setattr(resources, "RESOURCE_PAGE_HOSTS", 2)
    settings = fleet_settings(fleet_socket, host_dirs)
    hosts = (*settings.fleet.hosts, NamedHost("down", ExecTarget(("false",))))
    context = ServingState(Settings(socket_name=fleet_socket, fleet=FleetSettings(hosts)))
    try:
        async with client_of(context, BINDINGS) as client:
            for name in ("alpha", "beta"):
                await call(client, "run_command", command="true", host=name)
            await call_error(client, "run_command", command="true", host="down")
            pages: list[set[str]] = []
            cursor: str | None = None
            while True:
                listed = await client.list_resources(cursor=cursor)
                pages.append({uri_host(resource.uri) for resource in listed.resources})
                cursor = listed.next_cursor
                if cursor is None:
                    break
            assert pages == [{"here", "alpha"}, {"beta"}]
            assert "resources/list left out host 'down'" in caplog.text
            with pytest.raises(MCPError, match="did not run a command given to it"):
                await client.list_resources(cursor="hosts-from-3")  # down's page alone
            for forged in ("hosts-from-4", "hosts-from-0", "hosts-from-1 ", "x"):
                with pytest.raises(MCPError, match="not one that resources/list gave"):
                    await client.list_resources(cursor=forged)
    finally:
        await context.close()


def uri_host(uri: str) -> str:
    """The host a resource URI names (the default host's has none: "here")."""
    return uri.split("/")[2] or "here"


async def test_each_host_has_its_resources_and_its_links_read_back(
    fleet: tuple[Client, ServingState],
) -> None:
    """URIs name the host: a result's link from host beta reads beta's program, a pane id
    of alpha reads alpha's pane, templates and completion are per host, and a
    subscription keeps only its own host in use."""
    client, context = fleet
    listed_templates = (await client.list_resource_templates()).resource_templates
    assert [each.uri_template for each in listed_templates] == templates_of(NAMES)
    ran = await client.call_tool(
        "run_program",
        {"argv": ["seq", "1", "300"], "maxLines": 3, "timeoutMs": 20000, "host": "beta"},
    )
    [link] = [block for block in ran.content if block.type == "resource_link"]
    assert isinstance(link, types.ResourceLink)
    assert link.uri.startswith("tmux://beta/program/p")
    read = (await client.read_resource(link.uri)).contents[0]
    assert isinstance(read, types.TextResourceContents)
    assert read.text == "".join(f"{n}\n" for n in range(1, 301))
    program_id = link.uri.split("/")[-2]
    with pytest.raises(MCPError, match=rf"{program_id}"):  # not alpha's
        await client.read_resource(program_uri("alpha", program_id))

    alpha_pane = (await call(client, "run_command", command="echo on-alpha", host="alpha"))[
        "pane_id"
    ]
    uri = pane_uri("alpha", alpha_pane)
    screen = (await client.read_resource(uri)).contents[0]
    assert isinstance(screen, types.TextResourceContents)
    assert "\non-alpha" in screen.text
    completed = await client.complete(
        types.ResourceTemplateReference(uri=template("alpha", "pane", "screen")),
        {"name": "pane_id", "value": alpha_pane},
    )
    assert alpha_pane in completed.completion.values
    with pytest.raises(MCPError, match="host 'gamma' is not this server's"):
        await client.read_resource(pane_uri("gamma", alpha_pane))

    async with client.listen(resource_subscriptions=[uri]) as subscription:
        assert subscription.honored.resource_subscriptions == [uri]
        assert context.resource_watches.watching_on("alpha")
        assert not context.resource_watches.watching_on("beta")
        await call(client, "send_keys", keys="echo seen-on-alpha", pane_id=alpha_pane, host="alpha")
        with anyio.fail_after(10):
            assert await subscription.__anext__() == ResourceUpdated(uri)
    listed = {resource.uri for resource in (await client.list_resources()).resources}
    assert {uri, link.uri} <= listed
