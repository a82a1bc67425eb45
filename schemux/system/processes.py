"""Processes as Linux shows them: /proc/PID/stat and the other /proc files schemux reads,
pidfds, and the owner mark that names a schemux process for good.

Every read of /proc is here, so that its format is parsed once: a process's name (the
``comm`` in parentheses) may hold spaces and parentheses, so its fields are counted from
the last ``)``. (A program's gate walks its process tree itself: it runs as a script of
its own, ``python -I -S`` or perl, and imports nothing of schemux.)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import os
import re
import select
import signal as signals
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessStat:
    """The fields of /proc/PID/stat that schemux reads."""

    state: str  # R running, S sleeping, Z zombie, ...
    ppid: int
    pgrp: int
    tty_nr: int  # its controlling terminal's device number; 0 without one
    tpgid: int  # the foreground process group of its terminal; -1 without one
    start_ticks: int  # its start time in clock ticks since boot (field 22)


def read_stat(pid: int) -> ProcessStat:
    """Process ``pid``'s stat; raises OSError when there is none, ValueError when the
    file does not read as one."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        text = stat.read()
    # after the parenthesised name: state ppid pgrp session tty_nr tpgid ... starttime
    fields = text[text.rindex(b")") + 2 :].split()
    if len(fields) < 20:
        raise ValueError(f"/proc/{pid}/stat has {len(fields)} fields after the name")
    return ProcessStat(
        fields[0].decode(),
        int(fields[1]),
        int(fields[2]),
        int(fields[4]),
        int(fields[5]),
        int(fields[19]),
    )


def stat_of(pid: int) -> ProcessStat | None:
    """``read_stat``, or None when there is no such process (any more)."""
    try:
        return read_stat(pid)
    except (OSError, ValueError):
        return None


def read_start_ticks(pid: int) -> int:
    """Process ``pid``'s start time in clock ticks since boot; raises OSError (such as
    FileNotFoundError) when there is no such process."""
    try:
        return read_stat(pid).start_ticks
    except ValueError:
        raise ProcessLookupError(pid) from None


def start_ticks(pid: int) -> int | None:
    """``read_start_ticks``, or None when there is no such process (any more)."""
    stat = stat_of(pid)
    return None if stat is None else stat.start_ticks


def process_name(pid: int) -> str:
    """The process's name (``comm``); "" when it is gone."""
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as comm:
            return comm.read().strip()
    except OSError:
        return ""


def command_line(pid: int) -> bytes | None:
    """The process's argv, NUL-separated; None when it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read()
    except OSError:
        return None


def children(pid: int) -> list[int]:
    """The pids of the process's children (of its main thread: a shell's); none when it
    is gone or the kernel does not list them."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as listed:
            return [int(child) for child in listed.read().split()]
    except (OSError, ValueError):
        return []


def executable(pid: int) -> str:
    """The path of the process's executable; raises OSError when it cannot be read."""
    return os.readlink(f"/proc/{pid}/exe")


UNIX98_PTY_MAJORS = range(136, 144)  # /dev/pts/N: N = (major - 136) * 256 + minor


def controlling_terminal(pid: int) -> str:
    """The path of the process's controlling terminal, a pseudo-terminal's (as a tmux
    pane's is); raises OSError when it has none or another kind. Unlike its stdin, this
    does not change while a shell builtin reads from a redirection (``read <FILE``
    points the shell's own descriptor 0 at FILE for that while)."""
    stat = stat_of(pid)
    if stat is None:
        raise ProcessLookupError(pid)
    if stat.tty_nr == 0:
        raise OSError(f"process {pid} has no controlling terminal")
    major, minor = os.major(stat.tty_nr), os.minor(stat.tty_nr)
    if major not in UNIX98_PTY_MAJORS:
        raise OSError(f"process {pid}'s terminal is not a pseudo-terminal")
    path = f"/dev/pts/{(major - UNIX98_PTY_MAJORS[0]) * 256 + minor}"
    if os.stat(path).st_rdev != os.makedev(major, minor):  # another devpts than the pane's
        raise OSError(f"{path} is not process {pid}'s terminal here")
    return path


def pid_namespace(pid: int | None = None) -> str:
    """The pid namespace of process ``pid`` (of this process for None)."""
    return os.readlink(f"/proc/{'self' if pid is None else pid}/ns/pid")


def descriptor_path(fd: int) -> str:
    """A path through which other processes reach what this process's ``fd`` holds:
    digits and slashes only, whatever the path of what it holds."""
    return f"/proc/{os.getpid()}/fd/{fd}"


def pidfd_pid(fd: int) -> int | None:
    """The pid a pidfd names in our namespace (its ``Pid:`` line; -1 once it ended), or
    None when this kernel does not show it."""
    with open(f"/proc/self/fdinfo/{fd}") as info:
        for line in info:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    return None


def pidfd_exited(fd: int) -> bool:
    """A pidfd polls readable once its process has ended (a non-blocking check)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def pidfd_signal(fd: int, signum: int) -> None:
    """Send ``signum`` to the pidfd's process; nothing when it has ended."""
    with contextlib.suppress(OSError):
        signals.pidfd_send_signal(fd, signum)


