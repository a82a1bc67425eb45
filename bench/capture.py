"""tmux_capture: a full snapshot against the raw tmux CLI, and a one-row delta.

It starts a private tmux server (socket ``schemux-bench-capture-<pid>``, never the default
server), makes one 200x50 pane whose program is idle, fills the pane's history with 1,000
full rows and its screen with 50 more by writing to its terminal, and kills the server at
the end. Then, after untimed warm-up calls:

- **raw CLI**: ``tmux capture-pane -p -N -S -950 -t PANE`` as a subprocess, the 1,000 rows
  a snapshot returns (the last 950 history rows and the screen), read whole;
- **snapshot**: ``tmux_capture {"target": ..., "history_lines": 1000, "max_lines": 1000,
  "max_bytes": 262144}`` through schemux's whole pipeline in this process (argument and
  result validation, both round trips, rows, limits, encoding), and the same call through
  the ``mcp`` client over stdio, as an agent sees it;
- **delta**: one row of the screen is changed (untimed, waited for), then the timed
  ``tmux_capture {"target": ..., "cursor": ...}`` of the same scope; each must return a
  splice of exactly one row. Snapshots and deltas alternate, each after such a change,
  so both find tmux in the same state.

Bars: snapshot (in process) at most 1.5x the raw CLI; the delta at most the snapshot.
Exit status 1 when a bar is missed, 2 when a call returned an error.

Usage: ``python bench/capture.py [--runs N] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Bar, Tmux, publish, run, schemux_params, succeeded
from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.server import call_bound_tool
from schemux.serving.state import ServingState
from schemux.tmux.references import IDENTITY_FORMAT, ServerIdentity

WIDTH, HEIGHT, HISTORY = 200, 50, 1000
SCOPE = {"history_lines": HISTORY, "max_lines": 1000, "max_bytes": 262144}


class Bench:
    def __init__(self) -> None:
        self.socket = f"schemux-bench-capture-{os.getpid()}"
        self.pane = ""
        self.tty = -1
        self.syncs = 0

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def start(self) -> dict[str, str]:
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", str(WIDTH),
                  "-y", str(HEIGHT), "exec sleep 100000")  # fmt: skip
        self.tmux("set-option", "-g", "history-limit", "5000")
        self.pane = self.tmux("display-message", "-p", "-t", "bench:", "#{pane_id}").strip()
        self.tty = os.open(self.display("#{pane_tty}"), os.O_WRONLY | os.O_NOCTTY)
        rows = [(f"{n:05d} " * 40)[:WIDTH] for n in range(HISTORY + HEIGHT)]
        self.write("\r\n".join(rows).encode())
        assert int(self.display("#{history_size}")) >= HISTORY
        identity = ServerIdentity.parse(
            self.tmux("display-message", "-p", IDENTITY_FORMAT).removesuffix("\n")
        )
        generation = identity.generation(self.pane)
        return {"kind": "pane", "id": self.pane, "generation": generation}

    def display(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", self.pane, fmt).strip()

    def write(self, data: bytes) -> None:
        """Write to the pane's terminal; return once tmux has taken all of it in."""
        self.syncs += 1
        marker = f"sync-{self.syncs}"
        os.write(self.tty, data + f"\033]2;{marker}\033\\".encode())
        while self.display("#{pane_title}") != marker:
            time.sleep(0.001)

    def change_one_row(self, n: int) -> None:
        self.write(f"\033[25;1H\033[2Kchanged {n}".encode())

    def stop(self) -> None:
        if self.tty >= 0:
            os.close(self.tty)
        Tmux(self.socket).kill()  # and its socket file, which tmux 3.3a leaves


def time_raw(bench: Bench, runs: int) -> list[float]:
    argv = ["tmux", "-L", bench.socket, "capture-pane", "-p", "-N", "-S", "-950", "-t", bench.pane]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        out = subprocess.run(argv, capture_output=True, check=True).stdout
        times.append(time.perf_counter() - started)
        assert out.count(b"\n") == 1000
    return times


