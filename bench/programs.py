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

Usage: ``python bench/programs.py [--quick] [--json PATH] [--gate auto|perl|python]``
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
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

from bench.run_command import Tmux, machine_facts, schemux_params, summary
from bench.suite import find_server_pid, resident_mb
from schemux.terminal_text import terminal_text

PROGRAM_LIMIT_ENV = {"SCHEMUX_MAX_PROGRAMS": "64", "SCHEMUX_RETAINED_PROGRAMS": "64"}
LATENCY_PERIOD = 0.020
LATENCY_MAX_LINES = 10
READ_TIMEOUT_MS = 5000
TICK = os.sysconf("SC_CLK_TCK")

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


def structured(label: str, result: Any) -> dict[str, Any]:
    if result.is_error:
        text = " ".join(getattr(part, "text", "") for part in result.content)
        raise RuntimeError(f"{label}: error result: {text}")
    payload: dict[str, Any] = result.structured_content or {}
    return payload


def stdio_params(socket: str, gate: str) -> StdioServerParameters:
    params = schemux_params(socket)
    env = PROGRAM_LIMIT_ENV | {"SCHEMUX_PROGRAM_GATE": gate}
    return StdioServerParameters(command=params.command, args=params.args, cwd=params.cwd, env=env)


# 1. run_program round trip -----------------------------------------------------------------


async def time_run_program(client: Client, calls: int, warmup: int) -> list[float]:
    """Seconds per ``run_program {"argv": ["true"]}`` over the session."""
    timings: list[float] = []
    for index in range(warmup + calls):
        start = time.perf_counter()
        result = await client.call_tool("run_program", {"argv": ["true"]})
        elapsed = time.perf_counter() - start
        payload = structured("run_program", result)
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
    started = structured("start_program", await client.call_tool("start_program", {"argv": argv}))
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
        page = structured("read_program", result)
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
    from schemux.context import ToolContext
    from schemux.generated.bindings import BINDINGS
    from schemux.server import build_server

    context = ToolContext(Settings(socket_name=socket))
    try:
        async with Client(build_server(context, BINDINGS)) as client:
            return await measure_latency(client, lines, skip)
    finally:
        await context.close()


# 3. throughput -----------------------------------------------------------------------------

WORDS = [
    *["the", "build", "step", "compiled", "module", "warning", "error", "ok", "passed"],
    *["failed", "test", "cache", "layer", "downloading", "resolving", "packages", "x" * 40],
    *["déjà", "naïve", "café", "—", "✓", "✗", "→", "日本語", "ошибка", "😀", "e\u0301", "한국어"],
]
COLOURS = [
    *[b"\x1b[31m", b"\x1b[32m", b"\x1b[1;33m", b"\x1b[38;5;208m", b"\x1b[48;2;10;20;30m"],
    *[b"\x1b[0m", b"\x1b[m", b"\x1b[4m", b"\x1b[7m"],
]
MOVES = [
    *[b"\x1b[H", b"\x1b[12;1H", b"\x1b[3A", b"\x1b[2B", b"\x1b[10G", b"\x1b[5C", b"\x1b[K"],
    *[b"\x1b[2K", b"\x1b[J", b"\x1b7", b"\x1b8", b"\x1b(B", b"\x1b[?25l", b"\x1b[?25h"],
    *[b"\x1b]0;title\x07", b"\x1b]2;job \xe2\x9c\x93\x1b\\", b"\x1b[?1049h", b"\x1b[?1049l"],
]
ENDINGS = [b"\n", b"\r\n", b"\r\r\n", b"\r"]


