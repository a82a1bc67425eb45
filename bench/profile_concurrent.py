"""Where the time of 20 concurrent ``run_command`` calls goes (a diagnosis, not a benchmark).

Three views, on a private tmux server with 20 idle bash panes:

* **CPU**: over many batches of 20 concurrent ``run_command {"command": "true"}`` through
  the stdio server, the CPU time of each party (from /proc): the schemux server itself,
  the tmux clients it runs (its children: control clients for waits, alive or reaped),
  the tmux server, the
  20 shells and what they fork (the ``( ... )`` subshell and the wrapper's ``tmux`` client,
  their reaped children), and this MCP client; against wall time x CPUs.
* **phases**: the same calls served in-process (``mcp.Client`` on the ``Server`` object),
  with the engine commands, the ``wait-for`` wait and the wait for the shell to take its
  terminal back timed one by one: median per phase for one call alone and in a batch.
* **raw**: the raw tmux CLI floor (three tmux subprocesses per call), one alone and 20 at
  once from asyncio: what the same concurrency costs without schemux.

Usage: ``python bench/profile_concurrent.py [--batches N]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcp import Client

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    TICK,
    Tmux,
    check_result,
    children_cpu_seconds,
    cpu_seconds,
    find_server_pid,
    run,
    schemux_params,
)
from schemux.shell import idle as shell_panes
from schemux.tmux.server import TmuxServer

PANES = 20


def machine_busy_seconds() -> float:
    """CPU seconds all CPUs of the machine spent busy (not idle, not waiting on I/O)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICK


async def batch(client: Client, panes: list[str], command: str = "true") -> float:
    async def one(pane: str) -> None:
        result = await client.call_tool("run_command", {"command": command, "pane_id": pane})
        check_result(pane, result)

    start = time.perf_counter()
    await asyncio.gather(*(one(pane) for pane in panes))
    return time.perf_counter() - start


# CPU -------------------------------------------------------------------------------------


async def cpu_view(tmux: Tmux, panes: list[str], batches: int) -> list[str]:
    params = schemux_params(tmux.name)
    tmux_pid = int(tmux.run("display-message", "-p", "#{pid}").strip())
    shells = [int(tmux.run("display-message", "-p", "-t", p, "#{pane_pid}")) for p in panes]
    async with Client(params) as client:
        await batch(client, panes)  # warm up: engine connected, every pane used once
        server_pid = find_server_pid([params.command, *params.args])

        def sample() -> dict[str, float]:
            own, children = cpu_seconds(server_pid)
            shell_own = sum(cpu_seconds(pid)[0] for pid in shells)
            shell_children = sum(cpu_seconds(pid)[1] for pid in shells)
            me = os.times()
            return {
                "schemux server (Python)": own,
                "its tmux clients": children + children_cpu_seconds(server_pid),
                "tmux server": cpu_seconds(tmux_pid)[0],
                "20 bash shells": shell_own,
                "their subshells + tmux clients": shell_children,
                "MCP client (this process)": me.user + me.system,
            }

        before, machine_before = sample(), machine_busy_seconds()
        wall = sum([await batch(client, panes) for _ in range(batches)])
        after, machine_after = sample(), machine_busy_seconds()
    cpus = len(os.sched_getaffinity(0))
    lines = [
        f"CPU over {batches} batches of {PANES} concurrent `true` (stdio): "
        f"wall {wall / batches * 1000:.1f} ms per batch, {cpus} CPUs",
        f"  {'':38}{'ms/batch':>10}{'ms/call':>10}{'share':>8}",
    ]
    total = 0.0
    for name in before:
        spent = (after[name] - before[name]) / batches * 1000
        total += spent
        share = spent / (wall / batches * 1000 * cpus)
        lines.append(f"  {name:38}{spent:10.1f}{spent / PANES:10.2f}{share:8.0%}")
    busy = total / (wall / batches * 1000 * cpus)
    lines.append(f"  {'all of them':38}{total:10.1f}{total / PANES:10.2f}{busy:8.0%}")
    machine = (machine_after - machine_before) / batches * 1000
    share = machine / (wall / batches * 1000 * cpus)
    lines.append(f"  {'whole machine (busy)':38}{machine:10.1f}{machine / PANES:10.2f}{share:8.0%}")
    return lines


# phases ----------------------------------------------------------------------------------


Spans = dict[str, list[float]]


def label(args: tuple[str, ...]) -> str:
    if "send-keys" in args and "-l" in args:
        return "engine: type the wrapper"
    if "capture-pane" in args:
        return "engine: capture + release"
    if "set-option" in args and "-u" in args:
        return "engine: disarm"
    return f"engine: {args[0]}"


