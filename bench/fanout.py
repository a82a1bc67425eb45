"""Benchmark ``run_command_on_hosts``: one command fanned out to many hosts, and what hosts cost.

Every host is an exec-kind host on this machine (``env TMUX_TMPDIR=DIR HOME=DIR/home
PATH=...``: a tmux server of its own, started by schemux with the agent's session and a
login bash of an empty home, and this PATH without version managers' shims, as on a
fresh host), so the figures are schemux's, not a network's. One
run measures:

* **fan-out / one host**: ``run_command_on_hosts {"command": "true"}`` to 10 hosts against
  ``run_command {"command": "true"}`` in the agent pane of one host of the same kind
  (a schemux of its own), calls alternating between the two, medians after warm-up;
* **the raw tmux floor** of the same ratio, measured between those calls on the same
  hosts' tmux servers: a login bash in a session of its own on each, driven over one
  control client per host (``send-keys -l ' true; tmux wait-for -S CH'``, Enter,
  ``wait-for CH``, a ``capture-pane`` of its last rows), on all 10 at once and on one.
  Every host here shares this machine's cores, so 10 at once take the sum of their work
  and one takes its latency: the floor's ratio is what tmux alone gives on this machine;
* **an idle connected host**: what one schemux holds on this machine for each host once
  a call used it (processes it started, file descriptors, resident memory), exec-kind
  hosts and, with ``--ssh``, a host over OpenSSH (the test suite's sshd on 127.0.0.1);
* **50 hosts used once**: a schemux with 50 hosts configured, its first fan-out (every
  host connected, its server and agent shell started; to all at once, or ``--connect-batch``
  at a time; called again for the hosts not reached within the call's 30 s) and a later
  one (after one more, the median of three), timed; then its processes, threads,
  descriptors and memory, in all and a host;
* **where a warm fan-out's CPU goes** (``--cpu-calls`` fan-outs to those hosts, after
  the rest): the CPU time of each kind of process a host (schemux itself; the carrier of
  its control clients, the program helper; the host's tmux server and the jobs it ran;
  the agent's shell and the processes it ran), from /proc, a host and a fan-out; and
  schemux's round trips a host and a fan-out (control commands, waits, helper requests),
  counted in a schemux served in this process over the same hosts. Wall time on a shared
  machine follows the other work on it; CPU time is what to compare between versions.

Bar: fan-out / one host at most 2 (medians). Exit status 1 when it is missed, 2 when a
call returned an error or a host did not exit 0.

Usage: ``python bench/fanout.py [--hosts N] [--calls N] [--many N] [--connect-batch N]
[--cpu-calls N] [--parts ratio,idle,many] [--ssh] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    Bar,
    CallFailed,
    cpu_seconds,
    machine_facts,
    publish,
    run,
    schemux_params,
    succeeded,
    summary,
)
from schemux.config import ENV_HOST, ENV_SSH_CONFIG, Settings
from schemux.host_settings import ExecTarget, FleetSettings, NamedHost
from schemux.hosts.programs.remote import REQUEST_SECONDS, RemotePrograms
from schemux.serving.state import ServingState
from schemux.shell.abandoned_wrappers import HOLD_SECONDS
from schemux.tmux.control.engine import ControlEngine
from tests.contexts import client_of
from tests.process_table import Process, processes
from tests.ssh_server import ALIAS, available, ssh_server

FAN_OUT_BAR = 2.0
MANY_RSS_MB, MANY_THREADS, MANY_FAN_OUT_MS_A_HOST = (
    300.0,
    64,
    5.0,
)  # for 200 hosts  # fan-out to 10 hosts / one host's run_command, medians
TRUE = {"command": "true"}
# the hosts' PATH: this one without version managers' shims (pyenv's python3 is a bash
# script that starts a dozen processes before Python: 4 s for 25 at once on a loaded
# machine, where a fresh host's /usr/bin/python3 starts at once)
HOST_PATH = os.pathsep.join(
    entry for entry in os.environ.get("PATH", "").split(os.pathsep) if "/shims" not in entry
)


@dataclass(frozen=True)
class ExecHost:
    """A host of this machine with its own tmux directory and an empty home."""

    name: str
    directory: Path

    @property
    def prefix(self) -> str:
        path = shlex.quote(HOST_PATH)
        return f"env TMUX_TMPDIR={self.directory} HOME={self.directory}/home PATH={path}"

    def kill(self, socket: str) -> None:
        env = ["env", f"TMUX_TMPDIR={self.directory}", "tmux", "-L", socket, "kill-server"]
        subprocess.run(env, capture_output=True, check=False)
        shutil.rmtree(self.directory, ignore_errors=True)


@contextmanager
def exec_hosts(count: int, socket: str, label: str) -> Iterator[list[ExecHost]]:
    """``count`` hosts, their servers (on ``socket``) killed and directories removed after."""
    made = []
    try:
        for number in range(count):
            # short: a socket's path must fit in 108 bytes
            directory = Path(tempfile.mkdtemp(prefix=f"sxb{label}", dir="/tmp"))
            (directory / "home").mkdir()
            made.append(ExecHost(f"{label}{number}", directory))
        yield made
    finally:
        for host in made:
            host.kill(socket)


def fleet_params(
    socket: str, hosts: list[str], ssh_config: Path | None = None
) -> StdioServerParameters:
    """schemux serving the named hosts (``NAME=DEST`` each), as ``SCHEMUX_HOST`` gives them."""
    params = schemux_params(socket)
    env = {**(params.env or {}), ENV_HOST: ";".join(hosts)}
    if ssh_config is not None:
        env[ENV_SSH_CONFIG] = str(ssh_config)
    return StdioServerParameters(command=params.command, args=params.args, cwd=params.cwd, env=env)


def single_params(socket: str, host: ExecHost) -> StdioServerParameters:
    params = schemux_params(socket)
    return StdioServerParameters(
        command=params.command,
        args=[*params.args, "--exec", host.prefix],
        cwd=params.cwd,
        env=params.env,
    )


class RawFloor:
    """tmux alone on one host: a login bash in a session ``floor`` of the host's server
    (started by schemux), driven over a control client of its own."""

    COMMANDS = (
        b"send-keys -t floor -l ' true; tmux wait-for -S floor' ; send-keys -t floor Enter ; "
        b"wait-for floor ; capture-pane -p -t floor -S -3\n"
    )
    BLOCKS = 4  # one %begin/%end block of output for each command of that line

    def __init__(self, client: asyncio.subprocess.Process) -> None:
        if client.stdin is None or client.stdout is None:
            raise RuntimeError("the floor's control client has no pipes")
        self.client, self.stdin, self.stdout = client, client.stdin, client.stdout

    @classmethod
    async def started(cls, host: ExecHost, socket: str) -> RawFloor:
        tmux = ["env", f"TMUX_TMPDIR={host.directory}", f"HOME={host.directory}/home"]
        tmux += ["tmux", "-L", socket]
        size = ("-x", "120", "-y", "40")
        made = await asyncio.create_subprocess_exec(
            *tmux, "new-session", "-d", "-s", "floor", *size, "bash -l"
        )
        if await made.wait() != 0:
            raise RuntimeError(f"{host.name}: the floor's session was not made")
        pipe = subprocess.PIPE
        floor = cls(
            await asyncio.create_subprocess_exec(
                *tmux, "-C", "attach", "-t", "floor", stdin=pipe, stdout=pipe
            )
        )
        # the attach's own block, then this one's
        await floor.until_answered(b"display-message -p floor-ready\n", 2)
        await asyncio.sleep(0.3)  # its login files read
        return floor

    async def call(self) -> None:
        await self.until_answered(self.COMMANDS, self.BLOCKS)

    async def until_answered(self, line: bytes, blocks: int) -> None:
        self.stdin.write(line)
        ended = 0
        while ended < blocks:
            answer = await self.stdout.readline()
            if not answer:
                raise RuntimeError("the floor's control client ended")
            if answer.startswith((b"%end ", b"%error ")):
                ended += 1

    async def close(self) -> None:
        self.stdin.close()
        await self.client.wait()


async def floor_call(floors: list[RawFloor]) -> float:
    start = time.perf_counter()
    await asyncio.gather(*(floor.call() for floor in floors))
    return time.perf_counter() - start


async def fan_out(client: Client, count: int, **arguments: Any) -> float:
    """Seconds of one ``run_command_on_hosts`` of ``true``; all ``count`` hosts must exit 0."""
    start = time.perf_counter()
    called = await client.call_tool("run_command_on_hosts", {**TRUE, **arguments})
    elapsed = time.perf_counter() - start
    result = succeeded("run_command_on_hosts", called)
    if result["exited_zero"] != count:
        raise CallFailed(f"run_command_on_hosts: not every host exited 0: {result['results']}")
    return elapsed


async def one_host(client: Client) -> float:
    start = time.perf_counter()
    result = succeeded("run_command", await client.call_tool("run_command", TRUE))
    elapsed = time.perf_counter() - start
    if result.get("exit_status") != 0:
        raise CallFailed(f"run_command: exit_status is not 0: {result!r}")
    return elapsed


@dataclass(frozen=True)
class Holdings:
    """What a schemux process and the processes it started hold on this machine."""

    # its descendants (tmux clients, ssh sessions, helpers) and the ssh masters it started
    # (which leave it, ssh's ControlPersist), itself not counted
    processes: int
    threads: int  # of schemux itself
    fds: int  # open descriptors of schemux itself
    fds_children: int  # and of its descendants
    rss_mb: float  # resident memory of schemux itself
    rss_children_mb: float  # and of its descendants (shared pages counted in each)
    pss_children_mb: float  # their proportional share: what they add to the machine's use

    def minus(self, other: Holdings) -> dict[str, float]:
        return {
            "processes": self.processes - other.processes,
            "threads": self.threads - other.threads,
            "fds": self.fds - other.fds,
            "fds_children": self.fds_children - other.fds_children,
            "rss_mb": round(self.rss_mb - other.rss_mb, 2),
            "rss_children_mb": round(self.rss_children_mb - other.rss_children_mb, 2),
            "pss_children_mb": round(self.pss_children_mb - other.pss_children_mb, 2),
        }


def schemux_pids() -> list[int]:
    """The ``python -m schemux serve`` children of this process."""
    return [
        process.pid
        for process in processes()
        if process.ppid == os.getpid() and b"schemux" in process.argv and b"serve" in process.argv
    ]


def schemux_pid() -> int:
    """The one ``python -m schemux serve`` child of this process."""
    found = schemux_pids()
    if len(found) != 1:
        raise RuntimeError(f"expected one schemux serve child, found {found}")
    return found[0]


def holdings(pid: int) -> Holdings:
    table = processes()
    children: dict[int, list[int]] = {}
    for process in table:
        children.setdefault(process.ppid, []).append(process.pid)
    # its private runtime directory (schemux.system.runtime_identity) names the ssh masters
    runtime = f"/schemux-{pid}-".encode()
    roots = [p.pid for p in table if p.ppid != pid and any(runtime in word for word in p.argv)]
    descendants, stack = [], [*children.get(pid, []), *roots]
    while stack:
        child = stack.pop()
        if child in descendants:
            continue
        descendants.append(child)
        stack += children.get(child, [])
    return Holdings(
        processes=len(descendants),
        threads=_threads(pid),
        fds=_fds(pid),
        fds_children=sum(_fds(child) for child in descendants),
        rss_mb=_rss_mb(pid),
        rss_children_mb=sum(_rss_mb(child) for child in descendants),
        pss_children_mb=sum(_pss_mb(child) for child in descendants),
    )


def _pss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


async def ratio_run(args: argparse.Namespace, socket: str) -> dict[str, Any]:
    """Fan-out to ``args.hosts`` hosts against one host's run_command, alternating; and
    the CPU each schemux spent on its calls (its own, from /proc), apart from its hosts'
    (here on this machine too, on a fleet on each host)."""
    with exec_hosts(args.hosts, socket, "f") as fleet, exec_hosts(1, socket, "s") as single:
        named = [f"{host.name}=exec:{host.prefix}" for host in fleet]
        timings: dict[str, list[float]] = {"fan_out": [], "one_host": []}
        cpu = dict.fromkeys(timings, 0.0)
        timings |= {"floor_fan_out": [], "floor_one_host": []}
        floors: list[RawFloor] = []
        async with Client(fleet_params(socket, named)) as many:
            many_pid = schemux_pid()
            await fan_out(many, args.hosts)  # every host's server started
            try:
                for host in fleet:
                    floors.append(await RawFloor.started(host, socket))
                async with Client(single_params(socket, single[0])) as one:
                    one_pid = next(pid for pid in schemux_pids() if pid != many_pid)
                    for index in range(args.warmup + args.calls):
                        timed = index >= args.warmup
                        before = cpu_seconds(many_pid).own
                        fan = await fan_out(many, args.hosts)
                        middle = cpu_seconds(many_pid).own, cpu_seconds(one_pid).own
                        alone = await one_host(one)
                        after = cpu_seconds(one_pid).own
                        raw = await floor_call(floors), await floor_call(floors[:1])
                        if timed:
                            timings["fan_out"].append(fan)
                            timings["one_host"].append(alone)
                            timings["floor_fan_out"].append(raw[0])
                            timings["floor_one_host"].append(raw[1])
                            cpu["fan_out"] += middle[0] - before
                            cpu["one_host"] += after - middle[1]
            finally:
                for floor in floors:
                    await floor.close()
    figures = {name: summary(seconds) for name, seconds in timings.items()}
    schemux_cpu_ms = {name: total * 1000 / args.calls for name, total in cpu.items()}
    median = {name: figure["median_ms"] for name, figure in figures.items()}
    return {
        "hosts": args.hosts,
        **figures,
        "ratio": median["fan_out"] / median["one_host"],
        "floor_ratio": median["floor_fan_out"] / median["floor_one_host"],
        "fan_out_over_floor": median["fan_out"] / median["floor_fan_out"],
        "one_host_over_floor": median["one_host"] / median["floor_one_host"],
        "schemux_cpu_ms": schemux_cpu_ms,
        "schemux_cpu_ratio": schemux_cpu_ms["fan_out"] / figures["one_host"]["median_ms"],
    }


async def idle_connected_host(socket: str, hosts: int, ssh_config: Path | None) -> dict[str, Any]:
    """What ``hosts`` exec-kind hosts (and one ssh host ``far``, with ``ssh_config``) cost
    once used: the schemux's holdings before any call and after a fan-out to them."""
    with exec_hosts(hosts, socket, "i") as fleet:
        named = [f"{host.name}=exec:{host.prefix}" for host in fleet]
        if ssh_config is not None:
            named.append(f"far={ALIAS}")
        async with Client(fleet_params(socket, named, ssh_config)) as client:
            pid = schemux_pid()
            await client.list_tools()
            before = holdings(pid)
            names = [host.name for host in fleet]
            await fan_out(client, hosts, hosts=names)
            await asyncio.sleep(0.5)  # helpers and clients settled
            after_exec = holdings(pid)
            report: dict[str, Any] = {
                "before": vars(before),
                "exec_hosts": hosts,
                "exec_per_host": {
                    key: round(value / hosts, 2) for key, value in after_exec.minus(before).items()
                },
            }
            if ssh_config is not None:
                await fan_out(client, 1, hosts=["far"])
                await asyncio.sleep(0.5)
                report["ssh_per_host"] = holdings(pid).minus(after_exec)
    return report