async def pidfd_exit(pidfd: int) -> None:
    """Return once the process of ``pidfd`` has exited (a pidfd is readable then). It
    watches a duplicate of its own, so that whoever holds ``pidfd`` may close it."""
    loop = asyncio.get_running_loop()
    gone = asyncio.Event()
    fd = os.dup(pidfd)
    loop.add_reader(fd, gone.set)
    try:
        await gone.wait()
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def process_exit(pid: int) -> None:
    """Return when process ``pid`` has exited (at once if it is gone), on a pidfd."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:  # gone already, or no process of its own (a group's id outliving it)
        return
    try:
        await pidfd_exit(pidfd)
    finally:
        os.close(pidfd)


_MACHINE = "[0-9a-f]{16}"
_IDENTITY = re.compile(rf"([1-9][0-9]*)-([0-9]+)(?:-({_MACHINE}))?")
# ends a hold flag's value (``shell.abandoned_wrappers``: the script's last word, ``: 'MARK'``)
_MARK = re.compile(rf"(?:^|')A (\d+) (\d+)(?: ({_MACHINE}))?'?(?: }})?\"?$")
_HALF = 8  # hex digits of the machine's part, then as many of the boot's


@dataclass(frozen=True)
class Owner:
    """A schemux process, as its pid and its start time in clock ticks (a pid alone could
    be reused by an unrelated process) and the machine whose pids those are
    (``machine_tag``): a tmux server on another host may hold marks of schemux processes
    of several machines, and only the owner's own machine can tell whether it still runs.

    Spellings, all on live tmux servers or in file names: ``identity`` (``PID-TICKS``:
    this machine's runtime directories), ``tag`` (``PID-TICKS-MACHINE``: program panes'
    option, link marks) and ``mark`` (``A PID TICKS MACHINE``, at the end of a run_command
    wrapper's hold flag). Marks written before the machine was (no ``MACHINE``) still
    read: their owner is taken for a process of the tmux server's machine, as it was then.
    """

    pid: int
    start_ticks: int
    machine: str | None = None  # machine_tag() where it ran; None in older marks

    @property
    def identity(self) -> str:
        return f"{self.pid}-{self.start_ticks}"

    @property
    def tag(self) -> str:
        return self.identity if self.machine is None else f"{self.identity}-{self.machine}"

    @property
    def mark(self) -> str:
        machine = "" if self.machine is None else f" {self.machine}"
        return f"A {self.pid} {self.start_ticks}{machine}"

    @classmethod
    def from_identity(cls, identity: str) -> Owner | None:
        """The owner ``PID-TICKS`` or ``PID-TICKS-MACHINE`` names (None for anything else)."""
        match = _IDENTITY.fullmatch(identity)
        return None if match is None else cls(int(match[1]), int(match[2]), match[3])

    @classmethod
    def from_value(cls, value: str) -> Owner | None:
        """The owner a hold flag's value records at its end (None for anything else)."""
        match = _MARK.search(value)
        return None if match is None else cls(int(match[1]), int(match[2]), match[3])

    def alive(self) -> bool:
        """Whether its pid runs a process that started when it did (on this machine)."""
        return start_ticks(self.pid) == self.start_ticks

    def may_run(self, *, remote: bool) -> bool:
        """False only when this machine can tell the owner is gone, for a mark found on a
        tmux server that is ``remote`` or not: an owner of another machine (or of a mark
        without one, on a remote server) may run there, unseen from here; one of this
        machine's earlier boot does not run; one of this boot is looked up in /proc."""
        if self.machine is None:
            return remote or self.alive()
        here = machine_tag()
        if self.machine[:_HALF] != here[:_HALF]:
            return True
        if self.machine[_HALF:] != here[_HALF:]:
            return False
        return self.alive()


# the most a loaded machine stretches a wait for tmux: a tmux that is not answering at
# six times the usual bound is stuck, not slow
LONGEST_STRETCH = 6.0


def load_stretch() -> float:
    """How much longer than on an idle machine a start may take now: this machine's load
    per core over the last minute, at least 1, at most ``LONGEST_STRETCH``."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average (not Linux's /proc/loadavg): as on an idle machine
        return 1.0
    return min(max(load / (os.cpu_count() or 1), 1.0), LONGEST_STRETCH)


def this_process() -> Owner:
    """This schemux process (read once per process: a fork gets its own)."""
    return _owner(os.getpid())


@functools.cache
def _owner(pid: int) -> Owner:
    # /proc/self always exists on Linux
    return Owner(pid, read_start_ticks(pid), machine_tag())


@functools.cache
def machine_tag() -> str:
    """Which machine's pids this process's are, as 16 hex digits: a digest of the machine
    (its machine-id, else its host name) and of this pid namespace (processes of two
    containers are not each other's to judge), then a digest of the current boot (the
    kernel's boot_id: after a reboot, every owner of the machine's earlier boot is gone).
    Digests: nothing of the machine is written to a tmux server as it is."""
    machine = _first_line("/etc/machine-id", "/var/lib/dbus/machine-id") or socket.gethostname()
    where = f"{machine}\0{pid_namespace()}".encode()
    boot = _first_line("/proc/sys/kernel/random/boot_id").encode()
    return _digest(where) + _digest(boot)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:_HALF]


def _first_line(*paths: str) -> str:
    """The first line of the first of ``paths`` that reads as one; "" for none."""
    for path in paths:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            with open(path, encoding="ascii") as file:
                line = file.readline().strip()
            if line:
                return line
    return ""