async def time_in_process(bench: Bench, target: dict[str, str], runs: int) -> dict[str, Any]:
    context = ServingState(Settings(socket_name=bench.socket))
    binding = BINDINGS["tmux_capture"]
    try:
        first = await call_bound_tool(binding, context, {"target": target, **SCOPE, "track": True})
        cursor = succeeded("tmux_capture (tracked)", first)["data"]["next_cursor"]
        snapshots, deltas, sizes = [], [], []
        for n in range(runs):
            # both after the same change, so both find tmux in the same state
            bench.change_one_row(2 * n)
            started = time.perf_counter()
            result = await call_bound_tool(binding, context, {"target": target, **SCOPE})
            snapshots.append(time.perf_counter() - started)
            rows = succeeded("tmux_capture (snapshot)", result)["data"]["row_count"]
            assert rows == 1000, rows
            bench.change_one_row(2 * n + 1)
            started = time.perf_counter()
            result = await call_bound_tool(binding, context, {"target": target, "cursor": cursor})
            deltas.append(time.perf_counter() - started)
            data = succeeded("tmux_capture (delta)", result)["data"]
            assert len(data["splice"]["rows"]) == 1, data["splice"]
            assert data["splice"]["delete"] == 1
            cursor = data["next_cursor"]
            sizes.append(len(result.content[0].text))  # type: ignore[union-attr]
        return {"snapshot": snapshots, "delta": deltas, "delta_result_chars": sizes}
    finally:
        await context.close()


async def time_stdio(bench: Bench, target: dict[str, str], runs: int) -> list[float]:
    times = []
    async with Client(schemux_params(bench.socket)) as client:
        for _ in range(runs):
            started = time.perf_counter()
            result = await client.call_tool("tmux_capture", {"target": target, **SCOPE})
            times.append(time.perf_counter() - started)
            succeeded("tmux_capture over stdio", result)
    return times


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def bars(report: dict[str, Any]) -> list[Bar]:
    return [
        Bar("snapshot (in process) / raw CLI", report["snapshot_vs_raw"], 1.5),
        Bar("delta / snapshot", report["delta_vs_snapshot"], 1.0),
    ]


def render(report: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"tmux_capture, {WIDTH}x{HEIGHT} pane, {HISTORY} history rows, 1,000 rows captured",
            f"  raw tmux capture-pane CLI      {report['raw_cli_ms']:8.2f} ms (median)",
            f"  snapshot, in process          {report['snapshot_in_process_ms']:8.2f} ms",
            f"  snapshot, MCP over stdio      {report['snapshot_stdio_ms']:8.2f} ms",
            f"  delta after one row changed   {report['delta_in_process_ms']:8.2f} ms "
            f"(one row; result {report['delta_result_chars']:.0f} chars)",
            f"  stdio snapshot / raw {report['snapshot_stdio_vs_raw']:.2f}x",
            "bar",
            *(bar.line() for bar in bars(report)),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    bench = Bench()
    try:
        target = bench.start()
        warm = max(5, options.runs // 10)
        time_raw(bench, warm)
        asyncio.run(time_in_process(bench, target, warm))
        raw = time_raw(bench, options.runs)
        timed = asyncio.run(time_in_process(bench, target, options.runs))
        stdio = asyncio.run(time_stdio(bench, target, options.runs))
    finally:
        bench.stop()
    report = {
        "raw_cli_ms": ms(raw),
        "snapshot_in_process_ms": ms(timed["snapshot"]),
        "snapshot_stdio_ms": ms(stdio),
        "delta_in_process_ms": ms(timed["delta"]),
        "delta_result_chars": statistics.median(timed["delta_result_chars"]),
        "runs": options.runs,
    }
    report["snapshot_vs_raw"] = report["snapshot_in_process_ms"] / report["raw_cli_ms"]
    report["snapshot_stdio_vs_raw"] = report["snapshot_stdio_ms"] / report["raw_cli_ms"]
    report["delta_vs_snapshot"] = report["delta_in_process_ms"] / report["snapshot_in_process_ms"]
    return publish(render(report), report, options.json, bars(report))


if __name__ == "__main__":
    run(main)
