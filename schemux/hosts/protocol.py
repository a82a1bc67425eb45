"""What schemux needs of a host, whatever kind it is: the ``Host`` protocol.

A host is where the tmux server runs and its processes live. schemux reaches it by argv:
a tmux client there (``command``, ``client_command``), any command there with stdin and
stdout (``exec_command``); each kind owns its quoting, and every word reaches the host's
program as the one argument it was here. The rest of schemux asks a host what it can do,
never what kind it is: whether its pids are this machine's (``pids_here``: ``/proc`` and
pidfds here reach its processes), whether a private file written here is readable there
(``files_here``), which tmux binary it runs, its home, when a new login shell there is
ready. A host that runs a helper of schemux's (a program host on another machine) offers
it for reading shell facts and for its shells' wrappers to report through
(``facts_helper``).
"""

from __future__ import annotations

import asyncio
import subprocess
from concurrent.futures import Executor
from typing import Protocol

from schemux.config import GateSetting
from schemux.hosts.programs.host import ProgramHost


class ShellReports(Protocol):
    """The pipes one shell's run_command wrapper reports through to a helper of
    schemux's on its host (``schemux.hosts.programs.remote``): the helper's pid and the
    descriptors the shell opens through ``/proc/PID/fd``, one to write its report to, one
    to read the answer that lets it go on from."""

    helper_pid: int
    writes: int
    reads: int
    unanswered: int  # reports given to the armed call and not answered yet

    def arm(self, token: str) -> asyncio.Queue[str | None]:
        """The reports ("TOKEN STATUS") of a call's wrapper with ``token`` from now, as
        they come; None once the helper ended. Any other report is answered at once."""
        ...

    def go_on(self) -> None:
        """Answer the report taken: the shell goes on."""
        ...

    def disarm(self, token: str) -> None:
        """A report of ``token`` not taken yet, and any later, is answered at once."""
        ...


class FactsHelper(Protocol):
    """A process of schemux's on the host that reads ``/proc`` there
    (``schemux.hosts.programs.remote``): asked first for a remote pane's shell facts."""

    async def shell_facts(
        self, operation: bytes, server: tuple[int, int], *fields: bytes, seconds: float = ...
    ) -> list[bytes] | None: ...

    async def shell_reports(self, pid: int) -> ShellReports | None:
        """The report pipes of the shell ``pid`` (of the tmux server whose pids the
        helper sees), made at its first call; None when no helper runs yet, or the shell
        cannot reach it (another pid namespace)."""
        ...


class HelperHost(Protocol):
    """What a helper of schemux's on a host (``schemux.hosts.programs.remote``) needs of it: a
    session there, the connection that carries it, and words for messages."""

    def describe(self) -> str: ...

    def exec_command(self, argv: list[str]) -> list[str]: ...

    @property
    def connection(self) -> int: ...

    async def connect(self) -> None: ...

    def lost(self, since: int | None = None, status: int | None = None) -> str | None: ...


class Host(Protocol):
    """One host: owned by whoever made it (a ``ServingState``'s services, a doctor's run, the CLI
    until serving starts), which closes it."""

    @property
    def kind(self) -> str:
        """The kind's name, as its option spells it: "local", "ssh" (``--ssh``)."""
        ...

    @property
    def pids_here(self) -> bool:
        """Whether the host's pids are this machine's: schemux may read its processes in
        this ``/proc``, hold them by pidfd and tell them from its own."""
        ...

    @property
    def files_here(self) -> bool:
        """Whether a file this process writes (privately) is readable by the host's
        shells: the shell integration's startup files are written here."""
        ...

    @property
    def python(self) -> str | None:
        """The Python 3 that runs schemux's standard-library helpers there (the control
        client's attacher, ``schemux.tmux.control.client``, which checks one of another host
        before it runs it); None where there is none to run."""
        ...

    @property
    def tmux_version(self) -> str | None:
        """The host's ``tmux -V`` as its connect read it (the tmux on its PATH); None
        when no connect read it (this machine, a host not connected)."""
        ...

    def describe(self) -> str:
        """The host in a message ("this machine", "host DEST")."""
        ...

    def where(self) -> str:
        """What follows a tmux server's address in a message: " on host DEST", or
        nothing for this machine."""
        ...

    def label(self) -> str:
        """The host as the audit log records it ("local", the ssh destination)."""
        ...

    def tmux_binary(self) -> str:
        """The tmux a client there runs (raises TmuxUnavailable when there is none)."""
        ...

    def command(self, argv: list[str]) -> list[str]:
        """A one-off tmux client's argv (``tmux FLAGS COMMAND...``), run there."""
        ...

    def client_command(self, argv: list[str]) -> list[str]:
        """A tmux client that lives as long as schemux (a control client), run there: it
        ends when schemux dies."""
        ...

    def exec_command(self, argv: list[str]) -> list[str]:
        """Any argv run there, with this process's stdin and stdout as its own."""
        ...

    async def connect(self, executor: Executor | None = None) -> None:
        """The way to the host is up, or ServerUnavailable says why not. What a connect
        waits for (a probe, an ssh master's start) runs in ``executor``'s threads (its
        owner's), or asyncio's default ones."""
        ...

    def check_tmux(self) -> str:
        """At start: the host reached and its ``tmux -V``'s text (with where); raises
        TmuxUnavailable or ServerUnavailable saying why not."""
        ...

    @property
    def connection(self) -> int:
        """Which way to the host is the current one: it counts up each time the way is
        made again (a new ssh master), so a command begun under an earlier count was
        carried by a way since lost, even when a new one already answers."""
        ...

    def lost(self, since: int | None = None, status: int | None = None) -> str | None:
        """Why the way to the host is gone, or None; with ``since`` (a ``connection``
        read when a command began), also when that way has been replaced; with
        ``status`` (how a command over it ended), also when that status is the way's own
        failure, though the way may seem up a moment longer (a master still dying)."""
        ...

    def reached(self, status: int) -> bool:
        """Whether a command that ended with ``status`` got to the host (False: the way
        there failed, and ``check_tmux`` says why)."""
        ...

    def home(self) -> str:
        """Where the agent's login shell starts: the host's user's home."""
        ...

    async def until_shell_ready(self, pid: int, tmux_binary: str) -> None:
        """Return once the agent's new login shell ``pid`` holds its terminal (or after a
        few seconds): a first call coming at once would find it starting."""
        ...

    def program_host(self, max_running: int, gate: GateSetting) -> ProgramHost:
        """A new program host of this host's (owned by the caller's ``ProgramStore``):
        programs run there under ``gate`` where that is this machine's choice."""
        ...

    def facts_helper(self) -> FactsHelper | None:
        """The helper that reads shell facts on the host, if this host has one."""
        ...

    def close(self) -> None:
        """End whatever the host holds open (a connection), removing its files."""
        ...


def run_briefly(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``argv`` run to its end (a session on a host, a tmux client), stdin closed, its
    output as text (undecodable bytes replaced); TimeoutExpired and OSError go to the
    caller."""
    return subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )
