"""What a test run must not leave behind, and the check that fails the run when it does.

Other suites may run on the same machine at the same time, and the user's own tmux
servers live in tmux's directory: a run never touches that. It has a temporary directory
of its own, made both ``TMPDIR`` and ``TMUX_TMPDIR`` of the test process (which every
process it starts is given, the ssh side included), so its tmux sockets and schemux
runtime directories are made there. Everything in it is this run's; in the user's tmux
directory only a socket whose name carries ``RUN_TAG`` (every test server's does, see
``tests.support.tagged_socket_name``) is, and so are tmux servers whose command line
names one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from schemux.hooks import SHELLS_CACHE
from schemux.names import socket_directory
from schemux.system.runtime_identity import RUNTIME_PREFIX
from tests.process_table import processes

RUN_TAG = f"run{uuid.uuid4().hex[:8]}"
SERVER_EXIT_SECONDS = 5.0  # kill-server returns before the server has gone
# the tmux directory the run was started with (the user's), before the run's own replaces
# it; a test worker (pytest-xdist) is started with the run's, and is told the user's
USER_DIRECTORY_VARIABLE = "SCHEMUX_TEST_USER_TMUX_DIRECTORY"
USER_TMUX_DIRECTORY = os.environ.setdefault(USER_DIRECTORY_VARIABLE, socket_directory())
# what the run gives every process it starts (a client that filters the environment,
# as the MCP SDK's stdio client does, drops them)
# the run's temporary and tmux directories, and its state directory (the audit log's)
RUN_VARIABLES = ("TMPDIR", "TMUX_TMPDIR", "XDG_STATE_HOME")


@dataclass
class Leftovers:
    sockets: list[Path] = field(default_factory=list)
    servers: list[int] = field(default_factory=list)
    runtime_directories: list[Path] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.sockets or self.servers or self.runtime_directories)

    def report(self, made_during: Mapping[Path, str] | None = None) -> str:
        """What was left, each runtime directory with the test it appeared during when
        ``made_during`` knows it (a directory left once in a thousand runs is found
        by its test, not by a search)."""
        made_during = made_during or {}
        lines = ["the test run left things behind:"]
        lines += [f"  tmux socket {path}" for path in self.sockets]
        lines += [f"  tmux server pid {pid}" for pid in self.servers]
        for path in self.runtime_directories:
            test = made_during.get(path)
            lines.append(f"  runtime directory {path}" + (f" (made during {test})" if test else ""))
        return "\n".join(lines)


def private_temporary_directory() -> Path:
    """A temporary directory for this run alone, made TMPDIR and TMUX_TMPDIR of this
    process (and so of every process it starts that keeps its environment: see
    ``run_environment``). Short, since program FIFOs and sockets live below it."""
    directory = Path(tempfile.mkdtemp(prefix=f"sx{RUN_TAG}-", dir="/tmp"))
    os.environ["TMPDIR"] = os.environ["TMUX_TMPDIR"] = str(directory)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    return directory


def run_environment(**extra: str) -> dict[str, str]:
    """The run's variables (``RUN_VARIABLES``) and ``extra``: the environment to give a
    process started with a filtered one (an MCP stdio client merges it over its own)."""
    kept = {name: os.environ[name] for name in RUN_VARIABLES if name in os.environ}
    return {**kept, **extra}


def run_sockets(user_directory: Path) -> list[Path]:
    """Every socket in the run's tmux directory, and the run's in ``user_directory``."""
    found = []
    for directory, everything in ((Path(socket_directory()), True), (user_directory, False)):
        if directory.is_dir():
            found += [path for path in directory.iterdir() if everything or RUN_TAG in path.name]
    return sorted(set(found))


def tagged_servers() -> list[int]:
    """Live tmux processes whose command line names one of this run's sockets."""
    return sorted(
        process.pid
        for process in processes()
        if process.alive
        and process.argv[:1] != ()
        and process.argv[0].endswith(b"tmux")
        and any(RUN_TAG.encode() in arg for arg in process.argv)
    )


def runtime_directories(temporary: Path) -> list[Path]:
    if not temporary.is_dir():
        return []
    # schemux-shells-UID is not a process's: it is the shell integration's files, named
    # by their content and shared by every schemux of the user, as tmux's own directory is
    return sorted(
        path
        for path in temporary.iterdir()
        if path.name.startswith(RUNTIME_PREFIX) and not path.name.startswith(SHELLS_CACHE)
    )


def find_leftovers(
    temporary: Path,
    wait: float = SERVER_EXIT_SECONDS,
    user_directory: Path = Path(USER_TMUX_DIRECTORY),
) -> Leftovers:
    """What this run left, after giving killed servers ``wait`` seconds to go."""
    deadline = time.monotonic() + wait
    while tagged_servers() and time.monotonic() < deadline:
        time.sleep(0.05)
    sockets = run_sockets(user_directory)
    return Leftovers(sockets, tagged_servers(), runtime_directories(temporary))


def release_fifo_openers(temporary: Path) -> None:
    """Open (and close at once) the writing end of every FIFO left in the run's
    directory: a thread still blocked opening one to read (a program's output copy whose
    writer never came) returns, where it would otherwise keep the process from exiting.
    Nothing opens a FIFO that has no reader."""
    for path in temporary.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_fifo():
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def busy_threads(wait: float) -> list[str]:
    """Threads that would keep the process from exiting (non-daemon, running a piece of
    work, not idle in a pool), after giving them ``wait`` seconds to end: each named, with
    the innermost line it is at."""
    deadline = time.monotonic() + wait
    while True:
        frames = sys._current_frames()
        busy = []
        for thread in threading.enumerate():
            frame = frames.get(thread.ident or -1)
            if thread.daemon or thread is threading.main_thread() or frame is None:
                continue
            if frame.f_code.co_name == "_worker":  # an idle pool thread: ends at exit
                continue
            busy.append(f"{thread.name} at {frame.f_code.co_filename}:{frame.f_lineno}")
        if not busy or time.monotonic() > deadline:
            return busy
        time.sleep(0.05)