def pieces(rng: random.Random, count: int) -> list[bytes]:
    """A pool of whole pieces of terminal output: no sequence is left open in any piece,
    and none asks the terminal anything (a query's answer would come back as input)."""
    pool: list[bytes] = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.10:  # a progress bar redrawn in place, with or without erase-line
            steps = rng.randint(3, 30)
            erase = rng.choice([b"", b"\x1b[K", b"\x1b[2K"])
            piece = b"".join(
                b"\r%s[%-20s] %3d%%" % (erase, b"#" * (20 * i // steps), 100 * i // steps)
                for i in range(steps + 1)
            )
            piece += rng.choice(ENDINGS)
        elif kind < 0.18:  # cursor moves, screen changes, titles
            piece = b"".join(rng.choice(MOVES) for _ in range(rng.randint(1, 4)))
            piece += rng.choice([b"", b"moved ", b"\xe2\x86\x92 "])
        else:  # a text line, a colour change every few words
            words: list[bytes] = []
            for n in range(rng.randint(1, 16)):
                if n % rng.randint(2, 4) == 0:
                    words.append(rng.choice(COLOURS))
                words.append(rng.choice(WORDS).encode() + b" ")
            piece = b"".join(words) + b"\x1b[0m" + rng.choice(ENDINGS)
        pool.append(piece)
    return pool


def write_program_files(directory: Path, programs: int, size: int) -> list[Path]:
    """One file of about ``size`` bytes per program, each from its own pool and order."""
    paths: list[Path] = []
    for number in range(programs):
        rng = random.Random(1000 + number)
        pool = pieces(rng, 4000)
        mean = sum(map(len, pool)) / len(pool)
        data = b"".join(rng.choices(pool, k=int(size / mean) + 1))[:size]
        # a cut piece may leave a sequence or a character open: end the file cleanly
        last_esc = data.rfind(b"\x1b", max(0, len(data) - 200))
        if last_esc >= 0:
            data = data[:last_esc]
        data += b"\x1b[0m end of program %d\r\n" % number
        path = directory / f"program-{number:02d}.out"
        path.write_bytes(data)
        paths.append(path)
    return paths


@dataclass
class Received:
    program: int
    program_id: str
    size: int = 0
    reads: int = 0
    outcome: str = ""
    exit_status: int | None = None
    output_complete: bool = False
    digest: str = ""


async def read_one(
    client: Client, number: int, path: Path, copies: Path, clock: list[float]
) -> Received:
    """Start ``cat PATH`` and read its text until ended, into ``copies/NUMBER.txt``."""
    started = structured(
        "start_program", await client.call_tool("start_program", {"argv": ["cat", str(path)]})
    )
    got = Received(number, started["programId"])
    digest = hashlib.sha256()
    cursor: int | None = None
    with (copies / f"{number:02d}.txt").open("w", encoding="utf-8", newline="") as copy:
        while True:
            arguments: dict[str, Any] = {"programId": got.program_id, "timeoutMs": READ_TIMEOUT_MS}
            if cursor is not None:
                arguments["cursor"] = cursor
            page = structured("read_program", await client.call_tool("read_program", arguments))
            got.reads += 1
            text: str = page["text"]
            data = text.encode()
            digest.update(data)
            got.size += len(data)
            copy.write(text)
            cursor = page["cursor"]
            if page["ended"]:
                got.outcome = page["outcome"]
                got.exit_status = page["exitStatus"]
                got.output_complete = page["outputComplete"]
                break
    got.digest = digest.hexdigest()
    clock.append(time.perf_counter())
    return got


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process so far, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def time_raw_throughput_floor(tmux: Tmux, paths: list[Path]) -> dict[str, Any]:
    """The same ``cat`` of every file, each in a gated window of its own with ``pipe-pane
    -O`` into ``cat > /dev/null``, driven by tmux CLI calls: what tmux alone takes to carry
    the bytes (it parses every one into its screens). Wall time from the first
    ``new-window`` to the last done channel."""
    tmux_pid = int(tmux.run("display-message", "-p", "#{pid}"))
    cpu_before = cpu_seconds(tmux_pid)
    start = time.perf_counter()
    for number, path in enumerate(paths):
        script = (
            f"tmux -L {tmux.name} wait-for {tmux.name}-tg-{number}; cat {path}; "
            f"tmux -L {tmux.name} wait-for -S {tmux.name}-td-{number}"
        )
        pane = tmux.run(
            "new-window", "-d", "-t", "bench:", "-P", "-F", "#{pane_id}", "sh", "-c", script
        ).strip()
        tmux.run(
            "pipe-pane", "-O", "-t", pane, "cat > /dev/null", ";",
            "wait-for", "-S", f"{tmux.name}-tg-{number}",
        )  # fmt: skip
    for number in range(len(paths)):
        tmux.run("wait-for", f"{tmux.name}-td-{number}", timeout=600)
    wall = time.perf_counter() - start
    written = sum(path.stat().st_size for path in paths)
    return {
        "wall_s": wall,
        "mb_per_s": written / 1e6 / wall,
        "tmux_cpu_s": cpu_seconds(tmux_pid) - cpu_before,
    }


def first_difference(expected: str, got: str) -> dict[str, Any]:
    at = next(
        (i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
        min(len(expected), len(got)),
    )
    return {
        "character_offset": at,
        "expected_length": len(expected),
        "got_length": len(got),
        "expected": expected[max(0, at - 40) : at + 40],
        "got": got[max(0, at - 40) : at + 40],
    }


async def measure_throughput(
    client: Client, pid: int, tmux_pid: int, paths: list[Path], copies: Path
) -> dict[str, Any]:
    references = {}
    for number, path in enumerate(paths):
        text = terminal_text(path.read_bytes()).encode()
        references[number] = (len(text), hashlib.sha256(text).hexdigest())
    written = sum(path.stat().st_size for path in paths)
    before = resident_mb(pid)
    peak = before
    done = asyncio.Event()

    async def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, resident_mb(pid))
            await asyncio.sleep(0.1)

    sampler = asyncio.ensure_future(sample())
    ends: list[float] = []
    cpu_before = cpu_seconds(pid), cpu_seconds(tmux_pid), own_cpu_seconds()
    start = time.perf_counter()
    results = await asyncio.gather(
        *(read_one(client, number, path, copies, ends) for number, path in enumerate(paths))
    )
    wall = time.perf_counter() - start
    cpu_after = cpu_seconds(pid), cpu_seconds(tmux_pid), own_cpu_seconds()
    spent = (b - a for a, b in zip(cpu_before, cpu_after, strict=True))
    cpu = dict(zip(("schemux_s", "tmux_s", "client_s"), spent, strict=True))
    done.set()
    await sampler
    after = resident_mb(pid)
    mismatches: list[dict[str, Any]] = []
    for got in results:
        size, digest = references[got.program]
        if (got.size, got.digest) == (size, digest):
            continue
        expected = terminal_text(paths[got.program].read_bytes())
        received = (copies / f"{got.program:02d}.txt").read_text(encoding="utf-8")
        mismatches.append(
            {
                "program": got.program,
                "program_id": got.program_id,
                "file": str(paths[got.program]),
                **first_difference(expected, received),
            }
        )
    return {
        "programs": len(paths),
        "written_bytes": written,
        "text_bytes": sum(got.size for got in results),
        "reads": sum(got.reads for got in results),
        "wall_s": wall,
        "first_done_s": min(ends) - start,
        "mb_per_s": written / 1e6 / wall,
        "exact": len(results) - len(mismatches),
        "mismatches": mismatches,
        "not_completed": [
            asdict(got)
            for got in results
            if got.outcome != "completed" or got.exit_status != 0 or not got.output_complete
        ],
        "cpu": cpu,
        "memory": {"before_mb": before, "peak_mb": peak, "after_mb": after},
    }


# the run -----------------------------------------------------------------------------------


async def measure(sizes: Sizes, tmux: Tmux, work: Path, gate: str) -> dict[str, Any]:
    tmux.start()
    params = stdio_params(tmux.name, gate)
    report: dict[str, Any] = {"machine": machine_facts(), "sizes": asdict(sizes), "gate": gate}
    del report["machine"]["libtmux_mcp"]
    files = work / "files"
    files.mkdir()
    copies = work / "copies"
    copies.mkdir()
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
        report["throughput"] = await measure_throughput(client, pid, tmux_pid, paths, copies)
    report["throughput_floor"] = time_raw_throughput_floor(tmux, paths)
    in_process = await measure_latency_in_process(
        tmux.name, sizes.latency_lines, sizes.latency_skip
    )
    report["latency"] = {"stdio": latency, "in_process": in_process}
    report["bar"] = [asdict(target) | {"verdict": target.verdict} for target in targets(report)]
    return report


@dataclass(frozen=True)
class Target:
    name: str
    value: float
    limit: float
    unit: str
    at_least: bool = False

    @property
    def verdict(self) -> str:
        met = self.value >= self.limit if self.at_least else self.value <= self.limit
        return "PASS" if met else "MISS"


def targets(report: dict[str, Any]) -> list[Target]:
    latency, throughput = report["latency"]["stdio"], report["throughput"]
    memory = throughput["memory"]
    programs = throughput["programs"]
    return [
        Target("wake-up latency median (stdio)", latency["median_ms"], 5.0, " ms"),
        Target("wake-up latency p99 (stdio)", latency["p99_ms"], 25.0, " ms"),
        Target(
            f"{programs} programs: aggregate throughput",
            throughput["mb_per_s"],
            30.0,
            " MB/s",
            at_least=True,
        ),
        Target(
            f"{programs} programs: texts byte-exact",
            throughput["exact"],
            programs,
            "",
            at_least=True,
        ),
        Target(
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
        f"program gate {report['gate']}",
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
        f"{sizes['program_bytes'] / 1e6:g} MB each, read_program until ended",
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
    for target in targets(report):
        value = f"{target.value:.2f}{target.unit}"
        limit = f"{'>=' if target.at_least else '<='} {target.limit:g}{target.unit}"
        lines.append(f"  {target.verdict:6}{target.name:40}{value:>14}  (target {limit})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    parser.add_argument(
        "--gate", choices=["auto", "perl", "python"], default="auto",
        help="the program gate schemux runs (SCHEMUX_PROGRAM_GATE)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    sizes = Sizes.quick() if args.quick else Sizes()
    tmux = Tmux(f"schemux-programs-{os.getpid()}")
    try:
        with tempfile.TemporaryDirectory(prefix="schemux-programs-") as work:
            report = asyncio.run(measure(sizes, tmux, Path(work), args.gate))
    finally:
        tmux.kill()
    print(render(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
