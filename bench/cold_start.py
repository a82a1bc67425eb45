"""Cold start of schemux against the interpreter's own: ``schemux tools`` and a stdio server.

For each installation given (an interpreter with schemux installed; by default this
one), three figures, each from spawning the process:

* **floor**: ``python -c pass``, the interpreter's start with the installation's site;
* **tools**: ``schemux tools`` until it exits (imports, settings, the tool documents
  read and listed);
* **serve**: ``schemux serve`` until its answer to ``tools/list``, through the official
  ``mcp`` client over stdio (process start, imports, protocol negotiation, listing).

Each figure is taken as wall time and as the CPU time (user + system) of the processes,
which the load of a shared machine moves far less. The runs are interleaved (one of each
figure of each installation per round, the order reversed every other round), so a
change of load falls on all alike; each figure is the median of ``--runs``. The ratios
are against the floor of the same installation, and, with several installations, each
one's against the first's.

Usage: ``python bench/cold_start.py [--runs N] [--python LABEL=PATH ...] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import publish, summary

FIGURES = ("floor", "tools", "serve")
MEASURES = {
    "wall": "wall time, spawn to exit or to the tools/list answer",
    "cpu": "CPU time of the processes (user + system)",
}
# Never the repository root: there ``-m schemux`` would import the bare source folder.
WORKDIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Installation:
    """An interpreter with schemux installed, and its ``schemux`` console script."""

    label: str
    python: Path

    @property
    def schemux(self) -> list[str]:
        script = self.python.parent / "schemux"
        return [str(script)] if script.is_file() else [str(self.python), "-m", "schemux"]


def _exited(command: list[str]) -> Callable[[], Coroutine[Any, Any, None]]:
    async def run() -> None:
        process = await asyncio.create_subprocess_exec(
            *command, cwd=WORKDIR, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        _, errors = await process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {errors.decode()}")

    return run


def _listed(
    installation: Installation, socket: str, quiet: TextIO
) -> Callable[[], Coroutine[Any, Any, None]]:
    command, *args = installation.schemux
    parameters = StdioServerParameters(
        command=command,
        args=[*args, "serve", "--socket-name", socket, "--audit-log", os.devnull],
        cwd=WORKDIR,
    )

    async def run() -> None:
        async with Client(stdio_client(parameters, errlog=quiet)) as client:
            if not (await client.list_tools()).tools:
                raise RuntimeError(f"{installation.label}: tools/list listed no tool")

    return run


async def measure(installations: list[Installation], runs: int, quiet: TextIO) -> dict[str, Any]:
    """The figures of each installation; ``quiet`` takes the servers' stderr (their start
    line is not the figure's business)."""
    socket = f"schemux-cold-{os.getpid()}"  # named, never started: listing runs no tmux
    contenders = {
        (each.label, figure): starter
        for each in installations
        for figure, starter in (
            ("floor", _exited([str(each.python), "-c", "pass"])),
            ("tools", _exited([*each.schemux, "tools"])),
            ("serve", _listed(each, socket, quiet)),
        )
    }
    seconds: dict[tuple[str, str, str], list[float]] = {
        (*key, measure): [] for key in contenders for measure in MEASURES
    }
    order = list(contenders)
    for _ in range(runs):
        for key in order:
            wall, cpu = time.perf_counter(), _children_cpu()
            await contenders[key]()
            seconds[(*key, "wall")].append(time.perf_counter() - wall)
            seconds[(*key, "cpu")].append(_children_cpu() - cpu)
        order.reverse()
    figures = {
        measure: {
            each.label: {
                figure: summary(seconds[(each.label, figure, measure)]) for figure in FIGURES
            }
            for each in installations
        }
        for measure in MEASURES
    }
    return {
        "runs": runs,
        "python": {each.label: str(each.python) for each in installations},
        "figures": figures,
        "ratios": {measure: _ratios(figures[measure]) for measure in MEASURES},
    }


def _children_cpu() -> float:
    """CPU seconds (user and system) of this process's ended children so far: a figure
    that the machine's other load moves far less than wall time."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _ratios(figures: dict[str, dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    first = next(iter(figures))
    ratios: dict[str, dict[str, float]] = {}
    for label, row in figures.items():
        median = {figure: row[figure]["median_ms"] for figure in FIGURES}
        ratios[label] = {
            "tools/floor": median["tools"] / median["floor"],
            "serve/floor": median["serve"] / median["floor"],
        }
        if label != first:
            for figure in ("tools", "serve"):
                ratios[label][f"{figure}/{first}'s"] = (
                    median[figure] / figures[first][figure]["median_ms"]
                )
    return ratios


def render(report: dict[str, Any]) -> str:
    lines = []
    for measure, title in MEASURES.items():
        lines.append(f"{title}, median of {report['runs']} (ms; min-max)")
        for label, row in report["figures"][measure].items():
            cells = [
                f"{figure} {row[figure]['median_ms']:7.1f} "
                f"({row[figure]['min_ms']:.0f}-{row[figure]['max_ms']:.0f})"
                for figure in FIGURES
            ]
            lines.append(f"  {label:10} " + "   ".join(cells))
        for label, ratios in report["ratios"][measure].items():
            named = "   ".join(f"{name} {value:.2f}" for name, value in ratios.items())
            lines.append(f"  {label:10} {named}")
    return "\n".join(lines)


def _installation(text: str) -> Installation:
    label, separator, path = text.partition("=")
    if not separator or not label or not path:
        raise argparse.ArgumentTypeError(f"{text!r} is not LABEL=PATH")
    return Installation(label, Path(path))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each figure (10)")
    parser.add_argument(
        "--python",
        type=_installation,
        action="append",
        metavar="LABEL=PATH",
        help="an interpreter with schemux installed (repeatable; default: this one)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    installations = args.python or [Installation("this", Path(sys.executable))]
    with open(os.devnull, "w") as quiet:
        report = asyncio.run(measure(installations, args.runs, quiet))
    publish(render(report), report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