@contextmanager
def timed_phases(spans: Spans) -> Iterator[None]:
    """Record how long each engine command, wait and terminal hand-back takes."""
    run, wait = TmuxServer.run, TmuxServer.wait
    until = shell_panes.until_shell_has_terminal

    def timing(name: str, coroutine: Awaitable[Any]) -> Awaitable[Any]:
        async def timed() -> Any:
            start = time.perf_counter()
            try:
                return await coroutine
            finally:
                spans[name].append(time.perf_counter() - start)

        return timed()

    async def timed_run(self: TmuxServer, *args: str) -> list[str]:
        return await timing(label(args), run(self, *args))  # type: ignore[no-any-return]

    async def timed_wait(self: TmuxServer, channel: str, sent: asyncio.Event | None = None) -> None:
        await timing("wait-for (until the wrapper reports)", wait(self, channel, sent))

    async def timed_until(shell_pid: int, within: float = 1.0) -> None:
        await timing("shell takes its terminal back", until(shell_pid, within))

    TmuxServer.run = timed_run  # type: ignore[method-assign]
    TmuxServer.wait = timed_wait  # type: ignore[method-assign]
    shell_panes.until_shell_has_terminal = timed_until
    try:
        yield
    finally:
        TmuxServer.run, TmuxServer.wait = run, wait  # type: ignore[method-assign]
        shell_panes.until_shell_has_terminal = until


async def phase_view(tmux: Tmux, panes: list[str], batches: int) -> list[str]:
    from schemux.config import Settings
    from schemux.generated.bindings import BINDINGS
    from schemux.serving.server import build_server
    from schemux.serving.state import ServingState

    server = build_server(ServingState(Settings(socket_name=tmux.name)), BINDINGS)
    alone: Spans = defaultdict(list)
    together: Spans = defaultdict(list)
    walls: dict[str, list[float]] = {"alone": [], "together": []}
    async with Client(server) as client:
        await batch(client, panes)
        for _ in range(batches):
            with timed_phases(alone):
                walls["alone"].append(await batch(client, panes[:1]))
            with timed_phases(together):
                walls["together"].append(await batch(client, panes))

    def ms(values: list[float]) -> float:
        return statistics.median(values) * 1000 if values else 0.0

    lines = [
        f"phases, in-process server, median ms (medians of {batches} batches)",
        f"  {'':38}{'alone':>10}{'in 20':>10}",
        f"  {'whole call (wall)':38}{ms(walls['alone']):10.2f}{ms(walls['together']):10.2f}",
    ]
    for name in sorted(together, key=lambda name: -ms(together[name])):
        lines.append(f"  {name:38}{ms(alone[name]):10.2f}{ms(together[name]):10.2f}")
    return lines


# raw -------------------------------------------------------------------------------------


async def raw_call(tmux: Tmux, pane: str, channel: str) -> None:
    async def tmux_cli(*args: str) -> None:
        proc = await asyncio.create_subprocess_exec("tmux", "-L", tmux.name, *args)
        if await proc.wait() != 0:
            raise RuntimeError(f"tmux {args} failed")

    await tmux_cli("send-keys", "-t", pane, "-l", f" true; tmux wait-for -S {channel}")
    await tmux_cli("send-keys", "-t", pane, "Enter")
    await tmux_cli("wait-for", channel)


async def raw_view(tmux: Tmux, panes: list[str], batches: int) -> list[str]:
    counter = iter(range(10**9))

    async def run(group: list[str]) -> float:
        start = time.perf_counter()
        channels = [f"raw-{next(counter)}" for _ in group]
        await asyncio.gather(*(raw_call(tmux, p, c) for p, c in zip(group, channels, strict=True)))
        return time.perf_counter() - start

    await run(panes)
    alone = [await run(panes[:1]) for _ in range(batches)]
    together = [await run(panes) for _ in range(batches)]
    one, twenty = statistics.median(alone) * 1000, statistics.median(together) * 1000
    return [
        f"raw tmux CLI floor from asyncio, median of {batches}",
        f"  {'one call':38}{one:10.1f} ms",
        f"  {'20 at once':38}{twenty:10.1f} ms  ({twenty / one:.1f}x one)",
    ]


async def profile(tmux: Tmux, batches: int) -> list[str]:
    tmux.start()
    panes = [tmux.new_pane() for _ in range(PANES)]
    views: list[Callable[[Tmux, list[str], int], Awaitable[list[str]]]] = [
        cpu_view,
        phase_view,
        raw_view,
    ]
    lines: list[str] = []
    for view in views:
        lines += [*await view(tmux, panes, batches), ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--batches", type=int, default=20, help="batches per view (20)")
    args = parser.parse_args(argv)
    tmux = Tmux(f"schemux-profile-{os.getpid()}")
    try:
        lines = asyncio.run(profile(tmux, args.batches))
    finally:
        tmux.kill()
    print("\n".join(lines).rstrip())
    return 0


if __name__ == "__main__":
    run(main)
