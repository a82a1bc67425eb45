"""What an open page costs: CPU seconds a minute of schemux (with its control clients)
and of the tmux server, with 0, 1 and 4 pages open on idle panes.

A private tmux server has ``--panes`` idle bash panes; ``schemux serve --http`` serves
it with a token and an audit log. Each phase opens that many pages (``GET /events``
with the bearer token, each stream read to its end as a browser would) and, after a
settling time (the first roster, the panes' watches), measures ``--seconds`` of CPU:
schemux's own and its live children's (the control clients that follow the panes), and
the tmux server's. Phases of 0, 1 and 4 pages are interleaved, their order reversed
every round, so that the floor (no page) is measured beside them on the same load; the
figures are each phase's median over ``--rounds``, with the machine's load average.

The bar: one page over no page costs at most ``BAR_CPU_PER_MINUTE`` CPU seconds a
minute (schemux and tmux together): a page left open all day on idle panes should be
invisible on the machine it watches, 1 % of one core at most.

Usage: ``python bench/page.py [--rounds N] [--seconds S] [--panes P] [--json PATH]``
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx2

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Bar, Tmux, children_cpu_seconds, cpu_seconds, machine_facts, publish, run

TOKEN = "bench-page-token-8d1f0c2b7a6e4953"
PAGES = (0, 1, 4)
SETTLE_SECONDS = 4.0  # a page's first roster and its panes' watches, before measuring
BAR_CPU_PER_MINUTE = 0.6  # one page over none: 1 % of one core


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("schemux serve --http exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("schemux serve --http is not listening")


def cpu_now(schemux: int, tmux_server: int) -> tuple[float, float]:
    """CPU seconds so far: schemux's with its live children's, and the tmux server's."""
    return (
        cpu_seconds(schemux).own + children_cpu_seconds(schemux),
        cpu_seconds(tmux_server).own,
    )


async def read_events(http: httpx2.AsyncClient, url: str) -> None:
    """One open page: its event stream read as it comes, until cancelled."""
    async with http.stream("GET", url) as answer:
        if answer.status_code != 200:
            raise RuntimeError(f"GET /events: {answer.status_code}")
        async for _ in answer.aiter_bytes():
            pass


async def phase(base: str, pages: int, seconds: float, pids: tuple[int, int]) -> dict[str, float]:
    """CPU seconds a minute of schemux and tmux with ``pages`` pages open."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=None) as http,
        anyio.create_task_group() as group,
    ):
        for _ in range(pages):
            group.start_soon(read_events, http, f"{base}/events")
        await anyio.sleep(SETTLE_SECONDS)
        before, load = cpu_now(*pids), os.getloadavg()[0]
        await anyio.sleep(seconds)
        after = cpu_now(*pids)
        group.cancel_scope.cancel()
    await anyio.sleep(1.0)  # the pages' watches released before the next phase
    scale = 60.0 / seconds
    return {
        "schemux": (after[0] - before[0]) * scale,
        "tmux": (after[1] - before[1]) * scale,
        "load": load,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--panes", type=int, default=4)
    parser.add_argument("--json", type=Path)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        os.environ["TMUX_TMPDIR"] = directory
        tmux = Tmux(f"schemux-bench-page-{uuid.uuid4().hex[:8]}")
        process: subprocess.Popen[bytes] | None = None
        try:
            tmux.start()
            for _ in range(arguments.panes - 1):
                tmux.new_pane()
            tmux_pid = int(tmux.run("display-message", "-p", "#{pid}").strip())
            port = free_port()
            environment = {
                **os.environ,
                "SCHEMUX_HTTP_TOKEN": TOKEN,
                "XDG_STATE_HOME": directory,  # the audit log the page reads, and recordings
            }
            process = subprocess.Popen(
                [sys.executable, "-m", "schemux", "serve", "--socket-name", tmux.name,
                 "--http", str(port)],
                cwd=directory, env=environment, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            wait_listening(port, process)
            base = f"http://127.0.0.1:{port}"
            figures: dict[int, list[dict[str, float]]] = {pages: [] for pages in PAGES}
            for round_number in range(arguments.rounds):
                order = PAGES if round_number % 2 == 0 else PAGES[::-1]
                for pages in order:
                    measured = anyio.run(
                        phase, base, pages, arguments.seconds, (process.pid, tmux_pid)
                    )
                    figures[pages].append(measured)
        finally:
            if process is not None:
                process.terminate()
                process.wait(timeout=10)
            tmux.kill()
    return report(figures, arguments)


def report(figures: dict[int, list[dict[str, float]]], arguments: argparse.Namespace) -> int:
    medians = {
        pages: {key: statistics.median(m[key] for m in measured) for key in measured[0]}
        for pages, measured in figures.items()
    }
    lines = [
        f"CPU seconds a minute, {arguments.panes} idle panes, median of {arguments.rounds} "
        f"rounds of {arguments.seconds:g} s (phases interleaved):",
        f"  {'pages':>5}  {'schemux':>8}  {'tmux':>8}  {'total':>8}  {'load':>5}",
    ]
    for pages, median in medians.items():
        both = median["schemux"] + median["tmux"]
        lines.append(
            f"  {pages:>5}  {median['schemux']:8.3f}  {median['tmux']:8.3f}  {both:8.3f}"
            f"  {median['load']:5.1f}"
        )

    def total(pages: int) -> float:
        return medians[pages]["schemux"] + medians[pages]["tmux"]

    one_page = total(1) - total(0)
    lines.append(f"one page over none: {one_page:.3f} CPU s/min; four: {total(4) - total(0):.3f}")
    bars = [Bar("one open page over none (CPU s/min)", one_page, BAR_CPU_PER_MINUTE, unit="")]
    lines += [bar.line() for bar in bars]
    result: dict[str, Any] = {
        "machine": machine_facts(),
        "panes": arguments.panes,
        "rounds": arguments.rounds,
        "seconds": arguments.seconds,
        "per_pages": {str(pages): measured for pages, measured in figures.items()},
        "medians": {str(pages): median for pages, median in medians.items()},
    }
    return publish("\n".join(lines), result, arguments.json, bars)


if __name__ == "__main__":
    run(main)
