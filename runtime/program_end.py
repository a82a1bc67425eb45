"""How a program's end is told: the gate's command line, and its end marker read back."""

from __future__ import annotations

import signal as signals
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from schemux import program_gate

SIGNAL_NAMES = {int(number): number.name for number in signals.Signals}
MARKER_PREFIX = b"\x1b]7777;schemux-end;"
Outcome = Literal["completed", "not_started", "expired", "stopped", "gone", "timed_out"]


@dataclass(frozen=True)
class Ending:
    outcome: Outcome
    exit_status: int | None
    signal: str | None


def ending_from_marker(status: int, flag: str) -> Ending:
    """The contracts' reading of the gate's report: a program that could not be run is
    not_started; a status above 128 is a signal (so an exit 130 reads as SIGINT)."""
    if flag == "n":
        return Ending("not_started", status, None)
    if status > 128 and status - 128 in SIGNAL_NAMES:
        return Ending("completed", None, SIGNAL_NAMES[status - 128])
    return Ending("completed", status, None)


def gate_command(
    directory: Path,
    start_directory: str,
    stdin_path: str,
    stderr_path: str,
    grace: float,
    environment: dict[str, str],
    argv: list[str],
) -> list[str]:
    """The pane's command: the gate (``schemux.program_gate``) by this Python, isolated
    from the environment's Python settings; every value one argument, none parsed by a
    shell or expanded by tmux (a window's command is neither)."""
    assignments = [f"{key}={value}" for key, value in sorted(environment.items())]
    return [
        sys.executable, "-I", "-S", program_gate.__file__, str(directory), start_directory,
        stdin_path, stderr_path, str(grace), str(len(assignments)), *assignments, *argv,
    ]  # fmt: skip


def marker_start(data: bytes, marker: bytes) -> int:
    """Where a marker that may be cut off at the end of ``data`` would begin; ``len(data)``
    when the end cannot be the start of one. Everything before that goes out at once, so
    a line reaches readers as soon as it is written."""
    start = data.rfind(b"\x1b", max(0, len(data) - len(marker) - 24))
    if start < 0:
        return len(data)
    tail = data[start:]
    if marker.startswith(tail) or (tail.startswith(marker) and b"\x07" not in tail):
        return start
    return len(data)
