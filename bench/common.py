"""What the benchmarks share: a private tmux server with a bare bash pane, the servers
they compare (schemux over stdio, the anchor libtmux-mcp in a venv of its own), the
figures (a summary of timings, the machine's facts, and how every script ends: printed,
written as JSON, and judged by its bars into an exit status), the check that a call
succeeded, and a process's CPU time and memory as /proc tells them."""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

from tests.process_table import processes

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
TICK = os.sysconf("SC_CLK_TCK")


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


def tmux_directory() -> dict[str, str]:
    """TMUX_TMPDIR, when this process has one: the ``mcp`` client hands a server only a
    few variables of its own, and a server without it finds another tmux directory
    (and starts a server of the same name there)."""
    found = os.environ.get("TMUX_TMPDIR")
    return {"TMUX_TMPDIR": found} if found else {}


def schemux_params(socket: str) -> StdioServerParameters:
    # Not from the repository root: there `-m schemux` would import the bare source directory
    # schemux/ (first on sys.path), which lacks the installed package's generated/ and handlers/.
    # The audit log is written (its cost is in every figure) to /dev/null, not into the
    # person's own ~/.local/state.
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemux", "serve", "--socket-name", socket, "--audit-log", os.devnull],
        cwd=Path(__file__).resolve().parent,
        env=tmux_directory(),
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
            **tmux_directory(),
        },
    )


class CallFailed(RuntimeError):
    """A call a benchmark times or relies on returned an error: its figures would time a
    failure, so the run stops and says which call failed and what it said (``run``)."""


def error_text(result: CallToolResult) -> str:
    """The text of a call's result, as its content blocks give it."""
    return " ".join(getattr(part, "text", "") for part in result.content).strip()


def succeeded(label: str, result: CallToolResult) -> dict[str, Any]:
    """The structured content of ``result``, the result of the call ``label`` names;
    ``CallFailed`` with the error's text when it is an error result."""
    if result.is_error:
        raise CallFailed(f"{label} failed: {error_text(result) or '(an error with no text)'}")
    payload = result.structured_content
    return payload if isinstance(payload, dict) else {}


async def per_call(client: Client, call: Mapping[str, Any], count: int) -> float:
    """Seconds a call of ``call`` (``name``, ``arguments``, ``refused``) takes, the mean
    of ``count`` made one after another; each result checked after the clock stops."""
    results = []
    started = time.perf_counter()
    for _ in range(count):
        results.append(await client.call_tool(call["name"], call["arguments"]))
    elapsed = time.perf_counter() - started
    for result in results:  # after the clock: a failure stops the run, timed or not
        checked(call, result)
    return elapsed / count


def checked(call: Mapping[str, Any], result: CallToolResult) -> None:
    """The call came back as it must: refused by its inputSchema, or succeeded."""
    if not call["refused"]:
        succeeded(call["name"], result)
    elif not result.is_error or not error_text(result).startswith("Invalid arguments"):
        said = error_text(result)
        raise CallFailed(f"{call['name']} {call['arguments']} was not refused: {said}")


def check_result(label: str, result: CallToolResult) -> None:
    """A ``run_command`` of ``true``: it succeeded and its command exited 0."""
    payload = succeeded(f"{label}: run_command", result)
    if payload.get("exit_status") != 0:
        raise CallFailed(f"{label}: run_command exit_status is not 0: {payload!r}")


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


@dataclass(frozen=True)
class Bar:
    """One target a benchmark judges: ``value`` at most ``limit`` (at least, with
    ``at_least``); ``value`` None when this run did not measure it (SKIP)."""

    name: str
    value: float | None
    limit: float
    unit: str = "x"
    at_least: bool = False

    @property
    def verdict(self) -> str:
        if self.value is None:
            return "SKIP"
        met = self.value >= self.limit if self.at_least else self.value <= self.limit
        return "PASS" if met else "MISS"

    def line(self, width: int = 40) -> str:
        """The bar as its table prints it: verdict, name, value and target."""
        value = "n/a" if self.value is None else f"{self.value:.2f}{self.unit}"
        limit = f"{'>=' if self.at_least else '<='} {self.limit:g}{self.unit}"
        return f"  {self.verdict:6}{self.name:{width}}{value:>14}  (target {limit})"


def publish(
    text: str, report: Mapping[str, Any], json_path: Path | None, bars: Iterable[Bar] = ()
) -> int:
    """How every benchmark ends: its figures printed as a person reads them, all of them
    written as JSON to ``json_path`` when one was given (``--json``), and its exit
    status: 1 when any of ``bars`` is missed (named on stderr), else 0."""
    print(text)
    bars = list(bars)
    if json_path is not None:
        # the bars judged too, as bench/benchmarks_page.py tabulates them
        judged = [asdict(bar) | {"verdict": bar.verdict} for bar in bars]
        json_path.write_text(json.dumps({**report, "bars": judged}, indent=2) + "\n", "utf-8")
    missed = [bar.name for bar in bars if bar.verdict == "MISS"]
    if missed:
        print(f"missed: {'; '.join(missed)}", file=sys.stderr)
        return 1
    return 0


def run(main: Callable[[], int]) -> NoReturn:
    """Exit with ``main``'s status (0 every bar met, 1 one missed), or 2 with the failed
    call named on stderr when a call failed (``CallFailed``, also inside the exception
    groups of the ``mcp`` client's task groups), rather than a figure that timed it."""
    try:
        status = main()
    except CallFailed as failure:
        status = failed(failure)
    except BaseExceptionGroup as group:
        calls, others = group.split(CallFailed)
        if calls is None or others is not None:
            raise
        status = failed(*leaves(calls))
    sys.exit(status)


def failed(*failures: BaseException) -> int:
    for failure in failures:
        print(f"{Path(sys.argv[0]).name}: FAILED: {failure}", file=sys.stderr)
    return 2


def leaves(group: BaseExceptionGroup[Any]) -> list[BaseException]:
    """The exceptions a group holds, its nested groups opened."""
    found: list[BaseException] = []
    for inner in group.exceptions:
        found += leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner]
    return found


def find_server_pid(argv: list[str]) -> int:
    """The pid of our child process whose command line is exactly ``argv``."""
    wanted = tuple(word.encode() for word in argv)
    found = [
        process.pid
        for process in processes()
        if process.ppid == os.getpid() and process.argv == wanted
    ]
    if len(found) != 1:
        raise RuntimeError(f"expected one server process {argv}, found {found}")
    return found[0]


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024  # kB
    raise RuntimeError(f"no VmRSS for pid {pid}")


class CpuSeconds(NamedTuple):
    own: float  # user and system, the process's own
    reaped_children: float  # user and system of the children it has waited for


def cpu_seconds(pid: int) -> CpuSeconds:
    """A process's CPU seconds so far, from /proc/PID/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return CpuSeconds((utime + stime) / TICK, (cutime + cstime) / TICK)


def children_cpu_seconds(parent: int) -> float:
    """CPU seconds so far of the children of ``parent`` (those gone meanwhile left out)."""
    total = 0.0
    for child in processes():
        if child.ppid == parent:
            try:
                total += cpu_seconds(child.pid).own
            except (OSError, ValueError):
                continue
    return total
