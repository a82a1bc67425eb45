"""The gate a program's pane runs: which one, its command line, and the end marker it
writes, read back and verified.

The Perl gate (``program_gate.pl``) starts in about 2 ms; a Python gate (``gate_process.py``,
``python -I -S``) takes 10 ms or more, most of a quick ``run_program``. Both speak the same
protocol. Perl needs nothing beyond perl-base (Essential on Debian and Ubuntu) and makes
its few system calls by number, so it is used where ``perl`` is on PATH and the machine's
architecture is in ``PERL_SYSCALLS``; elsewhere the Python gate is. ``SCHEMUX_PROGRAM_GATE``
(``Settings.program_gate``) forces one.
"""

from __future__ import annotations

import hmac
import platform
import shutil
import signal as signals
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from schemux.config import ENV_PROGRAM_GATE, GateSetting
from schemux.errors import ConfigError
from schemux.hosts.programs import gate_process
from schemux.hosts.programs.gate_process import TABLE_BYTES, TOKEN_BYTES, token_index

PERL_GATE = Path(__file__).with_name("program_gate.pl")

# prctl, rt_sigprocmask, rt_sigtimedwait, rt_sigaction, by platform.machine(): x86_64's
# own table (asm/unistd_64.h) and asm-generic's (asm-generic/unistd.h: arm64, riscv64);
# all three have Linux's usual signal numbers, which the Perl gate takes for granted
PERL_SYSCALLS: Mapping[str, tuple[int, int, int, int]] = MappingProxyType(
    {
        "x86_64": (157, 14, 128, 13),
        "aarch64": (167, 135, 137, 134),
        "riscv64": (167, 135, 137, 134),
    }
)


@dataclass(frozen=True)
class Gate:
    """A gate to run: its interpreter, switches and script, before the protocol's arguments."""

    kind: Literal["perl", "python"]
    prefix: tuple[str, ...]

    def command(
        self,
        directory: Path | str,
        start_directory: str,
        stdin_path: str,
        stderr_path: str,
        grace: float,
        environment: dict[str, str],
        argv: list[str],
    ) -> list[str]:
        """The pane's command: every value one argument, none parsed by a shell or expanded
        by tmux (a window's command is neither)."""
        assignments = [f"{key}={value}" for key, value in sorted(environment.items())]
        return [
            *self.prefix, str(directory), start_directory, stdin_path, stderr_path,
            str(grace), str(len(assignments)), *assignments, *argv,
        ]  # fmt: skip


PYTHON_GATE = Gate("python", (sys.executable, "-I", "-S", gate_process.__file__))


def perl_gate() -> Gate | str:
    """The Perl gate, or why this machine cannot run it."""
    numbers = PERL_SYSCALLS.get(platform.machine())
    if numbers is None:
        return f"the system call numbers of {platform.machine()!r} are not known"
    perl = shutil.which("perl")
    if perl is None:
        return "there is no perl on PATH"
    # -t: PERL5OPT, PERL5LIB and PERLIO are ignored; -C0: PERL_UNICODE is too; -X: no
    # warning reaches the program's terminal
    syscalls = ",".join(str(number) for number in numbers)
    return Gate("perl", (perl, "-X", "-t", "-C0", str(PERL_GATE), syscalls))


def choose_gate(setting: GateSetting) -> Gate:
    """The gate for ``setting``: Perl where it can run (or as forced), else Python."""
    if setting == "python":
        return PYTHON_GATE
    perl = perl_gate()
    if isinstance(perl, Gate):
        return perl
    if setting == "perl":
        raise ValueError(f"the Perl gate cannot run here: {perl}")
    return PYTHON_GATE


def check_gate_setting(setting: GateSetting) -> None:
    """Refuse, naming the setting, a forced gate that cannot run here (as schemux starts:
    the settings themselves are values, not facts of this machine)."""
    try:
        choose_gate(setting)
    except ValueError as error:
        raise ConfigError(f"{ENV_PROGRAM_GATE}={setting}: {error}") from None


SIGNAL_NAMES = MappingProxyType({int(number): number.name for number in signals.Signals})
MARKER_PREFIX = b"\x1b]7777;schemux-end;"
MAX_MARKER = 128  # an unterminated "marker" longer than this is plain output
Report = tuple[int, str]  # the exit status (128+N for signal N), and "x" or "n" (not run)
# how a program ended (run_program's timed_out is the call's, not the program's)
Outcome = Literal["completed", "not_started", "expired", "stopped", "gone"]


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


def report_token(table: bytes, status: int, flag: str) -> bytes:
    """The token a gate holding ``table`` marks this report with (both gates take it from
    the same place): a copy of one genuine marker (a descendant can read the copy's FIFO)
    tells nothing of another report's token."""
    at = token_index(status, flag) * TOKEN_BYTES
    return table[at : at + TOKEN_BYTES].hex().encode()


def verified(body: bytes, table: bytes) -> Report | None:
    """The report in a marker's ``STATUS;FLAG;TOKEN``, if the gate holding ``table`` made
    it (one verifier for both gates)."""
    fields = body.split(b";")
    if len(fields) != 3 or len(table) != TABLE_BYTES:
        return None
    status, flag, token = fields
    if not status.isdigit() or len(status) > 3 or int(status) > 255 or flag not in (b"x", b"n"):
        return None
    if not hmac.compare_digest(token, report_token(table, int(status), flag.decode())):
        return None
    return int(status), flag.decode()


def scan(data: bytes, table: bytes) -> tuple[bytes, bytes, Report | None]:
    """Split copied bytes into output to pass on now, bytes to hold back (the start of what
    may be a marker, to be completed by the next read), and the gate's report when a
    genuine marker (by ``table``) is in ``data`` (nothing the gate prints follows it).
    Anything that only looks like a marker is output (the text filter drops it as an OSC
    sequence)."""
    start = 0
    while True:
        at = data.find(MARKER_PREFIX, start)
        if at < 0:
            held = max(start, marker_start(data, MARKER_PREFIX))
            return data[:held], data[held:], None
        end = data.find(b"\x07", at)
        if end < 0:
            if len(data) - at > MAX_MARKER:
                start = at + 1
                continue
            return data[:at], data[at:], None
        report = verified(data[at + len(MARKER_PREFIX) : end], table)
        if report is not None:
            return data[:at], b"", report
        start = at + 1  # a look-alike may hold the genuine marker: look inside it


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
