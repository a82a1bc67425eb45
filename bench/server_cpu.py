"""The schemux server's own CPU time per MCP request, in process: tools/list, a
read_program page of about 24,000 characters, and list_sessions, at a handshake-era
protocol version and at 2026-07-28.

An in-memory ``mcp.Client`` on the ``Server`` object (as ``tests/contexts.py`` makes one)
talks to schemux over a private tmux server (socket ``schemux-cpu-<pid>`` in a
``TMUX_TMPDIR`` of the run's own, both removed at the end). The server's CPU is the
process's (``time.process_time``) while a request is inside the server's middleware
chain, read by a middleware put outermost: everything the SDK and schemux do with a
request once it is dispatched (the SDK's params checks, the handler, the result's wire
form), and nothing of the client's. Calls are made one after another, so nothing else
runs in that time but the event loop's own work for the call (its tmux round trips).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from bench.common import Tmux, publish, run, succeeded
from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.serving.server import build_server
from schemux.serving.state import ServingState

MODERN = "2026-07-28"
LEGACY = "legacy"  # the handshake: 2025-11-25, the newest a handshake reaches
PAGE_LINE = "the build step compiled module 0123456789 ok passed, déjà vu ✓\n"


class ServerCpu:
    """A server middleware that adds up the CPU seconds each method's requests take
    inside the server, one sample per request."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        started = time.process_time()
        try:
            return await call_next(ctx)
        finally:
            key = ctx.method
            if key == "tools/call" and isinstance(ctx.params, dict):
                key = str(ctx.params.get("name"))
            self.samples.setdefault(key, []).append(time.process_time() - started)

    def reset(self) -> None:
        self.samples.clear()


async def timed(
    meter: ServerCpu, key: str, count: int, request: Callable[[], Awaitable[Any]]
) -> dict[str, float]:
    """Server CPU ms of ``count`` requests made one after another (after two untimed),
    and the whole process's (client and server) per request."""
    for _ in range(2):
        await request()
    meter.reset()
    started = time.process_time()
    for _ in range(count):
        await request()
    whole = (time.process_time() - started) / count
    samples = meter.samples[key]
    return {
        "server_ms": 1000 * statistics.fmean(samples),
        "server_median_ms": 1000 * statistics.median(samples),
        "process_ms": 1000 * whole,
    }


async def measure(
    socket: str, page_file: Path, mode: str, counts: dict[str, int]
) -> dict[str, Any]:
    context = ServingState(Settings(socket_name=socket))
    server: Server[Any] = build_server(context, BINDINGS)
    meter = ServerCpu()
    server.middleware.insert(0, meter)
    figures: dict[str, Any] = {}
    try:
        async with Client(server, mode=mode, cache=None) as client:
            figures["protocol"] = client.session.protocol_version
            figures["tools/list"] = await timed(
                meter, "tools/list", counts["list"], client.list_tools
            )
            started = succeeded(
                "start_program",
                await client.call_tool("start_program", {"argv": ["cat", str(page_file)]}),
            )
            program = started["programId"]
            cursor = None
            while True:  # the whole file read once: the program has ended, its output kept
                arguments: dict[str, Any] = {"programId": program, "timeoutMs": 5000}
                if cursor is not None:
                    arguments["cursor"] = cursor
                page = succeeded("read_program", await client.call_tool("read_program", arguments))
                cursor = page["cursor"]
                if page["ended"]:
                    break
            first: dict[str, Any] = {"programId": program, "cursor": 0, "timeoutMs": 0}
            page = succeeded("read_program", await client.call_tool("read_program", first))
            figures["page_characters"] = len(page["text"])
            figures["read_program"] = await timed(
                meter,
                "read_program",
                counts["read"],
                lambda: client.call_tool("read_program", first),
            )
            figures["list_sessions"] = await timed(
                meter,
                "list_sessions",
                counts["sessions"],
                lambda: client.call_tool("list_sessions", {}),
            )
    finally:
        await context.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lists", type=int, default=30, help="tools/list requests timed")
    parser.add_argument("--reads", type=int, default=200, help="read_program calls timed")
    parser.add_argument("--sessions", type=int, default=300, help="list_sessions calls timed")
    parser.add_argument("--json", type=Path, help="write every figure here as JSON")
    args = parser.parse_args()
    counts = {"list": args.lists, "read": args.reads, "sessions": args.sessions}
    directory = Path(tempfile.mkdtemp(prefix="schemux-cpu-"))
    os.environ["TMUX_TMPDIR"] = str(directory)
    tmux = Tmux(f"schemux-cpu-{os.getpid()}")
    results: dict[str, Any] = {}
    try:
        tmux.start()
        page_file = directory / "page.txt"
        page_file.write_text(PAGE_LINE * 1000)
        for mode in (LEGACY, MODERN):
            results[mode] = asyncio.run(measure(tmux.name, page_file, mode, counts))
    finally:
        tmux.kill()
        shutil.rmtree(directory, ignore_errors=True)
    lines = []
    for figures in results.values():
        lines.append(f"protocol {figures['protocol']} (page of {figures['page_characters']} chars)")
        for key in ("tools/list", "read_program", "list_sessions"):
            each = figures[key]
            lines.append(
                f"  {key:<14} server {each['server_ms']:7.3f} ms CPU a request "
                f"(median {each['server_median_ms']:.3f}); client and server "
                f"{each['process_ms']:.3f}"
            )
    return publish("\n".join(lines), results, args.json)


if __name__ == "__main__":
    run(main)
