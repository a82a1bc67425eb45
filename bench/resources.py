"""Resource subscriptions: how soon a pane's change reaches a subscriber, against tmux's
own ``%output`` to a control client; and a resource read against a capture_pane call.

It starts a private tmux server (socket ``schemux-bench-resources-<pid>``, ``-f
/dev/null``, never the default server) with one idle 80x24 pane, and kills it at the end.
Each change is written straight to the pane's terminal (untimed setup: its tty is opened
once), so no tmux client command sits between the clock and the change. Then:

- **raw %output**: a ``tmux -C attach`` of the pane's session; from the write to the
  first ``%output`` line for the pane: what any tmux-based watcher waits at least;
- **listen**: schemux in this process (``mcp.Client`` in memory, 2026-07-28),
  ``subscriptions/listen`` on the pane's screen URI; from the write to the
  ``notifications/resources/updated`` the client is given. Changes are 0.3 s apart, more
  than the coalescing interval, so none is held back;
- **read** against **capture_pane**: ``resources/read`` of the screen, and the
  ``capture_pane`` tool call, the same rows, through the same client.

Bars: listen at most 20 ms over raw %output (median); read at most capture_pane's time.
Exit status 1 when a bar is missed, 2 when a call returned an error.

Usage: ``python bench/resources.py [--changes N] [--reads N] [--json PATH]``
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

from bench.common import Bar, Tmux, publish, run, succeeded
from schemux.config import Settings
from schemux.domain.resource_uris import pane_uri
from schemux.generated.bindings import BINDINGS
from schemux.serving.server import build_server
from schemux.serving.state import ServingState

CHANGE_GAP = 0.3  # seconds between changes: beyond the coalescing interval


def tmux(socket: str, *args: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", *args], capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"tmux {args}: {done.stderr}")
    return done.stdout


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p90": ordered[int(len(ordered) * 0.9) - 1],
        "min": ordered[0],
        "max": ordered[-1],
    }


async def raw_output(socket: str, session: str, pane: str, tty: int, changes: int) -> list[float]:
    client = await asyncio.create_subprocess_exec(
        "tmux", "-L", socket, "-C", "attach", "-t", session,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert client.stdout is not None
    assert client.stdin is not None
    await asyncio.sleep(0.5)  # attached, its first lines read below
    prefix = f"%output {pane} ".encode()
    times = []
    try:
        for index in range(changes):
            await asyncio.sleep(CHANGE_GAP)
            while True:  # what arrived meanwhile
                try:
                    await asyncio.wait_for(client.stdout.readline(), 0.01)
                except TimeoutError:
                    break
            written = time.monotonic()
            os.write(tty, f"raw {index}\r\n".encode())
            while not (await client.stdout.readline()).startswith(prefix):
                pass
            times.append((time.monotonic() - written) * 1000)
    finally:
        client.stdin.close()
        client.terminate()
        await client.wait()
    return times


async def schemux(
    socket: str, pane: str, tty: int, changes: int, reads: int
) -> dict[str, list[float]]:
    context = ServingState(Settings(socket_name=socket))
    figures: dict[str, list[float]] = {"listen": [], "read": [], "capture_pane": []}
    try:
        async with Client(build_server(context, BINDINGS), cache=None) as client:
            uri = pane_uri("local", pane)
            async with client.listen(resource_subscriptions=[uri]) as subscription:
                for index in range(changes):
                    await asyncio.sleep(CHANGE_GAP)
                    written = time.monotonic()
                    os.write(tty, f"listen {index}\r\n".encode())
                    await subscription.__anext__()
                    figures["listen"].append((time.monotonic() - written) * 1000)
            for _ in range(5):  # warm-up
                await client.read_resource(uri)
                succeeded("capture_pane", await client.call_tool("capture_pane", {"pane_id": pane}))
            for _ in range(reads):
                started = time.monotonic()
                await client.read_resource(uri)
                figures["read"].append((time.monotonic() - started) * 1000)
                started = time.monotonic()
                result = await client.call_tool("capture_pane", {"pane_id": pane})
                figures["capture_pane"].append((time.monotonic() - started) * 1000)
                succeeded("capture_pane", result)
    finally:
        await context.close()
    return figures


def bars(report: dict[str, Any]) -> list[Bar]:
    return [
        Bar("listen - raw %output (median)", report["listen_over_raw_ms"], 20.0, " ms"),
        Bar("read / capture_pane (median)", report["read_ratio"], 1.0),
    ]


def render(report: dict[str, Any]) -> str:
    lines = [
        f"{name:>13}: median {result['median']:.2f} ms, p90 {result['p90']:.2f} ms"
        for name, result in report["figures"].items()
    ]
    lines.append(
        f"listen - raw %output (median): {report['listen_over_raw_ms']:.2f} ms; "
        f"read / capture_pane (median): {report['read_ratio']:.2f}"
    )
    lines += ["bar", *(bar.line() for bar in bars(report))]
    return "\n".join(lines)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    socket = f"schemux-bench-resources-{os.getpid()}"
    session = "bench"
    pane, tty_path = tmux(
        socket, "new-session", "-d", "-s", session, "-x", "80", "-y", "24",
        "-P", "-F", "#{pane_id} #{pane_tty}", "sleep 100000",
    ).split()  # fmt: skip
    tty = os.open(tty_path, os.O_WRONLY | os.O_NOCTTY)
    try:
        raw = await raw_output(socket, session, pane, tty, options.changes)
        figures = {
            "raw %output": raw,
            **await schemux(socket, pane, tty, options.changes, options.reads),
        }
    finally:
        os.close(tty)
        Tmux(socket).kill()  # and its socket file, which tmux 3.3a leaves
    results = {name: summary(values) for name, values in figures.items()}
    over = results["listen"]["median"] - results["raw %output"]["median"]
    ratio = results["read"]["median"] / results["capture_pane"]["median"]
    report = {"figures": results, "listen_over_raw_ms": over, "read_ratio": ratio}
    return publish(render(report), report, options.json, bars(report))


if __name__ == "__main__":
    run(lambda: asyncio.run(main()))
