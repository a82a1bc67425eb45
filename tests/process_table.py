"""The processes on this machine, for the tests and benchmarks that look for what a run
started or left behind: one walk of /proc, each file read with ``schemux.system.processes``
(which counts a stat's fields from the last ``)``, whatever the process's name holds)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property

from schemux.system.processes import command_line, process_name, stat_of


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    state: str  # R running, S sleeping, Z zombie, ...

    @cached_property
    def argv(self) -> tuple[bytes, ...]:
        """The command line's words, read once (a scan that asks for none is one read
        per process); empty for a zombie, a kernel thread, and a process gone since."""
        words = command_line(self.pid)
        return tuple(words.split(b"\0")[:-1]) if words else ()

    @property
    def alive(self) -> bool:
        return self.state != "Z"

    @property
    def command(self) -> str:
        """The command line, its words joined by spaces."""
        return b" ".join(self.argv).decode(errors="replace")

    def name(self) -> str:
        """The process's name (``comm``); "" once it is gone."""
        return process_name(self.pid)

    def uid(self) -> int | None:
        """The owner's uid; None once it is gone."""
        try:
            return os.stat(f"/proc/{self.pid}").st_uid
        except OSError:
            return None


def processes() -> list[Process]:
    """Every process now, zombies included; one that ends during the walk is left out."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        stat = stat_of(pid)
        if stat is not None:
            found.append(Process(pid, stat.ppid, stat.state))
    return found


def children(parent: int) -> list[Process]:
    """The live processes whose parent is ``parent``."""
    return [process for process in processes() if process.ppid == parent and process.alive]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: neither gone nor a zombie (which an init that reaps slowly
    was seen to keep for two seconds)."""
    stat = stat_of(pid)
    return stat is not None and stat.state != "Z"


def running_with_argument(word: str) -> list[int]:
    """The live processes that were given ``word`` as one whole argument."""
    wanted = word.encode()
    return [process.pid for process in processes() if process.alive and wanted in process.argv]


def running_with(text: str) -> list[int]:
    """The live processes whose command line holds ``text`` (a test's unique marker)."""
    return [process.pid for process in processes() if process.alive and text in process.command]
