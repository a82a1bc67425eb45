"""What one ``run_command {"command": "true"}`` in the agent's pane costs, counted rather
than timed: CPU seconds of each process involved and the tmux commands schemux sends, per
call, in bash, zsh and fish, recorded (the default) and ``--no-record``.

Wall time on a shared 2-core machine moves with the load; CPU time and round trips move
less, so this is how a change to the call's path is judged. For each shell, a private tmux
server started by schemux's embedded default as ``bench/shells.py`` starts it (the shell's
plain profile of ``tests/shells/`` as HOME, that shell as the login shell), two schemux
processes over stdio (``python -m schemux serve``, and one with ``--no-record --tools
all``), each counting what it sends (its control-mode clients' ``Connection.send`` patched
in the process, read back on SIGUSR1), and the raw floor of ``bench/shells.py`` for
comparison. A third contender is ``get_pane_info`` of the same pane by the second schemux:
what any call costs that looks one pane up (MCP, validation, one ``list-panes``), the part
of a ``run_command`` that is not its own. With ``--compare PYTHON``, two more schemux
processes under that Python (another checkout's environment) make the same calls, so two
builds are measured in the same minutes. Each contender makes ``--warmup`` calls, then
``--calls`` counted ones in turns of ``--batch`` (the order reversed every turn, the
readings taken around each turn), reporting per call:

* ``lines``: control-mode command lines schemux wrote (round trips, each answered by tmux
  before the next of its client runs), and ``commands``: tmux commands in them (without
  the sentinels each line carries);
* ``read``: lines schemux's control clients read back (answers and notifications);
* ``spawned``: processes schemux started;
* CPU ms of schemux's process, of its children (its control clients, the attacher on
  tmux 3.3 to 3.6), of the tmux server, of the pane's shell with its children (bash's
  ``PS0`` fork), and for the floor, of its tmux clients.

Usage: ``python bench/call_costs.py [--calls N] [--warmup K] [--batch B]
[--shells bash,zsh,fish] [--compare PYTHON] [--debug DIR [--profile]] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    COMMAND,
    check_result,
    children_cpu_seconds,
    cpu_seconds,
    machine_facts,
    publish,
    run,
    succeeded,
)
from bench.shells import (
    SHELLS,
    ShellServer,
    agent_pane,
    floor_call,
    login_environment,
    make_home,
    remove_home,
)

# schemux as `python -m schemux`, its login shell, the file its counts go to, the path
# its debugging files begin with ("" for none) and whether to profile ("profile" or "")
# the first arguments: each control line written is counted (with its commands), each
# line read, each process started; SIGUSR1 writes the counts and this process's pid to
# that file. With a path: each line sent and read and each MCP message in and out noted
# in memory with the time (ms) and written to PATH.trace at each SIGUSR1 (by the client
# it went through; a file write a line would slow the calls it times); with "profile",
# the calls between the first SIGUSR1 and each later one profiled into PATH.prof
# (cProfile's pstats, which slows them two- to threefold)
COUNTING = r"""
import asyncio, cProfile, json, os, signal, sys, time
import schemux.tmux.server as tmux
from schemux.serving import stdio
from schemux.tmux.command import split_commands
from schemux.tmux.control import connection, framing
shell, counts_file, debug, profiling = (sys.argv.pop(1) for _ in range(4))
tmux.login_shell = lambda env: shell
profile = None
trace = [] if debug else None
def note(text):
    trace.append((time.perf_counter(), text))
def write_trace():
    with open(debug + ".trace", "a") as out:
        out.writelines(f"{when * 1000:12.3f} {text}\n" for when, text in trace)
    trace.clear()
counts = {"lines": 0, "commands": 0, "read": 0, "spawned": 0, "pid": os.getpid()}
send, feed = connection.Connection.send, framing.FrameReader.feed
read_now, write_now = stdio._Wire.read_now, stdio._Wire.write_now
def counted_send(self, args):
    counts["lines"] += 1
    counts["commands"] += len(split_commands(args))
    if trace is not None:
        note(f"> {id(self.frames) % 1000:3} {' '.join(args)!r}")
    return send(self, args)
