"""What a host runs while it connects (a probe, an ssh master's start), which its close
ends.

A connect runs in a worker thread, under the host's lock, for up to ``START_SECONDS``
(an unreachable host, a container that does not answer). A close that waited for it
held schemux's exit that long; a connect that waited out a close would make what
nothing ends any more (a master, a runtime directory). So a close kills the processes
still running, and a connect asked for before a close is refused, before its process
and after it.

Each process runs in a process group of its own, which is what is killed: what it
started holds its output pipes too (ssh's ProxyCommand, a prefix's ``sh -c 'sleep 5;
exec "$@"'``), and the run would wait for their end. A schemux that dies (``kill -9``
included) takes each group with it (``schemux.system.tethered.tethered_group``).

The thread a connect runs in is its owner's to choose: a fleet's hosts connect in an
executor of the fleet's (``schemux.domain.fleet``), so that connects that hang hold up none of
schemux's other work in threads.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable

from schemux.errors import ServerUnavailable
from schemux.system.tethered import tethered_group


class Connecting:
    """The processes a host's connects run, and the count of its closes."""

    def __init__(self, describe: Callable[[], str]) -> None:
        self._describe = describe
        self._closes = 0
        self._running: set[subprocess.Popen[str]] = set()
        self._guard = threading.Lock()

    def ticket(self) -> int:
        """Taken when a connect is asked for: a close after it makes it void."""
        return self._closes

    def run(self, ticket: int, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        """``argv`` run to its end (stdin closed, its output as text, undecodable bytes
        replaced), unless a close came after ``ticket`` (then ServerUnavailable, before or
        after the process ran); TimeoutExpired and OSError go to the caller."""
        self.refuse_if_closed(ticket)
        with subprocess.Popen(
            tethered_group(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            process_group=0,
        ) as process:
            with self._guard:
                self._running.add(process)
                closed = ticket != self._closes
            try:
                if closed:  # a close came while it started: ended as those it found were
                    _kill_group(process)
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                process.wait()
                raise
            finally:
                with self._guard:
                    self._running.discard(process)
        self.refuse_if_closed(ticket)
        return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)

    def refuse_if_closed(self, ticket: int) -> None:
        if ticket != self._closes:
            raise ServerUnavailable(
                f"the connection to {self._describe()} was closed while it was being made",
                suggestion="call again",
            )

    def close(self) -> None:
        """Make every connect asked for so far void, and kill what they still run."""
        with self._guard:
            self._closes += 1
            for process in self._running:
                _kill_group(process)


def _kill_group(process: subprocess.Popen[str]) -> None:
    """Kill ``process`` and what it started: its group, which its pid names until it is
    reaped (then the pid may be another process's, and the run has its output already)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
