"""What a policy file (``--policy``) and ``--mask-secrets`` cost a call: the same calls
with neither, under a policy of rules that match nothing, and with secrets masked,
interleaved.

It starts a private tmux server (socket ``schemux-bench-policy-<pid>``, never the default
server) and kills it at the end. Three servers run in this process over the ``mcp``
client's in-memory transport, none auditing: **off** (no policy: what every user who
sets none gets), **policy** (``write_scope = "agent"`` and ``RULE_COUNT`` rules that
match none of the calls, so every rule is tried against every command a shell would run
of the call's text) and **mask** (``--mask-secrets``: every result's text masked). Each
round times a batch of calls on each, the order rotated every round, for:

- **refused**: ``run_command {"command": 5}``, refused by the inputSchema before any tmux
  work: the cheapest call, where any cost shows most;
- **tmux_snapshot**: a real call, one tmux round trip (no command: the rules are not
  tried);
- **run_command**: ``echo`` in the agent's pane: parsed by the bash grammar and matched
  against every rule, its pane checked against the write scope and for a person watching.

Figures: the median per call, and each mode against **off**. Bar: **off** is today's
code path (the policy's only cost there is two attribute reads): ``policy / off`` at
most 1.25 for ``run_command``. Every call's result is checked (exit status 2 on a
failure); a missed bar is exit 1.

Usage: ``python bench/policy.py [--rounds N] [--calls N] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Bar, per_call, publish, run
from schemux.config import Settings
from schemux.generated.bindings import BINDINGS
from schemux.names import socket_directory
from schemux.policy.rules import Policy, Rule
from schemux.serving.server import build_server
from schemux.serving.state import ServingState

RULE_COUNT = 20
MODES = ("off", "policy", "mask")
CALLS: dict[str, dict[str, Any]] = {
    "refused": {"name": "run_command", "arguments": {"command": 5}, "refused": True},
    "tmux_snapshot": {"name": "tmux_snapshot", "arguments": {}, "refused": False},
    "run_command": {
        "name": "run_command",
        "arguments": {"command": "echo bench | cat && true", "timeout": 10},
        "refused": False,
    },
}
BAR = 1.25


def policy() -> Policy:
    """Rules that match none of the calls: each is tried against every command."""
    rules = tuple(
        Rule(re.compile(rf"^never-{number}\b"), "deny", line=number) for number in range(RULE_COUNT)
    )
    return Policy(path="(bench)", write_scope="agent", watched="ask", rules=rules)


@asynccontextmanager
async def served(socket: str, mode: str) -> AsyncIterator[Client]:
    settings = Settings(
        socket_name=socket,
        policy=policy() if mode == "policy" else None,
        mask_secrets=mode == "mask",
    )
    context = ServingState(settings)
    try:
        async with Client(build_server(context, BINDINGS)) as client:
            yield client
    finally:
        await context.close()


async def measure(socket: str, rounds: int, calls: int) -> dict[str, Any]:
    times: dict[str, dict[str, list[float]]] = {
        name: {mode: [] for mode in MODES} for name in CALLS
    }
    async with (
        served(socket, "off") as off,
        served(socket, "policy") as governed,
        served(socket, "mask") as masking,
    ):
        clients = {"off": off, "policy": governed, "mask": masking}
        for name, call in CALLS.items():
            for client in clients.values():
                await per_call(client, call, max(5, calls // 10))  # warm-up
            for number in range(rounds):
                order = MODES[number % 3 :] + MODES[: number % 3]
                for mode in order:
                    times[name][mode].append(await per_call(clients[mode], call, calls))
    report: dict[str, Any] = {"rounds": rounds, "calls_per_round": calls, "rules": RULE_COUNT}
    for name, measured in times.items():
        figures = {f"{mode}_ms": statistics.median(measured[mode]) * 1000 for mode in MODES}
        for mode in MODES[1:]:
            figures[f"{mode}_vs_off"] = figures[f"{mode}_ms"] / figures["off_ms"]
        report[name] = figures
    return report


def render(report: dict[str, Any], rounds: int, calls: int) -> str:
    lines = [f"policy and masking cost, {rounds} rounds of {calls} calls, in process"]
    for name in CALLS:
        figures = report[name]
        lines.append(
            f"  {name:<14} off {figures['off_ms']:7.3f} ms  policy {figures['policy_ms']:7.3f} ms"
            f" ({figures['policy_vs_off']:.2f}x)  mask {figures['mask_ms']:7.3f} ms"
            f" ({figures['mask_vs_off']:.2f}x)"
        )
    lines.append("bar")
    lines.append(bar(report).line())
    return "\n".join(lines)


def bar(report: dict[str, Any]) -> Bar:
    return Bar("run_command policy / off", report["run_command"]["policy_vs_off"], BAR)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    socket = f"schemux-bench-policy-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    try:
        report = asyncio.run(measure(socket, options.rounds, options.calls))
    finally:
        socket_file = os.path.join(socket_directory(), socket)
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)
        Path(socket_file).unlink(missing_ok=True)  # tmux 3.3a leaves it behind
    text = render(report, options.rounds, options.calls)
    return publish(text, report, options.json, [bar(report)])


if __name__ == "__main__":
    run(main)
