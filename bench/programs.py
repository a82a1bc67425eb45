"""Benchmark the program tools: run_program, read_program wake-ups, 50 programs at once.

One run starts a private tmux server (socket ``schemux-programs-<pid>``, never the default
server), kills it at the end with its socket file, and measures through one schemux stdio
server (``SCHEMUX_MAX_PROGRAMS=64``, ``SCHEMUX_RETAINED_PROGRAMS=64``):

1. ``run_program {"argv": ["true"]}`` round trip, against a raw tmux CLI floor doing the
   same steps by subprocess (a gated ``sh -c`` window, ``pipe-pane -O`` into a file, the
   gate's ``wait-for -S``, a ``wait-for`` on a channel the command signals at its end,
   ``kill-pane``, reading the file);
2. wake-up latency: a program prints ``t INDEX TIME_NS`` every 20 ms; a client loops
   ``read_program`` with the cursor; latency is the receive time minus the line's time,
   over stdio and in process (``mcp.Client`` on the ``Server`` object);
3. throughput: 50 programs at once (``start_program``), each ``cat`` of its own 4 MB file
   of text mixed with colour codes, cursor moves, CR progress lines, CR LF and UTF-8,
   read with ``read_program`` until ended; every text must equal
   ``terminal_text(file_bytes)``; aggregate MB/s (10^6 bytes written / wall time);
4. VmRSS of the stdio server before and after the throughput run.

Usage: ``python bench/programs.py [--quick] [--json PATH] [--gate auto|perl|python]
[--no-record] [--rounds N]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    Bar,
    Tmux,
    find_server_pid,
    machine_facts,
    publish,
    resident_mb,
    run,
    schemux_params,
    succeeded,
    summary,
)
from bench.program_throughput import (
    READ_TIMEOUT_MS,
    measure_throughput,
    time_raw_throughput_floor,
    write_program_files,
)

PROGRAM_LIMIT_ENV = {"SCHEMUX_MAX_PROGRAMS": "64", "SCHEMUX_RETAINED_PROGRAMS": "64"}
LATENCY_PERIOD = 0.020
LATENCY_MAX_LINES = 10
# The programs' bytes through schemux against the same cats carried by tmux alone (its
# server parses every byte, on one thread), measured in the same run: what bounds any
# client of tmux. It was an absolute 30 MB/s, out of reach of tmux alone on 2 cores.
THROUGHPUT_OF_TMUX_ALONE = 0.95  # issue 37's goal

# Prints "t INDEX TIME_NS" every PERIOD seconds on an absolute schedule (no drift), one
# write and flush per line, so each line leaves the program whole at the time it names.
LATENCY_PROGRAM = """\
import sys, time
count, period = int(sys.argv[1]), float(sys.argv[2])
start = time.monotonic()
for index in range(count):
    delay = start + index * period - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    sys.stdout.write(f"t {index} {time.time_ns()}\\n")
    sys.stdout.flush()
