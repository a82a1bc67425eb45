"""The program tools' throughput, section 3 of ``bench/programs.py``: many programs at
once, each a ``cat`` of its own file of mixed terminal text, read with ``read_program``
until ended; every text checked against ``text.terminal`` of the file's bytes; and the
same ``cat`` driven by tmux CLI calls alone, as the floor."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcp import Client

from bench.common import Tmux, cpu_seconds, resident_mb, succeeded
from schemux.text.terminal import terminal_text

READ_TIMEOUT_MS = 5000


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
    started = succeeded(
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
            page = succeeded("read_program", await client.call_tool("read_program", arguments))
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


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


FLOOR_SESSION = "floor"


def time_raw_throughput_floor(tmux: Tmux, paths: list[Path]) -> dict[str, Any]:
    """The same ``cat`` of every file, each in a gated window of its own with ``pipe-pane
    -O`` into ``cat > /dev/null``, driven by tmux CLI calls: what tmux alone takes to carry
    the bytes (it parses every one into its screens). The windows are 80x24, as schemux's
    program windows are (a narrower pane wraps and scrolls more: more of tmux's work),
    in a session of their own. Wall time from the first ``new-window`` to the last done
    channel."""
    tmux_pid = int(tmux.run("display-message", "-p", "#{pid}"))
    if FLOOR_SESSION not in tmux.run("list-sessions", "-F", "#{session_name}").split():
        tmux.run("new-session", "-d", "-s", FLOOR_SESSION, "-x", "80", "-y", "24")
    cpu_before = cpu_seconds(tmux_pid).own
    start = time.perf_counter()
    for number, path in enumerate(paths):
        script = (
            f"tmux -L {tmux.name} wait-for {tmux.name}-tg-{number}; cat {path}; "
            f"tmux -L {tmux.name} wait-for -S {tmux.name}-td-{number}"
        )
        pane = tmux.run(
            "new-window", "-d", "-t", f"{FLOOR_SESSION}:", "-P", "-F", "#{pane_id}",
            "sh", "-c", script,
        ).strip()  # fmt: skip
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
        "tmux_cpu_s": cpu_seconds(tmux_pid).own - cpu_before,
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
    cpu_before = cpu_seconds(pid).own, cpu_seconds(tmux_pid).own, own_cpu_seconds()
    start = time.perf_counter()
    results = await asyncio.gather(
        *(read_one(client, number, path, copies, ends) for number, path in enumerate(paths))
    )
    wall = time.perf_counter() - start
    cpu_after = cpu_seconds(pid).own, cpu_seconds(tmux_pid).own, own_cpu_seconds()
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
