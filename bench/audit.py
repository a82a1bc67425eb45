"""The audit log's cost per tool call: the same calls with it off and on, interleaved.

It starts a private tmux server (socket ``schemux-bench-audit-<pid>``, never the default
server) and kills it at the end. Two servers run in this process, over the ``mcp``
client's in-memory transport (so that the pipeline, not a pipe, is what is timed): one
with ``--no-audit``, one auditing into a file in a temporary directory. Each round times
a batch of calls on one, then on the other (the order swapped every round), for:

- **refused**: ``run_command {"command": 5}``, refused by the inputSchema before any tmux
  work: the cheapest call there is, so the audit's share is at its largest;
- **tmux_snapshot**: a real call, one tmux round trip.

Figures: the median per call of each, and **on / off** (1.0: no cost). The writer
thread builds and writes each record off the event loop; its CPU time still shares the
interpreter with the loop, which is what the ratio shows. Bar: on / off at most 1.10 for
``tmux_snapshot``. Every call's result is checked: a ``tmux_snapshot`` that failed, or a
refused call that was not refused, stops the run (exit status 2); a missed bar is exit 1.

Usage: ``python bench/audit.py [--rounds N] [--calls N] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Bar, per_call, publish, run
from schemux.config import AuditSettings, Settings
from schemux.generated.bindings import BINDINGS
from schemux.names import socket_directory
from schemux.serving.server import build_server
from schemux.serving.state import ServingState

CALLS: dict[str, dict[str, Any]] = {
    "refused": {"name": "run_command", "arguments": {"command": 5}, "refused": True},
    "tmux_snapshot": {"name": "tmux_snapshot", "arguments": {}, "refused": False},
}
BAR = 1.10


@asynccontextmanager
async def served(socket: str, log: Path | None) -> AsyncIterator[Client]:
    context = ServingState(Settings(socket_name=socket, audit=AuditSettings(log)))
    try:
        async with Client(build_server(context, BINDINGS)) as client:
            yield client
    finally:
        await context.close()


async def measure(socket: str, log: Path, rounds: int, calls: int) -> dict[str, Any]:
    times: dict[str, dict[str, list[float]]] = {name: {"off": [], "on": []} for name in CALLS}
    async with served(socket, None) as off, served(socket, log) as on:
        clients = {"off": off, "on": on}
        for name, call in CALLS.items():
            for client in clients.values():
                await per_call(client, call, max(5, calls // 10))  # warm-up
            for number in range(rounds):
                order = ["off", "on"] if number % 2 == 0 else ["on", "off"]
                for which in order:
                    times[name][which].append(await per_call(clients[which], call, calls))
    report: dict[str, Any] = {"rounds": rounds, "calls_per_round": calls}
    for name, measured in times.items():
        off_ms = statistics.median(measured["off"]) * 1000
        on_ms = statistics.median(measured["on"]) * 1000
        report[name] = {"off_ms": off_ms, "on_ms": on_ms, "on_vs_off": on_ms / off_ms}
    return report


def render(report: dict[str, Any], rounds: int, calls: int) -> str:
    lines = [f"audit log cost, {rounds} rounds of {calls} calls, in process"]
    for name in CALLS:
        figures = report[name]
        lines.append(
            f"  {name:<14} off {figures['off_ms']:7.3f} ms  on {figures['on_ms']:7.3f} ms  "
            f"on / off {figures['on_vs_off']:.2f}x"
        )
    lines.append("bar")
    lines.append(bar(report).line())
    lines.append(f"  records written: {report['records_written']}")
    return "\n".join(lines)


def bar(report: dict[str, Any]) -> Bar:
    return Bar("tmux_snapshot on / off", report["tmux_snapshot"]["on_vs_off"], BAR)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    socket = f"schemux-bench-audit-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "bench"], check=True)
    try:
        with tempfile.TemporaryDirectory(prefix="schemux-bench-audit-") as directory:
            log = Path(directory) / "audit.jsonl"
            report = asyncio.run(measure(socket, log, options.rounds, options.calls))
            report["records_written"] = len(log.read_bytes().splitlines())
    finally:
        socket_file = os.path.join(socket_directory(), socket)
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)
        Path(socket_file).unlink(missing_ok=True)  # tmux 3.3a leaves it behind
    text = render(report, options.rounds, options.calls)
    return publish(text, report, options.json, [bar(report)])


if __name__ == "__main__":
    run(main)
