"""Benchmark ``run_command {"command": "true"}`` over ssh against the same call locally and
against the per-command ``ssh HOST tmux ...`` approach, in one run.

It starts Debian's sshd on 127.0.0.1 with throwaway keys (``tests.ssh_server``, the test
suite's fixture) and a private tmux server, then measures:

* **local**: ``schemux serve --socket-name NAME`` over stdio (the ``mcp`` client);
* **ssh**: ``schemux serve --socket-name NAME --ssh schemux-test --ssh-config FILE`` over
  stdio: a tmux server started over ssh (in the sshd's pid namespace, as a remote host's
  is: its shells' facts read there), reached over one multiplexed OpenSSH connection to
  loopback;
* **per-command ssh**: the run-and-wait driven by hand with one ``ssh HOST tmux ...``
  process per tmux command (``send-keys -l``, ``send-keys Enter``, ``wait-for``), no
  connection sharing: what a tool that shells out to ssh for every tmux command pays.

Bars: ssh / local at most 1.5; ssh / per-command ssh at most 0.2 (medians).

Then **50 quick programs at once**: 50 ``run_program`` calls in flight together (each
``seq 1 N; exit K`` with its own N and K), over ssh and locally, rounds alternating;
every byte of every output and every exit status is checked (bar: all right over ssh),
and the wall time of a round is reported for both.

Exit status 1 when a bar is missed, 2 when a timed call returned an error (or sshd is
missing).

Usage: ``python bench/ssh.py [--calls N] [--baseline-calls M] [--burst-rounds R] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    COMMAND,
    Bar,
    Tmux,
    check_result,
    machine_facts,
    publish,
    run,
    schemux_params,
    summary,
)
from tests.ssh_server import ALIAS, SshServer, available, remote_tmux_server, ssh_server

LOCAL_BAR = 1.5
BASELINE_BAR = 0.2


def ssh_params(socket: str, server: SshServer) -> StdioServerParameters:
    local = schemux_params(socket)
    return StdioServerParameters(
        command=local.command,
        args=[*local.args, "--ssh", ALIAS, "--ssh-config", str(server.config)],
        cwd=local.cwd,
        env=local.env,
    )


def time_per_command_ssh(
    server: SshServer, tmux: Tmux, pane: str, calls: int, warmup: int
) -> list[float]:
    """Seconds per run-and-wait with a fresh ``ssh HOST tmux ...`` for each tmux command."""

    def remote_tmux(*args: str) -> None:
        # every word quoted for the remote shell, as such a tool must do
        remote = shlex.join(["tmux", "-L", tmux.name, *args])
        subprocess.run(
            ["ssh", "-F", str(server.config), "-o", "BatchMode=yes", ALIAS, remote],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
            timeout=30,
        )

    timings: list[float] = []
    for index in range(warmup + calls):
        channel = f"{tmux.name}-ssh-{index}"
        start = time.perf_counter()
        remote_tmux("send-keys", "-t", pane, "-l", f" true; tmux wait-for -S {channel}")
        remote_tmux("send-keys", "-t", pane, "Enter")
        remote_tmux("wait-for", channel)
        elapsed = time.perf_counter() - start
        if index >= warmup:
            timings.append(elapsed)
    return timings


async def time_interleaved(
    local: StdioServerParameters,
    local_pane: str,
    remote: StdioServerParameters,
    remote_pane: str,
    calls: int,
    warmup: int,
) -> tuple[list[float], list[float]]:
    """Seconds per call of each server, their calls alternating, so that the load of a
    shared machine weighs on both alike."""
    timings: tuple[list[float], list[float]] = ([], [])
    async with Client(local) as local_client, Client(remote) as remote_client:
        for index in range(warmup + calls):
            for label, client, pane, kept in [
                ("local", local_client, local_pane, timings[0]),
                ("ssh", remote_client, remote_pane, timings[1]),
            ]:
                start = time.perf_counter()
                result = await client.call_tool("run_command", {**COMMAND, "pane_id": pane})
                elapsed = time.perf_counter() - start
                check_result(label, result)
                if index >= warmup:
                    kept.append(elapsed)
    return timings


BURST = 50


async def program_burst(client: Client) -> tuple[float, list[str]]:
    """Seconds for BURST run_program calls at once, and what was wrong in their results."""
    wrong: list[str] = []

    async def one(number: int) -> None:
        lines = number * 40
        result = await client.call_tool(
            "run_program",
            {"argv": ["sh", "-c", f"seq 1 {lines}; exit {number % 7}"], "timeoutMs": 60_000},
        )
        got = result.structured_content or {}
        expected = "\n".join(str(n) for n in range(1, lines + 1))
        if result.is_error:
            said = getattr(result.content[0], "text", "") if result.content else ""
            wrong.append(f"program {number}: failed: {said[:200]}")
        elif got.get("output") != expected:
            wrong.append(f"program {number}: output differs")
        elif got.get("exitStatus") != number % 7 or got.get("outputComplete") is not True:
            wrong.append(f"program {number}: status {got.get('exitStatus')}, {got}")

    start = time.perf_counter()
    await asyncio.gather(*(one(number) for number in range(1, BURST + 1)))
    return time.perf_counter() - start, wrong


def with_room(params: StdioServerParameters) -> StdioServerParameters:
    """``params`` with room for BURST programs running at once (the default is 16)."""
    env = {
        **os.environ,
        "SCHEMUX_MAX_PROGRAMS": str(BURST),
        "SCHEMUX_RETAINED_PROGRAMS": str(BURST),
    }
    return StdioServerParameters(command=params.command, args=params.args, cwd=params.cwd, env=env)


async def time_bursts(
    local: StdioServerParameters, remote: StdioServerParameters, rounds: int
) -> dict[str, Any]:
    """BURST quick programs at once, over ssh and locally, rounds alternating (one round
    each first, untimed, starts the helper and warms both)."""
    local, remote = with_room(local), with_room(remote)
    seconds: dict[str, list[float]] = {"local": [], "ssh": []}
    wrong: dict[str, list[str]] = {"local": [], "ssh": []}
    async with Client(local) as local_client, Client(remote) as remote_client:
        for index in range(rounds + 1):
            for label, client in [("local", local_client), ("ssh", remote_client)]:
                elapsed, errors = await program_burst(client)
                wrong[label] += errors
                if index > 0:
                    seconds[label].append(elapsed)
    local_s, ssh_s = statistics.median(seconds["local"]), statistics.median(seconds["ssh"])
    return {
        "programs": BURST,
        "rounds": rounds,
        "local_round_s": local_s,
        "ssh_round_s": ssh_s,
        "ssh_over_local": ssh_s / local_s,
        "local_wrong": wrong["local"][:10],
        "ssh_wrong": wrong["ssh"][:10],
        "wrong": len(wrong["local"]) + len(wrong["ssh"]),
    }


async def measure(
    args: argparse.Namespace, server: SshServer, tmux: Tmux, remote: Tmux
) -> dict[str, Any]:
    local_pane = tmux.start()
    # over ssh, a server started on the host (by ssh: in the sshd's pid namespace, as a
    # remote host's server is), whose shells the host's helper can see
    ssh_pane = remote.start()
    baseline_pane = tmux.new_pane()
    local, over_ssh = await time_interleaved(
        schemux_params(tmux.name),
        local_pane,
        ssh_params(remote.name, server),
        ssh_pane,
        args.calls,
        args.warmup,
    )
    baseline = time_per_command_ssh(server, tmux, baseline_pane, args.baseline_calls, 2)
    bursts = await time_bursts(
        schemux_params(tmux.name), ssh_params(remote.name, server), args.burst_rounds
    )
    local_ms = statistics.median(local) * 1000
    ssh_ms = statistics.median(over_ssh) * 1000
    baseline_ms = statistics.median(baseline) * 1000
    return {
        "machine": machine_facts(),
        "calls": args.calls,
        "baseline_calls": args.baseline_calls,
        "local": summary(local),
        "ssh": summary(over_ssh),
        "per_command_ssh": summary(baseline),
        "ssh_over_local": ssh_ms / local_ms,
        "ssh_over_per_command_ssh": ssh_ms / baseline_ms,
        "program_burst": bursts,
    }


def bars(report: dict[str, Any]) -> list[Bar]:
    burst = report["program_burst"]
    return [
        Bar("ssh / local", report["ssh_over_local"], LOCAL_BAR),
        Bar("ssh / per-command ssh", report["ssh_over_per_command_ssh"], BASELINE_BAR),
        Bar(f"{burst['programs']} programs: results not right", burst["wrong"], 0, ""),
    ]


def render(report: dict[str, Any]) -> str:
    lines = ["run_command {'command': 'true'}: median / p90 ms per call"]
    for key, label in [
        ("local", "schemux, local (stdio)"),
        ("ssh", "schemux over ssh to loopback (stdio)"),
        ("per_command_ssh", "per-command `ssh host tmux ...`"),
    ]:
        figures = report[key]
        lines.append(f"  {label:<40} {figures['median_ms']:8.2f} {figures['p90_ms']:8.2f}")
    lines.append(f"  ssh / local            {report['ssh_over_local']:6.2f}")
    lines.append(f"  ssh / per-command ssh  {report['ssh_over_per_command_ssh']:6.3f}")
    burst = report["program_burst"]
    lines.append(
        f"{burst['programs']} quick programs at once (run_program), median of "
        f"{burst['rounds']} rounds: local {burst['local_round_s'] * 1000:.0f} ms, "
        f"ssh {burst['ssh_round_s'] * 1000:.0f} ms (ssh / local {burst['ssh_over_local']:.2f})"
    )
    for problem in burst["ssh_wrong"] + burst["local_wrong"]:
        lines.append(f"    {problem}")
    lines += ["bar", *(bar.line() for bar in bars(report))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--baseline-calls", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--burst-rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    problem = available()
    if problem is not None:
        print(f"bench/ssh.py: {problem}", file=sys.stderr)
        return 2
    tmux = Tmux(f"schemux-bench-ssh-{os.getpid()}")
    remote_name = f"schemux-bench-ssh-remote-{os.getpid()}"
    with ssh_server() as server, remote_tmux_server(server.config, remote_name):
        try:
            report = asyncio.run(measure(args, server, tmux, Tmux(remote_name)))
        finally:
            tmux.kill()
    return publish(render(report), report, args.json, bars(report))


if __name__ == "__main__":
    run(main)
