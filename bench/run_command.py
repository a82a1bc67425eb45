"""Benchmark ``run_command {"command": "true"}``: schemux against a raw tmux floor and the anchor.

One run starts a private tmux server (its own socket, never the default one), then measures:

* schemux over stdio, through the official ``mcp`` client;
* the raw floor: the same work driven from Python by tmux CLI subprocesses
  (``send-keys -l " true; tmux wait-for -S CH"``, ``send-keys Enter``, ``wait-for CH``);
* libtmux-mcp 0.1.0a22 (the anchor) over stdio, in a venv of its own under bench/.venvs/;
* cold start of both servers, interleaved: from spawning the process to the ``tools/list``
  answer.

Usage: ``python bench/run_command.py [--calls N] [--cold-starts K] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    ANCHOR_VERSION,
    COMMAND,
    Tmux,
    anchor_params,
    check_result,
    ensure_anchor,
    machine_facts,
    publish,
    run,
    schemux_params,
    summary,
)


async def time_mcp_calls(
    label: str, params: StdioServerParameters, pane: str, calls: int, warmup: int
) -> tuple[list[float], dict[str, Any]]:
    """Seconds per ``run_command`` call over one stdio session; the protocol and last output."""
    timings: list[float] = []
    payload: dict[str, Any] = {}
    async with Client(params) as client:
        protocol = client.protocol_version
        for index in range(warmup + calls):
            start = time.perf_counter()
            result = await client.call_tool("run_command", {**COMMAND, "pane_id": pane})
            elapsed = time.perf_counter() - start
            check_result(label, result)
            payload = result.structured_content or {}
            if index >= warmup:
                timings.append(elapsed)
    return timings, {"protocol": protocol, "last_output": payload.get("output")}


@dataclass
class ColdStarts:
    """One server's cold starts: seconds from spawning it to the ``tools/list`` answer,
    and how many tools it listed."""

    seconds: list[float] = field(default_factory=list)
    tools: int = 0


async def time_cold_starts(
    contenders: Mapping[str, StdioServerParameters], runs: int
) -> dict[str, ColdStarts]:
    """``runs`` cold starts of each server, interleaved: one of each per round, the order
    reversed every other round, so a change of load on the machine during the runs falls
    on every server alike instead of skewing their ratio."""
    starts = {name: ColdStarts() for name in contenders}
    order = list(contenders)
    for _ in range(runs):
        for name in order:
            start = time.perf_counter()
            async with Client(contenders[name]) as client:
                tools = await client.list_tools()
                starts[name].seconds.append(time.perf_counter() - start)
                starts[name].tools = len(tools.tools)
        order.reverse()
    return starts


def time_raw_floor(tmux: Tmux, pane: str, calls: int, warmup: int) -> list[float]:
    """Seconds per run-and-wait driven by tmux CLI subprocesses (a fresh channel each time)."""
    timings: list[float] = []
    for index in range(warmup + calls):
        channel = f"{tmux.name}-{index}"
        start = time.perf_counter()
        tmux.run("send-keys", "-t", pane, "-l", f" true; tmux wait-for -S {channel}")
        tmux.run("send-keys", "-t", pane, "Enter")
        tmux.run("wait-for", channel)
        elapsed = time.perf_counter() - start
        if index >= warmup:
            timings.append(elapsed)
    return timings


async def measure(args: argparse.Namespace, tmux: Tmux, raw_pane: str) -> dict[str, Any]:
    schemux, anchor = schemux_params(tmux.name), anchor_params(tmux.name)
    runs: dict[str, list[float]] = {}
    runs["schemux"], schemux_info = await time_mcp_calls(
        "schemux", schemux, tmux.new_pane(), args.calls, args.warmup
    )
    runs["raw_floor"] = time_raw_floor(tmux, raw_pane, args.calls, args.warmup)
    runs["libtmux_mcp"], anchor_info = await time_mcp_calls(
        "libtmux-mcp", anchor, tmux.new_pane(), args.calls, args.warmup
    )
    starts = await time_cold_starts({"schemux": schemux, "libtmux_mcp": anchor}, args.cold_starts)
    calls = {name: summary(seconds) for name, seconds in runs.items()}
    cold = {name: {**summary(each.seconds), "tools": each.tools} for name, each in starts.items()}
    median = {name: figures["median_ms"] for name, figures in calls.items()}
    return {
        "machine": machine_facts(),
        "calls": args.calls,
        "warmup": args.warmup,
        "cold_starts": args.cold_starts,
        "run_command": calls,
        "cold_start": cold,
        "ratios": {
            "schemux_over_raw_floor": median["schemux"] / median["raw_floor"],
            "schemux_over_libtmux_mcp": median["schemux"] / median["libtmux_mcp"],
            "cold_start_schemux_over_libtmux_mcp": (
                cold["schemux"]["median_ms"] / cold["libtmux_mcp"]["median_ms"]
            ),
        },
        "sessions": {"schemux": schemux_info, "libtmux_mcp": anchor_info},
    }


def render(report: dict[str, Any]) -> str:
    facts, calls, cold = report["machine"], report["run_command"], report["cold_start"]
    ratios, sessions = report["ratios"], report["sessions"]
    labels = {
        "schemux": "schemux (stdio)",
        "raw_floor": "raw tmux floor",
        "libtmux_mcp": f"libtmux-mcp {ANCHOR_VERSION}",
    }
    lines = [
        f"{facts['tmux']}, nproc {facts['nproc']}, Python {facts['python']}, "
        f"Linux {facts['kernel']}, mcp {facts['mcp']}, schemux {facts['schemux']}",
        "",
        f"run_command {json.dumps(COMMAND)}: {report['calls']} timed calls "
        f"after {report['warmup']} warm-up",
        f"  {'':32}{'median ms':>10}{'p90 ms':>10}{'min ms':>10}{'max ms':>10}",
    ]
    for name, label in labels.items():
        row = calls[name]
        lines.append(
            f"  {label:32}{row['median_ms']:10.2f}{row['p90_ms']:10.2f}"
            f"{row['min_ms']:10.2f}{row['max_ms']:10.2f}"
        )
    lines += [
        f"  {'schemux / raw floor (median)':32}{ratios['schemux_over_raw_floor']:10.2f}",
        f"  {'schemux / libtmux-mcp (median)':32}{ratios['schemux_over_libtmux_mcp']:10.2f}",
        "",
        f"cold start (spawn -> tools/list answer), median of {report['cold_starts']}",
        f"  {'':32}{'median ms':>10}{'tools':>10}",
    ]
    for name in ("schemux", "libtmux_mcp"):
        row = cold[name]
        lines.append(f"  {labels[name]:32}{row['median_ms']:10.1f}{row['tools']:10d}")
    lines += [
        f"  {'schemux / libtmux-mcp (median)':32}"
        f"{ratios['cold_start_schemux_over_libtmux_mcp']:10.2f}",
        "",
    ]
    for name in ("schemux", "libtmux_mcp"):
        output = sessions[name]["last_output"] or []
        lines.append(
            f"{labels[name]}: protocol {sessions[name]['protocol']}, "
            f"output of the last `true`: {len(output)} lines"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=200, help="timed run_command calls (200)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first (5)")
    parser.add_argument("--cold-starts", type=int, default=5, help="cold starts per server (5)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.calls < 1 or args.cold_starts < 1 or args.warmup < 0:
        parser.error("--calls and --cold-starts must be at least 1, --warmup at least 0")
    ensure_anchor()
    tmux = Tmux(f"schemux-bench-{os.getpid()}")
    try:
        report = asyncio.run(measure(args, tmux, tmux.start()))
    finally:
        tmux.kill()
    publish(render(report), report, args.json)
    return 0


if __name__ == "__main__":
    run(main)
