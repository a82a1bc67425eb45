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
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
ANCHOR_VERSION = "0.1.0a22"
ANCHOR_VENV = ROOT / "bench" / ".venvs" / "libtmux-mcp"
ANCHOR_PYTHON = ANCHOR_VENV / "bin" / "python"
ANCHOR_BIN = ANCHOR_VENV / "bin" / "libtmux-mcp"  # console script, libtmux_mcp:main
# tmux 3.3a did not hand PS1 given with `-e` on to the pane (HISTFILE it did), so the prompt
# is set on the command line, which tmux runs through the default shell.
SHELL = "env 'PS1=$ ' bash --norc --noprofile"
SHELL_ENV = ("-e", "HISTFILE=/dev/null")
COMMAND = {"command": "true"}


class Tmux:
    """A private tmux server on socket ``name``; every command names that socket."""

    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, *args: str, timeout: float = 30.0) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.name, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def start(self) -> str:
        pane = self.run(
            "-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40",
            "-P", "-F", "#{pane_id}", *SHELL_ENV, SHELL,
        ).strip()  # fmt: skip
        self.wait_for_prompt(pane)
        return pane

    def new_pane(self) -> str:
        pane = self.run(
            "new-window", "-d", "-t", "bench:", "-P", "-F", "#{pane_id}", *SHELL_ENV, SHELL
        ).strip()
        self.wait_for_prompt(pane)
        return pane

    def wait_for_prompt(self, pane: str, limit: float = 10.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            screen = self.run("capture-pane", "-p", "-t", pane).splitlines()
            if any(line.rstrip() == "$" for line in screen):
                return
            time.sleep(0.02)
        raise RuntimeError(f"pane {pane}: no '$ ' prompt within {limit} s")

    def kill(self) -> None:
        socket = subprocess.run(
            ["tmux", "-L", self.name, "display", "-p", "#{socket_path}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True, check=False)
        if socket:  # tmux 3.3a left the socket file behind
            Path(socket).unlink(missing_ok=True)


def ensure_anchor() -> Path:
    """The libtmux-mcp console script, installing the pinned version in its own venv if needed."""
    marker = f"libtmux_mcp-{ANCHOR_VERSION}.dist-info"
    if ANCHOR_BIN.exists() and any(ANCHOR_VENV.glob(f"lib/python*/site-packages/{marker}")):
        return ANCHOR_BIN
    print(f"installing libtmux-mcp=={ANCHOR_VERSION} into {ANCHOR_VENV} ...", file=sys.stderr)
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    requirement = f"libtmux-mcp=={ANCHOR_VERSION}"
    if shutil.which("uv"):
        if not ANCHOR_PYTHON.exists():
            create = ["uv", "venv", str(ANCHOR_VENV), "--python", "3.11"]
            subprocess.run(create, env=env, check=True)
        install = ["uv", "pip", "install", "-p", str(ANCHOR_PYTHON), requirement]
        subprocess.run(install, env=env, check=True)
    else:
        if not ANCHOR_PYTHON.exists():
            subprocess.run([sys.executable, "-m", "venv", str(ANCHOR_VENV)], check=True)
        subprocess.run([str(ANCHOR_PYTHON), "-m", "pip", "install", "-q", requirement], check=True)
    return ANCHOR_BIN


def schemux_params(socket: str) -> StdioServerParameters:
    # Not from the repository root: there `-m schemux` would import the bare source directory
    # schemux/ (first on sys.path), which lacks the installed package's generated/ and handlers/.
    # The audit log is written (its cost is in every figure) to /dev/null, not into the
    # person's own ~/.local/state.
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemux", "serve", "--socket-name", socket, "--audit-log", os.devnull],
        cwd=Path(__file__).resolve().parent,
    )


def anchor_params(socket: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(ensure_anchor()),
        env={
            "LIBTMUX_SOCKET": socket,
            "LIBTMUX_TOOLSETS": "inspect,manage,execute",
            # Like schemux, log warnings only: its default INFO logging (a rich-rendered line
            # per request) and start-up banner cost it a few ms and flood the terminal.
            "FASTMCP_SHOW_SERVER_BANNER": "false",
            "FASTMCP_LOG_LEVEL": "WARNING",
        },
    )


def check_result(label: str, result: Any) -> None:
    if result.is_error:
        text = " ".join(getattr(part, "text", "") for part in result.content)
        raise RuntimeError(f"{label}: run_command returned an error: {text}")
    payload = result.structured_content or {}
    if payload.get("exit_status") != 0:
        raise RuntimeError(f"{label}: run_command exit_status is not 0: {payload!r}")


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


def summary(seconds: list[float]) -> dict[str, float]:
    ms = [value * 1000 for value in seconds]
    p90 = statistics.quantiles(ms, n=10, method="inclusive")[8] if len(ms) > 1 else ms[0]
    return {
        "median_ms": statistics.median(ms),
        "p90_ms": p90,
        "min_ms": min(ms),
        "max_ms": max(ms),
        "n": len(ms),
    }


def machine_facts() -> dict[str, Any]:
    tmux_version = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    return {
        "tmux": tmux_version,
        "nproc": len(os.sched_getaffinity(0)),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "mcp": version("mcp"),
        "schemux": version("schemux"),
        "libtmux_mcp": ANCHOR_VERSION,
    }


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
    print(render(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