def counted_feed(self, line):
    counts["read"] += 1
    if trace is not None:
        note(f"< {id(self) % 1000:3} {line[:160]}")
    return feed(self, line)
def traced_read(self):
    data = read_now(self)
    if data:
        note(f"MCP in {bytes(data[:100])!r}")
    return data
def traced_write(self, data):
    note(f"MCP out {bytes(data[:60])!r}")
    return write_now(self, data)
connection.Connection.send = counted_send
framing.FrameReader.feed = counted_feed
if trace is not None:
    stdio._Wire.read_now, stdio._Wire.write_now = traced_read, traced_write
spawn = asyncio.base_events.BaseEventLoop.subprocess_exec
async def counted_spawn(self, *args, **kwargs):
    counts["spawned"] += 1
    return await spawn(self, *args, **kwargs)
asyncio.base_events.BaseEventLoop.subprocess_exec = counted_spawn
def tell(signum, frame):
    global profile
    if trace is not None:
        note("--- counted")
        write_trace()
    if profiling and profile is None:
        profile = cProfile.Profile(time.process_time)  # CPU, not waits
        profile.enable()
    elif profile is not None:
        profile.dump_stats(debug + ".prof")  # which stops it
        profile.enable()
    with open(counts_file + ".new", "w") as out:
        json.dump(counts, out)
    os.replace(counts_file + ".new", counts_file)
signal.signal(signal.SIGUSR1, tell)
from schemux.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
COUNTED = ("lines", "commands", "read", "spawned")


def counting_schemux(
    python: str,
    shell: str,
    home: Path,
    socket: str,
    counts: Path,
    debug: Path | None,
    *options: str,
    profile: bool = False,
) -> StdioServerParameters:
    """schemux over stdio as ``shell``'s user would start it, counting into ``counts``
    (and writing its timed trace to ``debug`` + ``.trace`` if given, and with
    ``profile`` its profile to ``debug`` + ``.prof``)."""
    traced = "" if debug is None else str(debug)
    return StdioServerParameters(
        command=python,
        args=[
            "-c",
            COUNTING,
            shell,
            str(counts),
            traced,
            "profile" if profile and debug is not None else "",
            "serve",
            "--socket-name",
            socket,
            *options,
        ],
        env=login_environment(shell, home),
        cwd=home,
    )


async def counts_of(path: Path, pid: int) -> dict[str, int]:
    """The counts the schemux process ``pid`` has now, asked by SIGUSR1 and read from the
    file ``path`` it writes them to."""
    before = _written(path)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _written(path) != before:
            return _counts(path)
        await asyncio.sleep(0.01)
    raise RuntimeError(f"schemux {pid} did not write its counts to {path}")


def _written(path: Path) -> int | None:
    """When ``path`` was last written (None: not yet)."""
    with contextlib.suppress(FileNotFoundError):
        return path.stat().st_mtime_ns
    return None


def _counts(path: Path) -> dict[str, int]:
    found: dict[str, int] = json.loads(path.read_text())
    return found


def shell_cpu(pid: int) -> float:
    """The shell's CPU seconds with those of the children it waited for (bash's ``PS0``
    substitution runs in a fork)."""
    seconds = cpu_seconds(pid)
    return seconds.own + seconds.reaped_children