def descendants(pid: int) -> list[Process]:
    """The processes under ``pid`` now (ended ones are in their parent's children's
    time), and the ssh masters it started (named by its runtime directory)."""
    table = processes()
    children: dict[int, list[Process]] = {}
    for process in table:
        children.setdefault(process.ppid, []).append(process)
    runtime = f"/schemux-{pid}-".encode()
    roots = [p for p in table if p.ppid != pid and any(runtime in word for word in p.argv)]
    found: dict[int, Process] = {}
    stack = [*children.get(pid, []), *roots]
    while stack:
        child = stack.pop()
        if child.pid not in found:
            found[child.pid] = child
            stack += children.get(child.pid, [])
    return list(found.values())


def process_kind(process: Process) -> str:
    """What a process under schemux is: the carrier of a host's control clients, the
    program helper, or a relay (``env``, ``sh``, ``cat``) or other process."""
    words = process.argv
    if b"carry" in words:
        return "carrier"
    if any(word.endswith(b"remote_helper.pl") or b"perl" in word for word in words[:3]):
        return "helper"
    return "schemux's other processes"


@dataclass(frozen=True)
class HostPids:
    """A host's tmux server and its agent's shell (the pane a fan-out types into)."""

    server: int
    shell: int


def host_pids(host: ExecHost, socket: str) -> HostPids:
    tmux = ["env", f"TMUX_TMPDIR={host.directory}", "tmux", "-L", socket]
    done = subprocess.run(
        [*tmux, "display-message", "-p", "-t", "=agent:", "#{pid} #{pane_pid}"],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    server, shell = done.stdout.split()
    return HostPids(int(server), int(shell))


def cpu_by_kind(pid: int, hosts: list[HostPids]) -> dict[str, float]:
    """CPU seconds so far of each kind of process (see ``process_cpu``), summed over hosts."""
    own = cpu_seconds(pid)
    kinds = {"schemux": own.own, "schemux's ended children": own.reaped_children}
    for process in descendants(pid):
        kind = process_kind(process)
        with contextlib.suppress(OSError, ValueError):
            kinds[kind] = kinds.get(kind, 0.0) + cpu_seconds(process.pid).own
    for host in hosts:
        for kind, pid_there in (("tmux server", host.server), ("shell", host.shell)):
            used = cpu_seconds(pid_there)
            kinds[kind] = kinds.get(kind, 0.0) + used.own
            # what it waited for: the server's jobs (run-shell); the shell's commands,
            # subshells and the tmux clients it ran
            ran = f"{kind}'s ended children"
            kinds[ran] = kinds.get(ran, 0.0) + used.reaped_children
    return kinds


async def process_cpu(
    client: Client, pid: int, fleet: list[ExecHost], socket: str, calls: int
) -> dict[str, float]:
    """Milliseconds of CPU a host and a fan-out of each kind of process, over ``calls``
    warm fan-outs to every host of ``fleet``."""
    hosts = [host_pids(host, socket) for host in fleet]
    await fan_out(client, len(fleet))
    # the wrapper's hold timer runs a job a few seconds after each command: let those of
    # earlier calls run before the count begins, and these calls' run before it ends
    await asyncio.sleep(HOLD_SECONDS + 1)
    before = cpu_by_kind(pid, hosts)
    for _ in range(calls):
        await fan_out(client, len(fleet))
    await asyncio.sleep(HOLD_SECONDS + 1)
    after = cpu_by_kind(pid, hosts)
    scale = 1000 / (calls * len(fleet))
    per_host = {
        kind: round((after[kind] - before.get(kind, 0.0)) * scale, 2)
        for kind in sorted(after, key=lambda kind: -after[kind] + before.get(kind, 0.0))
    }
    per_host["all"] = round(sum(per_host.values()), 2)
    return per_host


async def round_trips(fleet: list[ExecHost], socket: str, calls: int) -> dict[str, float]:
    """schemux's round trips a host and a warm fan-out to every host of ``fleet``: each
    control command list, each ``wait-for``, each helper request, counted in a schemux
    served in this process."""
    counts = dict.fromkeys(("control commands", "waits", "helper requests"), 0)
    run, wait, ask = ControlEngine.run, ControlEngine.wait, RemotePrograms.shell_facts

    async def counted_run(engine: ControlEngine, *args: str, starter: object = None) -> list[str]:
        counts["control commands"] += 1
        return await run(engine, *args, starter=starter)

    async def counted_wait(
        engine: ControlEngine,
        channel: str,
        sent: asyncio.Event | None = None,
        starter: object = None,
    ) -> None:
        counts["waits"] += 1
        await wait(engine, channel, sent, starter)

    async def counted_ask(
        helper: RemotePrograms,
        operation: bytes,
        server: tuple[int, int],
        *fields: bytes,
        seconds: float = REQUEST_SECONDS,
    ) -> list[bytes] | None:
        counts["helper requests"] += 1
        return await ask(helper, operation, server, *fields, seconds=seconds)

    named = tuple(NamedHost(host.name, ExecTarget.parse(host.prefix)) for host in fleet)
    context = ServingState(Settings(socket_name=socket, fleet=FleetSettings(named)))
    try:
        async with client_of(context) as client:
            await fan_out(client, len(fleet))
            await fan_out(client, len(fleet))  # each host's helper started
            with ExitStack() as patched:
                for owner, name, replacement in (
                    (ControlEngine, "run", counted_run),
                    (ControlEngine, "wait", counted_wait),
                    (RemotePrograms, "shell_facts", counted_ask),
                ):
                    patched.callback(setattr, owner, name, getattr(owner, name))
                    setattr(owner, name, replacement)
                for _ in range(calls):
                    await fan_out(client, len(fleet))
    finally:
        await context.close()
    per_host = {kind: round(count / (calls * len(fleet)), 2) for kind, count in counts.items()}
    per_host["all"] = round(sum(per_host.values()), 2)
    return per_host


async def many_hosts(socket: str, count: int, batch: int, cpu_calls: int) -> dict[str, Any]:
    """``count`` exec-kind hosts configured, each used by a first fan-out (to ``batch``
    hosts at a time, 0: all at once), then a later one to all; then where the CPU of
    ``cpu_calls`` more goes, and their round trips."""
    with exec_hosts(count, socket, "m") as fleet:
        named = [f"{host.name}=exec:{host.prefix}" for host in fleet]
        start = time.perf_counter()
        async with Client(fleet_params(socket, named)) as client:
            listed = time.perf_counter() - start
            pid = schemux_pid()
            before = holdings(pid)
            first = 0.0
            reached: list[int] = []  # hosts that answered exit 0, each first call
            size = batch or count
            for start in range(0, count, size):
                names = [host.name for host in fleet[start : start + size]]
                # with the call's default timeout (30 s): hosts not reached in it say so,
                # and are called again (the connected ones answer at once then)
                while names:
                    began = time.perf_counter()
                    called = await client.call_tool(
                        "run_command_on_hosts", {**TRUE, "hosts": names}
                    )
                    first += time.perf_counter() - began
                    results = succeeded("run_command_on_hosts", called)["results"]
                    done = {entry["host"] for entry in results if entry["exit_status"] == 0}
                    reached.append(len(done))
                    if not done:
                        raise CallFailed(f"no host was reached: {results[:3]}")
                    names = [name for name in names if name not in done]
            # the hosts reached last may still be starting their helper: one fan-out
            # first, then the median of three
            await fan_out(client, count)
            second = statistics.median([await fan_out(client, count) for _ in range(3)])
            await asyncio.sleep(0.5)
            after = holdings(pid)
            cpu = await process_cpu(client, pid, fleet, socket, cpu_calls)
        trips = await round_trips(fleet, socket, cpu_calls)
    per_host = {key: round(value / count, 2) for key, value in after.minus(before).items()}
    return {
        "hosts": count,
        "connect_batch": batch,
        "start_to_tools_ms": listed * 1000,
        "first_fan_out_ms": first * 1000,  # every first call, until all were reached
        "reached_each_first_call": reached,
        "second_fan_out_ms": second * 1000,
        "load_after": os.getloadavg()[0],
        "before": vars(before),
        "after": vars(after),
        "per_host": per_host,
        "cpu_calls": cpu_calls,
        "cpu_ms_a_host": cpu,
        "round_trips_a_host": trips,
    }


PARTS = ("ratio", "idle", "many")


async def measure(args: argparse.Namespace, socket: str) -> dict[str, Any]:
    report: dict[str, Any] = {"machine": machine_facts()}
    if "ratio" in args.parts:
        report["fan_out"] = await ratio_run(args, socket)
    if "idle" in args.parts:
        report["idle_host"] = await idle_host_cost(args, socket)
    if "many" in args.parts:
        report["many_hosts"] = await many_hosts(
            socket, args.many, args.connect_batch, args.cpu_calls
        )
    return report


async def idle_host_cost(args: argparse.Namespace, socket: str) -> dict[str, Any]:
    """``idle_connected_host``, with the test suite's sshd for ``--ssh``."""
    with ExitStack() as stack:
        ssh_config = None
        if args.ssh:
            problem = available()
            if problem is not None:
                raise RuntimeError(problem)
            ssh_config = stack.enter_context(ssh_server()).config
            # the server started over ssh is in this machine's tmux directory
            stack.callback(
                subprocess.run, ["tmux", "-L", socket, "kill-server"], capture_output=True
            )
        return await idle_connected_host(socket, args.hosts, ssh_config)


def bars(report: dict[str, Any]) -> list[Bar]:
    """The fan-out's ratio, and what the many hosts cost schemux (issue 37's goals for 200),
    of the parts run."""
    found = []
    if "fan_out" in report:
        fan = report["fan_out"]
        found.append(Bar(f"fan-out to {fan['hosts']} / one host", fan["ratio"], FAN_OUT_BAR))
    if "many_hosts" in report:
        many = report["many_hosts"]
        count = many["hosts"]
        found += [
            Bar(f"{count} hosts: schemux's RSS", many["after"]["rss_mb"], MANY_RSS_MB, " MB"),
            Bar(f"{count} hosts: schemux's threads", many["after"]["threads"], MANY_THREADS, ""),
            Bar(
                f"{count} hosts: a later fan-out, a host",
                many["second_fan_out_ms"] / count,
                MANY_FAN_OUT_MS_A_HOST,
                " ms",
            ),
        ]
    return found


def render(report: dict[str, Any]) -> str:
    facts = report["machine"]
    lines = [
        f"{facts['tmux']}, nproc {facts['nproc']}, Python {facts['python']}, "
        f"Linux {facts['kernel']}, schemux {facts['schemux']}",
    ]
    if "fan_out" in report:
        lines += render_ratio(report["fan_out"])
    if "idle_host" in report:
        lines += render_idle(report["idle_host"])
    if "many_hosts" in report:
        lines += render_many(report["many_hosts"])
    lines += ["", "bar", *(found.line() for found in bars(report))]
    return "\n".join(lines)


def render_ratio(fan: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"`true` on {fan['hosts']} exec-kind hosts at once against one host's run_command, "
        f"{fan['fan_out']['n']} calls each, alternating",
        f"  {'':34}{'median ms':>10}{'p90 ms':>10}{'min ms':>10}{'max ms':>10}",
    ]
    for key, label in (("fan_out", f"run_command_on_hosts ({fan['hosts']})"),
                       ("one_host", "run_command (one host)"),
                       ("floor_fan_out", f"raw tmux floor ({fan['hosts']} at once)"),
                       ("floor_one_host", "raw tmux floor (one host)")):  # fmt: skip
        row = fan[key]
        lines.append(
            f"  {label:34}{row['median_ms']:10.1f}{row['p90_ms']:10.1f}"
            f"{row['min_ms']:10.1f}{row['max_ms']:10.1f}"
        )
    cpu = fan["schemux_cpu_ms"]
    return [
        *lines,
        f"  fan-out / one host (median): {fan['ratio']:.2f}; "
        f"the raw tmux floor's: {fan['floor_ratio']:.2f}",
        f"  schemux over the floor: fan-out {fan['fan_out_over_floor']:.2f}, one host "
        f"{fan['one_host_over_floor']:.2f}",
        f"  schemux's own CPU per call: fan-out {cpu['fan_out']:.1f} ms "
        f"({cpu['fan_out'] / fan['hosts']:.1f} ms a host), one host {cpu['one_host']:.1f} ms; "
        f"the fan-out's / one host's wall time {fan['schemux_cpu_ratio']:.2f} (what bounds "
        "it when the hosts' shells and tmux run on the hosts)",
    ]


def render_idle(idle: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "an idle connected host, on this machine, per host (schemux's descendants and ssh "
        "masters; threads, fds and RSS of schemux itself, then fds, RSS and PSS of the "
        "others)",
        f"  before any call: {idle['before']}",
        f"  exec-kind ({idle['exec_hosts']} hosts): {idle['exec_per_host']}",
    ]
    if "ssh_per_host" in idle:
        lines.append(f"  ssh (one host): {idle['ssh_per_host']}")
    return lines


def render_many(many: dict[str, Any]) -> list[str]:
    lines = [
        "",
        f"{many['hosts']} exec-kind hosts configured, used once",
        f"  start to tools/list {many['start_to_tools_ms']:.0f} ms; first fan-outs (connect, "
        f"start servers and shells; {many['connect_batch'] or 'all'} hosts at a time, "
        f"called again for those not reached in the call's 30 s: reached "
        f"{many['reached_each_first_call']}) {many['first_fan_out_ms']:.0f} ms in all; a "
        f"later one {many['second_fan_out_ms']:.0f} ms; load average "
        f"{many['load_after']:.1f} after",
        f"  a host: {many['per_host']['processes']:g} processes, "
        f"{many['per_host']['threads']:g} of schemux's threads",
        f"  before: {many['before']}",
        f"  after:  {many['after']}",
        f"  per host: {many['per_host']}",
        "",
        f"CPU of {many['cpu_calls']} warm fan-outs to the {many['hosts']} hosts, ms a host "
        "and a fan-out, by process",
    ]
    lines += [f"  {kind:34}{ms:8.2f}" for kind, ms in many["cpu_ms_a_host"].items()]
    lines.append("schemux's round trips a host and a fan-out (a schemux in this process)")
    lines += [f"  {kind:34}{count:8.2f}" for kind, count in many["round_trips_a_host"].items()]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hosts", type=int, default=10, help="hosts of the fan-out (10)")
    parser.add_argument("--calls", type=int, default=30, help="timed calls of each (30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first (3)")
    parser.add_argument("--many", type=int, default=50, help="hosts configured and used once (50)")
    parser.add_argument(
        "--connect-batch",
        type=int,
        default=0,
        help="the many hosts' first fan-outs, to this many at a time (0: all at once)",
    )
    parser.add_argument(
        "--cpu-calls", type=int, default=10, help="warm fan-outs whose CPU is read (10)"
    )
    parser.add_argument(
        "--parts",
        type=lambda text: text.split(","),
        default=list(PARTS),
        help=f"the parts to run, of {','.join(PARTS)} (all)",
    )
    parser.add_argument("--ssh", action="store_true", help="also an ssh host's cost (test sshd)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    if min(args.hosts, args.calls, args.many, args.cpu_calls) < 1 or args.warmup < 0:
        parser.error(
            "--hosts, --calls, --many and --cpu-calls must be at least 1, --warmup at least 0"
        )
    if not set(args.parts) <= set(PARTS):
        parser.error(f"--parts: of {','.join(PARTS)}")
    socket = f"schemux-bench-fanout-{os.getpid()}"
    report = asyncio.run(measure(args, socket))
    return publish(render(report), report, args.json, bars(report))


if __name__ == "__main__":
    run(main)
