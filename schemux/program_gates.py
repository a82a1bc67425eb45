"""Which gate a program's pane runs, and its command line.

The Perl gate (``program_gate.pl``) starts in about 2 ms; a Python gate (``program_gate.py``,
``python -I -S``) takes 10 ms or more, most of a quick ``run_program``. Both speak the same
protocol. Perl needs nothing beyond perl-base (Essential on Debian and Ubuntu) and makes
its few system calls by number, so it is used where ``perl`` is on PATH and the machine's
architecture is in ``PERL_SYSCALLS``; elsewhere the Python gate is. ``SCHEMUX_PROGRAM_GATE``
(``Settings.program_gate``) forces one.
"""

from __future__ import annotations

import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from schemux import program_gate

GateSetting = Literal["auto", "perl", "python"]
GATE_SETTINGS: tuple[GateSetting, ...] = ("auto", "perl", "python")
PERL_GATE = Path(__file__).with_name("program_gate.pl")

# prctl, rt_sigprocmask, rt_sigtimedwait, by platform.machine(): x86_64's own table
# (asm/unistd_64.h) and asm-generic's (asm-generic/unistd.h: arm64, riscv64); all three
# have Linux's usual signal numbers, which the Perl gate takes for granted
PERL_SYSCALLS: dict[str, tuple[int, int, int]] = {
    "x86_64": (157, 14, 128),
    "aarch64": (167, 135, 137),
    "riscv64": (167, 135, 137),
}


@dataclass(frozen=True)
class Gate:
    """A gate to run: its interpreter, switches and script, before the protocol's arguments."""

    kind: Literal["perl", "python"]
    prefix: tuple[str, ...]

    def command(
        self,
        directory: Path,
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


PYTHON_GATE = Gate("python", (sys.executable, "-I", "-S", program_gate.__file__))


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
