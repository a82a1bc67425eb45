"""The schemux benchmark suite: one run, one table, and a bar of targets met or missed.

It starts a private tmux server (socket ``schemux-suite-<pid>``, never the default server),
kills it at the end, and measures:

1. the engine: ``display-message -p x`` through ``TmuxServer.run`` (one persistent
   control-mode client) against ``run_subprocess`` (a tmux process per command);
2. ``run_command {"command": "true"}``: schemux over stdio, the raw tmux CLI floor and
   libtmux-mcp 0.1.0a22 (the functions of ``bench/run_command.py``);
3. 20 ``run_command`` calls at once in 20 idle bash panes over one stdio session, against
   one call alone and the same 20 in sequence, for ``true`` and ``sleep 0.2``;
4. cold start (spawn to the ``tools/list`` answer), schemux against libtmux-mcp,
   interleaved (one of each in turn);
5. resident memory (VmRSS) of the schemux server after start and after 1,000 calls.

Usage: ``python bench/suite.py [--quick] [--skip-anchor] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    ANCHOR_VERSION,
    Bar,
    Tmux,
    anchor_params,
    check_result,
    ensure_anchor,
    find_server_pid,
    machine_facts,
    publish,
    resident_mb,
    run,
    schemux_params,
    summary,
)
from bench.run_command import time_cold_starts, time_mcp_calls, time_raw_floor
from schemux.tmux.server import ServerAddress, TmuxServer

CONCURRENT_PANES = 20
CONCURRENT_COMMANDS = ("true", "sleep 0.2")


@dataclass(frozen=True)
class Sizes:
    """How much of each measurement one run does."""

    engine_commands: int = 1000
    calls: int = 200
    warmup: int = 5
    cold_starts: int = 5  # of each server, interleaved
    batches: int = 10
    sequential_batches: int = 3
    memory_calls: int = 1000

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            engine_commands=50,
            calls=20,
            warmup=2,
            cold_starts=2,
            batches=2,
            sequential_batches=1,
            memory_calls=100,
        )


# 1. engine round trip --------------------------------------------------------------------


async def time_awaitable(
    make: Callable[[], Awaitable[object]], count: int, warmup: int
) -> list[float]:
    """Seconds per ``await make()``, one after another, after ``warmup`` untimed ones."""
    timings: list[float] = []
    for index in range(warmup + count):
        start = time.perf_counter()
        await make()
        elapsed = time.perf_counter() - start
        if index >= warmup:
            timings.append(elapsed)
    return timings


async def measure_engine(socket: str, count: int, warmup: int) -> dict[str, Any]:
    """``display-message -p x``: engine (control-mode client) vs a tmux subprocess each."""
    server = TmuxServer(ServerAddress(socket_name=socket))
    args = ("display-message", "-p", "x")
    try:
        engine = await time_awaitable(lambda: server.run(*args), count, warmup)
        subprocess = await time_awaitable(lambda: server.run_subprocess(*args), count, warmup)
    finally:
        await server.close()
    figures = {"engine": summary(engine), "subprocess": summary(subprocess)}
    ratio = figures["subprocess"]["median_ms"] / figures["engine"]["median_ms"]
    return {**figures, "subprocess_over_engine": ratio}


# 3. concurrent calls ---------------------------------------------------------------------


async def timed_call(client: Client, pane: str, command: str) -> float:
    start = time.perf_counter()
    result = await client.call_tool("run_command", {"command": command, "pane_id": pane})
    elapsed = time.perf_counter() - start
    check_result(f"schemux {command!r} in {pane}", result)
    return elapsed


async def measure_concurrency(
    params: StdioServerParameters, panes: list[str], sizes: Sizes
) -> dict[str, Any]:
    """Per command: one call alone, 20 at once (``gather``), and 20 in sequence; medians."""
    results: dict[str, Any] = {}
    async with Client(params) as client:
        for command in CONCURRENT_COMMANDS:
            for pane in panes:  # warm every pane (first call in a shell is slower)
                await timed_call(client, pane, command)
            single = [await timed_call(client, panes[0], command) for _ in range(sizes.batches)]
            together: list[float] = []
            slowest_call: list[float] = []
            for _ in range(sizes.batches):
                start = time.perf_counter()
                each = await asyncio.gather(*(timed_call(client, p, command) for p in panes))
                together.append(time.perf_counter() - start)
                slowest_call.append(max(each))
            sequence: list[float] = []
            for _ in range(sizes.sequential_batches):
                start = time.perf_counter()
                for pane in panes:
                    await timed_call(client, pane, command)
                sequence.append(time.perf_counter() - start)
            one, batch, serial = (
                statistics.median(values) * 1000 for values in (single, together, sequence)
            )
            results[command] = {
                "single_ms": one,
                "concurrent_ms": batch,
                "concurrent_slowest_call_ms": statistics.median(slowest_call) * 1000,
                "sequential_ms": serial,
                "concurrent_over_single": batch / one,
                "concurrent_over_sequential": batch / serial,
            }
    return results


# 5. resident memory ----------------------------------------------------------------------


async def measure_memory(params: StdioServerParameters, pane: str, calls: int) -> dict[str, Any]:
    """VmRSS of the schemux server right after ``tools/list`` and after ``calls`` calls."""
    argv = [params.command, *params.args]
    async with Client(params) as client:
        await client.list_tools()
        pid = find_server_pid(argv)
        at_start = resident_mb(pid)
        halfway = at_start
        for index in range(calls):
            await timed_call(client, pane, "true")
            if index + 1 == calls // 2:
                halfway = resident_mb(pid)
        after = resident_mb(pid)
    return {
        "calls": calls,
        "after_start_mb": at_start,
        "halfway_mb": halfway,
        "after_calls_mb": after,
        "growth_mb": after - at_start,
    }


# the run ---------------------------------------------------------------------------------


async def measure(sizes: Sizes, tmux: Tmux, anchor: bool) -> dict[str, Any]:
    raw_pane = tmux.start()
    schemux = schemux_params(tmux.name)
    report: dict[str, Any] = {"machine": machine_facts(), "sizes": sizes.__dict__}
    if not anchor:
        report["machine"]["libtmux_mcp"] = None

    report["engine"] = await measure_engine(tmux.name, sizes.engine_commands, sizes.warmup)

    calls: dict[str, Any] = {}
    seconds, info = await time_mcp_calls(
        "schemux", schemux, tmux.new_pane(), sizes.calls, sizes.warmup
    )
    calls["schemux"] = {**summary(seconds), "protocol": info["protocol"]}
    calls["raw_floor"] = summary(time_raw_floor(tmux, raw_pane, sizes.calls, sizes.warmup))
    if anchor:
        seconds, info = await time_mcp_calls(
            "libtmux-mcp", anchor_params(tmux.name), tmux.new_pane(), sizes.calls, sizes.warmup
        )
        calls["libtmux_mcp"] = {**summary(seconds), "protocol": info["protocol"]}
    report["run_command"] = calls

    panes = [tmux.new_pane() for _ in range(CONCURRENT_PANES)]
    report["concurrent"] = await measure_concurrency(schemux, panes, sizes)

    contenders = {"schemux": schemux}
    if anchor:
        contenders["libtmux_mcp"] = anchor_params(tmux.name)
    starts = await time_cold_starts(contenders, sizes.cold_starts)
    report["cold_start"] = {
        name: {**summary(each.seconds), "tools": each.tools} for name, each in starts.items()
    }

    report["memory"] = await measure_memory(schemux, tmux.new_pane(), sizes.memory_calls)
    report["ratios"] = ratios(report)
    report["bar"] = bar(report)
    return report


def ratios(report: dict[str, Any]) -> dict[str, float | None]:
    calls, cold = report["run_command"], report["cold_start"]
    schemux = calls["schemux"]["median_ms"]
    anchor = calls.get("libtmux_mcp")
    anchor_cold = cold.get("libtmux_mcp")
    return {
        "schemux_over_raw_floor": schemux / calls["raw_floor"]["median_ms"],
        "schemux_over_libtmux_mcp": schemux / anchor["median_ms"] if anchor else None,
        "cold_start_schemux_over_libtmux_mcp": (
            cold["schemux"]["median_ms"] / anchor_cold["median_ms"] if anchor_cold else None
        ),
    }


def targets(report: dict[str, Any]) -> list[Bar]:
    """The bar; a target against libtmux-mcp has no value (SKIP) without the anchor."""
    rates, concurrent = report["ratios"], report["concurrent"]
    found = [
        Bar("run_command median / raw floor", rates["schemux_over_raw_floor"], 1.2),
        Bar("run_command median / libtmux-mcp", rates["schemux_over_libtmux_mcp"], 0.3),
        Bar("cold start / libtmux-mcp", rates["cold_start_schemux_over_libtmux_mcp"], 0.25),
    ]
    for command in CONCURRENT_COMMANDS:
        found.append(
            Bar(
                f"{CONCURRENT_PANES} concurrent {command!r} / one call",
                concurrent[command]["concurrent_over_single"],
                2.0,
            )
        )
    found.append(
        Bar(
            f"memory growth over {report['memory']['calls']} calls",
            report["memory"]["growth_mb"],
            10.0,
            " MB",
        )
    )
    return found


def bar(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"target": t.name, "limit": t.limit, "value": t.value, "verdict": t.verdict}
        for t in targets(report)
    ]


# the table -------------------------------------------------------------------------------


def _ratio(value: float | None) -> str:
    return f"{value:10.2f}" if value is not None else f"{'n/a':>10}"


def render(report: dict[str, Any]) -> str:
    facts, engine, calls = report["machine"], report["engine"], report["run_command"]
    rates, cold, memory = report["ratios"], report["cold_start"], report["memory"]
    sizes = report["sizes"]
    head = f"  {'':40}{'median ms':>10}{'p90 ms':>10}{'min ms':>10}{'max ms':>10}"

    def row(label: str, figures: dict[str, Any]) -> str:
        return (
            f"  {label:40}{figures['median_ms']:10.3f}{figures['p90_ms']:10.3f}"
            f"{figures['min_ms']:10.3f}{figures['max_ms']:10.3f}"
        )

    anchor_label = f"libtmux-mcp {ANCHOR_VERSION}"
    lines = [
        f"{facts['tmux']}, nproc {facts['nproc']}, Python {facts['python']}, "
        f"Linux {facts['kernel']}, mcp {facts['mcp']}, schemux {facts['schemux']}",
        "",
        f"1. display-message -p x, {sizes['engine_commands']} sequential commands each",
        head,
        row("engine (TmuxServer.run, control mode)", engine["engine"]),
        row("tmux subprocess (run_subprocess)", engine["subprocess"]),
        f"  {'subprocess / engine (median)':40}{_ratio(engine['subprocess_over_engine'])}",
        "",
        f'2. run_command {{"command": "true"}}, {sizes["calls"]} timed calls after '
        f"{sizes['warmup']} warm-up",
        head,
        row("schemux (stdio)", calls["schemux"]),
        row("raw tmux floor (CLI subprocesses)", calls["raw_floor"]),
    ]
    if "libtmux_mcp" in calls:
        lines.append(row(anchor_label + " (stdio)", calls["libtmux_mcp"]))
    lines += [
        f"  {'schemux / raw floor (median)':40}{_ratio(rates['schemux_over_raw_floor'])}",
        f"  {'schemux / libtmux-mcp (median)':40}{_ratio(rates['schemux_over_libtmux_mcp'])}",
        "",
        f"3. {CONCURRENT_PANES} run_command calls in {CONCURRENT_PANES} panes over one stdio "
        f"session (medians of {sizes['batches']} batches, {sizes['sequential_batches']} "
        "in sequence)",
        f"  {'command':14}{'one ms':>10}{'20 at once':>12}{'slowest':>10}{'20 in seq':>12}"
        f"{'at once/one':>13}{'at once/seq':>13}",
    ]
    for command, figures in report["concurrent"].items():
        lines.append(
            f"  {command:14}{figures['single_ms']:10.1f}{figures['concurrent_ms']:12.1f}"
            f"{figures['concurrent_slowest_call_ms']:10.1f}{figures['sequential_ms']:12.1f}"
            f"{figures['concurrent_over_single']:13.2f}"
            f"{figures['concurrent_over_sequential']:13.2f}"
        )
    lines += [
        "",
        f"4. cold start (spawn -> tools/list answer), median of {sizes['cold_starts']}, "
        "interleaved",
        f"  {'':40}{'median ms':>10}{'tools':>10}",
        f"  {'schemux':40}{cold['schemux']['median_ms']:10.1f}{cold['schemux']['tools']:10d}",
    ]
    if "libtmux_mcp" in cold:
        anchor_cold = cold["libtmux_mcp"]
        lines.append(
            f"  {anchor_label:40}{anchor_cold['median_ms']:10.1f}{anchor_cold['tools']:10d}"
        )
    lines += [
        f"  {'schemux / libtmux-mcp (median)':40}"
        f"{_ratio(rates['cold_start_schemux_over_libtmux_mcp'])}",
        "",
        f"5. schemux server VmRSS (MB), {memory['calls']} run_command calls",
        f"  {'after tools/list':40}{memory['after_start_mb']:10.1f}",
        f"  {'after half the calls':40}{memory['halfway_mb']:10.1f}",
        f"  {'after all the calls':40}{memory['after_calls_mb']:10.1f}",
        f"  {'growth':40}{memory['growth_mb']:+10.1f}",
        "",
        "bar",
    ]
    lines += [target.line() for target in targets(report)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--skip-anchor", action="store_true", help="leave out libtmux-mcp")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    sizes = Sizes.quick() if args.quick else Sizes()
    anchor = not args.skip_anchor
    if anchor:
        ensure_anchor()
    tmux = Tmux(f"schemux-suite-{os.getpid()}")
    try:
        report = asyncio.run(measure(sizes, tmux, anchor))
    finally:
        tmux.kill()
    return publish(render(report), report, args.json, targets(report))


if __name__ == "__main__":
    run(main)
