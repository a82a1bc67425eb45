"""Run every benchmark and write its section of ``docs/benchmarks.md`` (between the
markers) from what they measured: one table
of each bar (its figure, its floor or goal, met or missed), the machine's facts and the
date, so that no figure there is copied by hand. ``nox -s bench`` runs it.

The comparisons with libtmux-mcp 0.1.0a22 are the bars that name it, measured in the
same run by the scripts that install it (``bench/common.py``, ``bench/.venvs/``).

Usage: ``python bench/benchmarks_page.py [--quick] [--out PATH]``
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine_facts

ROOT = Path(__file__).resolve().parent.parent
# each benchmark with a bar, and its arguments for a full run and for a quick one
BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    "suite.py": ([], ["--quick"]),
    "shells.py": ([], ["--calls", "10"]),
    "fanout.py": (["--many", "200"], ["--calls", "5", "--many", "20"]),
    "programs.py": ([], ["--quick"]),
    "capture.py": ([], []),
    "resources.py": ([], []),
    "ssh.py": ([], []),
    "audit.py": ([], []),
    "policy.py": ([], []),
    "page.py": ([], ["--rounds", "1", "--seconds", "10"]),
}


def run_all(quick: bool, directory: Path) -> dict[str, dict[str, Any] | str]:
    """Each benchmark's JSON report, or why it gave none (its exit status 2, its stderr)."""
    reports: dict[str, dict[str, Any] | str] = {}
    for script, (full, short) in BENCHMARKS.items():
        out = directory / f"{script}.json"
        argv = [sys.executable, str(ROOT / "bench" / script), *(short if quick else full)]
        print(f"bench: {script}", file=sys.stderr, flush=True)
        done = subprocess.run(
            [*argv, "--json", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
        if out.exists():
            reports[script] = json.loads(out.read_text("utf-8"))
        else:
            said = done.stderr.strip().splitlines()
            reports[script] = f"no figures (exit status {done.returncode}): " + (
                said[-1] if said else "nothing said"
            )
    return reports


BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def table(reports: dict[str, dict[str, Any] | str], facts: dict[str, Any], when: str) -> str:
    lines = [
        "Written by `nox -s bench` (`bench/benchmarks_page.py`) from one run of every "
        "benchmark; not edited by hand. What each measures: `bench/README.md`.",
        "",
        f"Run on {when}: {facts['tmux']}, {facts['nproc']} CPUs, Python {facts['python']}, "
        f"Linux {facts['kernel']}, mcp {facts['mcp']}, schemux {facts['schemux']}, "
        f"against libtmux-mcp {facts['libtmux_mcp']}.",
        "",
        "| benchmark | bar | measured | floor or goal | verdict |",
        "|---|---|---:|---:|---|",
    ]
    for script, report in reports.items():
        if isinstance(report, str):
            lines.append(f"| `{script}` | | | | {report} |")
            continue
        for bar in report.get("bars", []):
            unit = bar["unit"]
            value = "n/a" if bar["value"] is None else f"{bar['value']:.2f}{unit}"
            limit = f"{'>=' if bar['at_least'] else '<='} {bar['limit']:g}{unit}"
            lines.append(f"| `{script}` | {bar['name']} | {value} | {limit} | {bar['verdict']} |")
    return "\n".join(lines)


def with_table(page: str, written: str) -> str:
    """``page`` with the text between its markers replaced by ``written``."""
    before, found, rest = page.partition(BEGIN)
    _, ended, after = rest.partition(END)
    if not found or not ended:
        raise SystemExit(f"the page has no {BEGIN} ... {END} section")
    return f"{before}{BEGIN}\n{written}\n{END}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="each benchmark's small run")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    when = datetime.date.today().isoformat()
    with tempfile.TemporaryDirectory(prefix="schemux-bench-") as directory:
        reports = run_all(args.quick, Path(directory))
    written = table(reports, machine_facts(), when)
    args.out.write_text(with_table(args.out.read_text("utf-8"), written), "utf-8")
    print(f"bench: wrote {args.out}", file=sys.stderr)
    missed = any(isinstance(r, str) or any(b["verdict"] == "MISS" for b in r.get("bars", []))
                 for r in reports.values())  # fmt: skip
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