def floor_clients_cpu() -> float:
    """This process's reaped children's CPU seconds (the floor's tmux clients)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Meter:
    """Where one contender's costs are read: the tmux server, the pane's shell, and the
    schemux process that counts into ``counts`` (none for the floor)."""

    tmux_pid: int
    shell_pid: int
    counts: Path | None = None
    schemux_pid: int | None = None

    async def reading(self) -> dict[str, float]:
        found: dict[str, float] = {
            "tmux_server": cpu_seconds(self.tmux_pid).own,
            "shell": shell_cpu(self.shell_pid),
            "floor_clients": floor_clients_cpu(),
        }
        if self.counts is not None and self.schemux_pid is not None:
            counts = await counts_of(self.counts, self.schemux_pid)
            own = cpu_seconds(self.schemux_pid)
            found |= {name: float(counts[name]) for name in COUNTED}
            found["schemux"] = own.own
            found["schemux_children"] = own.reaped_children + children_cpu_seconds(self.schemux_pid)
        return found


@dataclass
class Contender:
    """One kind of call, the meter of what it costs, and what its batches cost so far."""

    label: str
    call: Callable[[], Awaitable[None]]
    meter: Meter
    calls: int = 0
    wall: float = 0.0
    spent: dict[str, float] = field(default_factory=dict)

    async def batch(self, count: int) -> None:
        """``count`` calls, their costs added up (each reading taken around the batch)."""
        before = await self.meter.reading()
        started = time.perf_counter()
        for _ in range(count):
            await self.call()
        self.wall += time.perf_counter() - started
        after = await self.meter.reading()
        self.calls += count
        for name, value in after.items():
            self.spent[name] = self.spent.get(name, 0.0) + value - before[name]

    def per_call(self) -> dict[str, float]:
        """Counts and CPU ms per call (the floor's clients only for the floor: they are
        this process's children)."""
        found = {
            name: value / self.calls * (1 if name in COUNTED else 1000)
            for name, value in self.spent.items()
            if name != "floor_clients" or self.meter.counts is None
        }
        found["wall_ms"] = self.wall / self.calls * 1000
        return found


async def interleave(contenders: list[Contender], calls: int, warmup: int, batch: int) -> None:
    """``warmup`` calls of each, then ``calls`` counted ones in turns of ``batch`` (the
    order reversed every turn): a change of the shared machine's load weighs on all."""
    for contender in contenders:
        for _ in range(warmup):
            await contender.call()
    order = list(contenders)
    while any(contender.calls < calls for contender in order):
        for contender in order:
            if contender.calls < calls:
                await contender.batch(min(batch, calls - contender.calls))
        order.reverse()


async def measure_shell(name: str, args: argparse.Namespace) -> dict[str, Any]:
    shell, profile = SHELLS[name]
    home = Path(tempfile.mkdtemp(prefix=f"schemux-costs-{name}-"))
    builds = [("", args.python)] + ([("other ", args.compare)] if args.compare else [])
    try:
        make_home(profile, home)
        server = ShellServer(f"schemux-costs-{os.getpid()}-{name}")
        try:
            async with contextlib.AsyncExitStack() as stack:
                clients = []
                for build, python in builds:
                    for kind, options in (("recorded", ()), ("unrecorded", UNRECORDED)):
                        label = f"{build}{kind}"
                        counts = home / f"counts-{label.replace(' ', '-')}"
                        debug = None if args.debug is None else args.debug / f"{name}-{label}"
                        params = counting_schemux(
                            python,
                            shell,
                            home,
                            server.name,
                            counts,
                            debug,
                            *options,
                            profile=args.profile,
                        )
                        client = await stack.enter_async_context(Client(params))
                        clients.append((label, client, counts))
                agent = await agent_pane(clients[0][1])
                tmux_pid = int(server.run("display-message", "-p", "#{pid}").strip())
                agent_pid = pane_pid(server, agent)
                contenders = []
                for label, client, counts in clients:
                    meter = Meter(tmux_pid, agent_pid, counts, counting_pid(counts))
                    contenders.append(Contender(label, run_true(client, agent, label), meter))
                    if label.endswith("unrecorded"):
                        info = label.removesuffix("unrecorded") + "get_pane_info"
                        contenders.append(Contender(info, pane_info(client, agent, info), meter))
                floor_pane = server.own_pane()
                channels = itertools.count()

                async def floor() -> None:
                    floor_call(server, floor_pane, f"{server.name}-{next(channels)}")

                floor_meter = Meter(tmux_pid, pane_pid(server, floor_pane))
                contenders.append(Contender("raw_floor", floor, floor_meter))
                await interleave(contenders, args.calls, args.warmup, args.batch)
        finally:
            server.kill()
    finally:
        remove_home(home)
    return {contender.label: contender.per_call() for contender in contenders}


UNRECORDED = ("--no-record", "--tools", "all")


def pane_pid(server: ShellServer, pane: str) -> int:
    return int(server.run("display-message", "-p", "-t", pane, "#{pane_pid}"))


def run_true(client: Client, pane: str, label: str) -> Callable[[], Awaitable[None]]:
    async def call() -> None:
        check_result(label, await client.call_tool("run_command", {**COMMAND, "pane_id": pane}))

    return call


def pane_info(client: Client, pane: str, label: str) -> Callable[[], Awaitable[None]]:
    async def call() -> None:
        succeeded(label, await client.call_tool("get_pane_info", {"pane_id": pane}))

    return call


def counting_pid(counts: Path) -> int:
    """The pid of the schemux process counting into ``counts`` (its argument)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if str(counts).encode() in argv and COUNTING.encode() in argv:
                return int(pid)
    raise RuntimeError(f"no schemux process counting into {counts}")


def render(report: dict[str, Any]) -> str:
    facts = report["machine"]
    columns = (
        ("lines", "lines", "{:.1f}"),
        ("commands", "commands", "{:.1f}"),
        ("read", "read", "{:.1f}"),
        ("spawned", "spawned", "{:.2f}"),
        ("schemux", "schemux ms", "{:.2f}"),
        ("schemux_children", "children ms", "{:.2f}"),
        ("tmux_server", "tmux ms", "{:.2f}"),
        ("shell", "shell ms", "{:.2f}"),
        ("floor_clients", "clients ms", "{:.2f}"),
        ("wall_ms", "wall ms", "{:.2f}"),
    )
    lines = [
        f"{facts['tmux']}, nproc {facts['nproc']}, Python {facts['python']}, "
        f"schemux {facts['schemux']}",
        f'run_command {{"command": "true"}} in the agent\'s pane: per call, over '
        f"{report['calls']} calls after {report['warmup']} warm-up, in turns of "
        f"{report['batch']}",
        "",
        f"  {'':26}" + "".join(f"{title:>12}" for _, title, _ in columns),
    ]
    for name, contenders in report["shells"].items():
        for contender, figures in contenders.items():
            cells = [
                form.format(figures[key]) if key in figures else "-" for key, _, form in columns
            ]
            label = f"{name} {contender}"
            lines.append(f"  {label:26}" + "".join(f"{cell:>12}" for cell in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=100, help="counted calls per contender")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first (5)")
    parser.add_argument("--shells", default="bash,zsh,fish", help="comma-separated shells")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    parser.add_argument("--batch", type=int, default=10, help="calls per turn (10)")
    parser.add_argument(
        "--python", default=sys.executable, help="the Python that runs schemux (this one)"
    )
    parser.add_argument(
        "--compare",
        metavar="PYTHON",
        help="also schemux under this Python (another checkout's environment), in turns",
    )
    parser.add_argument(
        "--debug",
        type=Path,
        metavar="DIR",
        help="write there each schemux's control lines and MCP messages, timed (.trace)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="with --debug, also profile the counted calls (.prof; slows them)",
    )
    args = parser.parse_args(argv)
    shells = [name for name in args.shells.split(",") if name]
    unknown = [name for name in shells if name not in SHELLS]
    if unknown or args.calls < 1 or args.warmup < 0 or args.batch < 1:
        parser.error(f"shells are {', '.join(SHELLS)}; --calls, --batch >= 1, --warmup >= 0")
    report: dict[str, Any] = {
        "machine": machine_facts(),
        "calls": args.calls,
        "warmup": args.warmup,
        "batch": args.batch,
        "shells": {name: asyncio.run(measure_shell(name, args)) for name in shells},
    }
    return publish(render(report), report, args.json)


if __name__ == "__main__":
    run(main)