"""


@dataclass(frozen=True)
class Sizes:
    """How much of each measurement one run does."""

    calls: int = 100
    warmup: int = 5
    latency_lines: int = 300
    latency_skip: int = 10  # the first lines come while the program's Python settles
    programs: int = 50
    program_bytes: int = 4_000_000

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            calls=20,
            warmup=2,
            latency_lines=60,
            latency_skip=5,
            programs=10,
            program_bytes=500_000,
        )


def stdio_params(socket: str, gate: str, audit: Path, record: bool) -> StdioServerParameters:
    """The server of the run: its audit log in ``audit`` (a directory of the run's own),
    so that the recordings, made beside it, are real files of the run (beside
    ``/dev/null`` they would go into ``/dev``), and none with ``record`` False."""
    params = schemux_params(socket)
    env = (params.env or {}) | PROGRAM_LIMIT_ENV | {"SCHEMUX_PROGRAM_GATE": gate}
    args = list(params.args)
    args[args.index("--audit-log") + 1] = str(audit / "audit.log")
    if not record:
        args.append("--no-record")
    return StdioServerParameters(command=params.command, args=args, cwd=params.cwd, env=env)


# 1. run_program round trip -----------------------------------------------------------------


async def time_run_program(client: Client, calls: int, warmup: int) -> list[float]:
    """Seconds per ``run_program {"argv": ["true"]}`` over the session."""
    timings: list[float] = []
    for index in range(warmup + calls):
        start = time.perf_counter()
        result = await client.call_tool("run_program", {"argv": ["true"]})
        elapsed = time.perf_counter() - start
        payload = succeeded("run_program", result)
        if payload.get("outcome") != "completed" or payload.get("exitStatus") != 0:
            raise RuntimeError(f"run_program true: {payload!r}")
        if index >= warmup:
            timings.append(elapsed)
    return timings


def time_raw_program_floor(tmux: Tmux, work: Path, calls: int, warmup: int) -> list[float]:
    """Seconds per gated run of ``true`` driven by three tmux CLI subprocesses and a read.

    ``new-window -d -P`` a ``sh -c`` that waits on a gate channel, runs ``true`` and
    signals a done channel; ``pipe-pane -O`` into a file and open the gate in one tmux
    call; ``wait-for`` the done channel and ``kill-pane`` in one tmux call; read the file.
    """
    timings: list[float] = []
    for index in range(warmup + calls):
        gate, done = f"{tmux.name}-gate-{index}", f"{tmux.name}-done-{index}"
        copy = work / f"raw-{index}"
        copy.touch()
        script = (
            f"tmux -L {tmux.name} wait-for {gate}; true; tmux -L {tmux.name} wait-for -S {done}"
        )
        start = time.perf_counter()
        pane = tmux.run(
            "new-window", "-d", "-t", "bench:", "-P", "-F", "#{pane_id}", "sh", "-c", script
        ).strip()
        tmux.run("pipe-pane", "-O", "-t", pane, f"cat >> {copy}", ";", "wait-for", "-S", gate)
        # the pane may be gone by itself when kill-pane runs: its failure is no failure
        subprocess.run(
            ["tmux", "-L", tmux.name, "wait-for", done, ";", "kill-pane", "-t", pane],
            capture_output=True,
            check=False,
        )
        copy.read_bytes()
        elapsed = time.perf_counter() - start
        copy.unlink()
        if index >= warmup:
            timings.append(elapsed)
    return timings


# 2. wake-up latency ------------------------------------------------------------------------


async def measure_latency(client: Client, lines: int, skip: int) -> dict[str, Any]:
    """Receive time minus the time written in each line, for lines after the first ``skip``."""
    argv = [sys.executable, "-c", LATENCY_PROGRAM, str(lines), str(LATENCY_PERIOD)]
    started = succeeded("start_program", await client.call_tool("start_program", {"argv": argv}))
    program_id = started["programId"]
    cursor: int | None = None
    latencies: list[float] = []
    indices: list[int] = []
    reads = 0
    while True:
        arguments: dict[str, Any] = {
            "programId": program_id,
            "maxLines": LATENCY_MAX_LINES,
            "timeoutMs": READ_TIMEOUT_MS,
        }
        if cursor is not None:
            arguments["cursor"] = cursor
        result = await client.call_tool("read_program", arguments)
        received = time.time_ns()
        page = succeeded("read_program", result)
        reads += 1
        for line in page["text"].splitlines():
            fields = line.split()
            if len(fields) != 3 or fields[0] != "t":
                raise RuntimeError(f"latency program printed {line!r}")
            index = int(fields[1])
            indices.append(index)
            if index >= skip:
                latencies.append((received - int(fields[2])) / 1e6)
        cursor = page["cursor"]
        if page["ended"]:
            break
    if indices != list(range(lines)):
        raise RuntimeError(f"latency program: lines {indices[:5]}... of {lines} expected")
    return {
        "lines": len(latencies),
        "reads": reads,
        "median_ms": statistics.median(latencies),
        "p90_ms": percentile(latencies, 90),
        "p99_ms": percentile(latencies, 99),
        "min_ms": min(latencies),
        "max_ms": max(latencies),
    }


def percentile(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


async def measure_latency_in_process(socket: str, lines: int, skip: int) -> dict[str, Any]:
    from schemux.config import Settings
    from schemux.generated.bindings import BINDINGS
    from schemux.serving.server import build_server
    from schemux.serving.state import ServingState

    context = ServingState(Settings(socket_name=socket))
    try:
        async with Client(build_server(context, BINDINGS)) as client:
            return await measure_latency(client, lines, skip)
    finally:
        await context.close()


# 3. throughput: bench/program_throughput.py -------------------------------------------------
# the run -----------------------------------------------------------------------------------


async def measure(
    sizes: Sizes, tmux: Tmux, work: Path, gate: str, *, record: bool, rounds: int
) -> dict[str, Any]:
    tmux.start()
    audit = work / "audit"
    audit.mkdir(mode=0o700)
    params = stdio_params(tmux.name, gate, audit, record)
    report: dict[str, Any] = {
        "machine": machine_facts(), "sizes": asdict(sizes), "gate": gate, "recorded": record,
    }  # fmt: skip
    del report["machine"]["libtmux_mcp"]
    files = work / "files"
    files.mkdir()
    started = time.perf_counter()
    paths = write_program_files(files, sizes.programs, sizes.program_bytes)
    report["files_generated_s"] = time.perf_counter() - started

    async with Client(params) as client:
        await client.list_tools()
        pid = find_server_pid([params.command, *params.args])
        report["memory_at_start_mb"] = resident_mb(pid)
        run_program = await time_run_program(client, sizes.calls, sizes.warmup)
        floor = time_raw_program_floor(tmux, work, sizes.calls, sizes.warmup)
        report["run_program"] = {"schemux": summary(run_program), "raw_floor": summary(floor)}
        report["run_program"]["schemux_over_raw_floor"] = (
            report["run_program"]["schemux"]["median_ms"]
            / report["run_program"]["raw_floor"]["median_ms"]
        )
        latency = await measure_latency(client, sizes.latency_lines, sizes.latency_skip)
        tmux_pid = int(tmux.run("display-message", "-p", "#{pid}"))
        # tmux alone, then schemux, in turn: each ratio against the floor of its own
        # moment (a shared machine's load changes within a minute)
        measured = []
        for number in range(rounds):
            alone = time_raw_throughput_floor(tmux, paths) | {"load": os.getloadavg()[0]}
            copies = work / f"copies-{number}"
            copies.mkdir()
            throughput = await measure_throughput(client, pid, tmux_pid, paths, copies)
            throughput["load"] = os.getloadavg()[0]
            measured.append((throughput["mb_per_s"] / alone["mb_per_s"], throughput, alone))
    report["throughput_rounds"] = [
        {"ratio": ratio, "mb_per_s": throughput["mb_per_s"], "floor_mb_per_s": alone["mb_per_s"],
         "schemux_cpu_s": throughput["cpu"]["schemux_s"], "load": throughput["load"]}
        for ratio, throughput, alone in measured
    ]  # fmt: skip
    _, report["throughput"], report["throughput_floor"] = sorted(measured, key=lambda m: m[0])[
        (len(measured) - 1) // 2
    ]  # the round of the median ratio (the lower middle one of an even count)
    in_process = await measure_latency_in_process(
        tmux.name, sizes.latency_lines, sizes.latency_skip
    )
    report["latency"] = {"stdio": latency, "in_process": in_process}
    report["bar"] = [asdict(target) | {"verdict": target.verdict} for target in targets(report)]
    return report


def targets(report: dict[str, Any]) -> list[Bar]:
    latency, throughput = report["latency"]["stdio"], report["throughput"]
    memory = throughput["memory"]
    programs = throughput["programs"]
    alone = report["throughput_floor"]["mb_per_s"]
    return [
        Bar("wake-up latency median (stdio)", latency["median_ms"], 5.0, " ms"),
        Bar("wake-up latency p99 (stdio)", latency["p99_ms"], 5.0, " ms"),
        Bar(
            f"{programs} programs: throughput / tmux alone",
            throughput["mb_per_s"] / alone,
            THROUGHPUT_OF_TMUX_ALONE,
            at_least=True,
        ),
        Bar(
            f"{programs} programs: texts byte-exact",
            throughput["exact"],
            programs,
            "",
            at_least=True,
        ),
        Bar(
            f"memory growth over {programs} programs",
            memory["after_mb"] - memory["before_mb"],
            30.0,
            " MB",
        ),
    ]


def render(report: dict[str, Any]) -> str:
    facts, sizes = report["machine"], report["sizes"]
    calls, latency, throughput = report["run_program"], report["latency"], report["throughput"]
    memory, cpu, floor = throughput["memory"], throughput["cpu"], report["throughput_floor"]
    head = f"  {'':40}{'median ms':>10}{'p90 ms':>10}{'min ms':>10}{'max ms':>10}"

    def row(label: str, figures: dict[str, Any]) -> str:
        return (
            f"  {label:40}{figures['median_ms']:10.3f}{figures['p90_ms']:10.3f}"
            f"{figures['min_ms']:10.3f}{figures['max_ms']:10.3f}"
        )

    def latency_row(label: str, figures: dict[str, Any]) -> str:
        return (
            f"  {label:40}{figures['median_ms']:10.2f}{figures['p90_ms']:10.2f}"
            f"{figures['p99_ms']:10.2f}{figures['max_ms']:10.2f}{figures['reads']:8d}"
        )

    lines = [
        f"{facts['tmux']}, nproc {facts['nproc']}, Python {facts['python']}, "
        f"Linux {facts['kernel']}, mcp {facts['mcp']}, schemux {facts['schemux']}, "
        f"program gate {report['gate']}, "
        f"{'programs recorded' if report['recorded'] else 'no recordings (--no-record)'}",
        "",
        f'1. run_program {{"argv": ["true"]}}, {sizes["calls"]} timed calls after '
        f"{sizes['warmup']} warm-up",
        head,
        row("schemux (stdio)", calls["schemux"]),
        row("raw tmux floor (CLI subprocesses)", calls["raw_floor"]),
        f"  {'schemux / raw floor (median)':40}{calls['schemux_over_raw_floor']:10.2f}",
        "",
        f"2. wake-up latency: a line every {LATENCY_PERIOD * 1000:g} ms, "
        f"{latency['stdio']['lines']} lines timed (first {sizes['latency_skip']} left out), "
        f"read_program maxLines {LATENCY_MAX_LINES}",
        f"  {'':40}{'median ms':>10}{'p90 ms':>10}{'p99 ms':>10}{'max ms':>10}{'reads':>8}",
        latency_row("stdio", latency["stdio"]),
        latency_row("in process", latency["in_process"]),
        "",
        f"3. {throughput['programs']} programs at once, cat of "
        f"{sizes['program_bytes'] / 1e6:g} MB each, read_program until ended; "
        f"the round of the median ratio of {len(report['throughput_rounds'])}",
        f"  {'written (MB)':40}{throughput['written_bytes'] / 1e6:10.1f}",
        f"  {'text read (MB)':40}{throughput['text_bytes'] / 1e6:10.1f}",
        f"  {'read_program calls':40}{throughput['reads']:10d}",
        f"  {'first program read to its end (s)':40}{throughput['first_done_s']:10.2f}",
        f"  {'wall time, all read to the end (s)':40}{throughput['wall_s']:10.2f}",
        f"  {'aggregate throughput (MB/s)':40}{throughput['mb_per_s']:10.1f}",
        f"  {'CPU s: schemux server, tmux, client':40}{cpu['schemux_s']:10.1f}"
        f"{cpu['tmux_s']:10.1f}{cpu['client_s']:10.1f}",
        f"  {'tmux alone: same cats, pipe-pane to null':40}",
        f"  {'  wall time (s), MB/s, tmux CPU s':40}{floor['wall_s']:10.2f}"
        f"{floor['mb_per_s']:10.1f}{floor['tmux_cpu_s']:10.1f}",
        f"  {'schemux / tmux alone (MB/s)':40}{throughput['mb_per_s'] / floor['mb_per_s']:10.2f}",
        f"  {'each round: ratio, MB/s, alone, load':40}",
        *(
            f"  {'':40}{each['ratio']:10.2f}{each['mb_per_s']:10.1f}"
            f"{each['floor_mb_per_s']:10.1f}{each['load']:10.1f}"
            for each in report["throughput_rounds"]
        ),
        f"  {'texts equal to terminal_text(file)':40}"
        f"{throughput['exact']:>6d} of {throughput['programs']}",
        f"  {'not completed, exit 0, outputComplete':40}{len(throughput['not_completed']):10d}",
    ]
    for mismatch in throughput["mismatches"]:
        lines.append(
            f"    program {mismatch['program']} ({mismatch['program_id']}): first difference "
            f"at character {mismatch['character_offset']} (lengths: expected "
            f"{mismatch['expected_length']}, got {mismatch['got_length']})"
        )
        lines.append(f"      expected {mismatch['expected']!r}")
        lines.append(f"      got      {mismatch['got']!r}")
    lines += [
        "",
        "4. schemux server VmRSS (MB)",
        f"  {'after tools/list':40}{report['memory_at_start_mb']:10.1f}",
        f"  {'before the throughput run':40}{memory['before_mb']:10.1f}",
        f"  {'peak during it (sampled every 0.1 s)':40}{memory['peak_mb']:10.1f}",
        f"  {'after it':40}{memory['after_mb']:10.1f}",
        f"  {'growth':40}{memory['after_mb'] - memory['before_mb']:+10.1f}",
        "",
        "bar",
    ]
    lines += [target.line() for target in targets(report)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    parser.add_argument(
        "--gate", choices=["auto", "perl", "python"], default="auto",
        help="the program gate schemux runs (SCHEMUX_PROGRAM_GATE)",
    )  # fmt: skip
    parser.add_argument(
        "--no-record", action="store_true", help="the server records no program (--no-record)"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, metavar="N",
        help="throughput rounds, each tmux alone then schemux (default 1)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    sizes = Sizes.quick() if args.quick else Sizes()
    tmux = Tmux(f"schemux-programs-{os.getpid()}")
    try:
        with tempfile.TemporaryDirectory(prefix="schemux-programs-") as work:
            report = asyncio.run(
                measure(
                    sizes, tmux, Path(work), args.gate,
                    record=not args.no_record, rounds=args.rounds,
                )
            )  # fmt: skip
    finally:
        tmux.kill()
    return publish(render(report), report, args.json, targets(report))


if __name__ == "__main__":
    run(main)
