"""What schemux runs on another host, whatever the way there (``ssh``, a command prefix):
fixed argvs (no value of a call in them), each run through the host's ``exec_command``.

- around a lasting tmux client (``drained``): its output is copied to the session and,
  once the session is gone, read and dropped, so that tmux, which lets no control client
  go while it holds unwritten output, lets it go when its input (the session's) ends;
- the reading of the probe at connection (``read_probe``): the host user's home and
  ``tmux -V``;
- the wait for the agent's new login shell (``shell_ready``), as
  ``hosts.local.until_shell_ready`` does from this machine's /proc;
- what every such host does alike (``RemoteHost``): the shell wait and the programs,
  both through its ``exec_command``.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
from concurrent.futures import Executor
from dataclasses import dataclass

import anyio

from schemux.config import GateSetting
from schemux.errors import ServerUnavailable, TmuxUnavailable, shorten
from schemux.hosts.programs.remote import RemotePrograms
from schemux.hosts.protocol import FactsHelper
from schemux.versions import MINIMUM_VERSION, parse_version

SHELL_READY_SECONDS = 5.0
_DRAINED = '"$@" | { cat; cat >/dev/null; }'

# waits, at most SHELL_READY_SECONDS, until process $1 holds its terminal for 0.1 s
_SHELL_READY_SCRIPT = r"""
pid=$1
tmux=$(command -v tmux) && tmux=$(readlink -f "$tmux")
steady=0
count=0
while [ "$count" -lt 250 ]; do
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || exit 0
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || exit 0
  set -- ${stat##*) }
  if [ "$exe" != "$tmux" ] && [ "$3" = "$6" ]; then
    steady=$((steady + 1))
    [ "$steady" -ge 5 ] && exit 0
  else
    steady=0
  fi
  sleep 0.02
  count=$((count + 1))
done
"""


def tmux_words(argv: list[str]) -> list[str]:
    """A tmux argv as it runs there: with ``-u``, since the session's locale is whatever
    the way there gave it (often none, so C), and tmux would write a non-UTF-8 client's
    control characters as ``_``."""
    return [argv[0], "-u", *argv[1:]]


def drained(argv: list[str]) -> list[str]:
    """A lasting tmux client's argv there (see the module); ``argv`` is whole (the
    control client's has its ``-u``, ``schemux.tmux.control.client``)."""
    return ["sh", "-c", _DRAINED, "sh", *argv]


def shell_ready(pid: int) -> list[str]:
    return ["sh", "-c", _SHELL_READY_SCRIPT, "sh", str(int(pid))]


async def run_until_shell_ready(argv: list[str]) -> None:
    """Run ``shell_ready``'s argv (as the host runs it) to its end, bounded; cancelled,
    it leaves no process."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        # the script gives up after SHELL_READY_SECONDS itself; this bounds the session
        with anyio.fail_after(SHELL_READY_SECONDS + 2):
            await proc.wait()
    except BaseException as error:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await asyncio.shield(proc.wait())
        if not isinstance(error, TimeoutError):
            raise


@dataclass(frozen=True)
class Probed:
    """What the probe found: the host user's home and its tmux's version text."""

    home: str
    tmux_version: str


def read_probe(lines: list[str], stderr: str, status: int, where: str, way: str) -> Probed:
    """The probe's answer (its output ``lines``), or ServerUnavailable saying why tmux
    cannot serve ``where`` (``way``: what ran the probe, named when it said nothing)."""
    if status != 0 or len(lines) < 2:
        raise ServerUnavailable(
            f"tmux cannot run on {where}: {failure_text(stderr, status, way)}",
            suggestion="install tmux 3.3 or newer on that host, on the PATH its "
            "non-interactive shell has",
        )
    version = lines[1].strip()
    try:
        too_old = parse_version(version) < MINIMUM_VERSION
    except TmuxUnavailable as error:
        raise ServerUnavailable(f"on {where}: {error}") from None
    if too_old:
        raise ServerUnavailable(
            f"{version} on {where} is too old: schemux needs tmux 3.3 or newer",
            suggestion="install tmux 3.3 or newer on that host",
        )
    return Probed(lines[0], version)


def failure_text(stderr: str, status: int, way: str) -> str:
    """What ``way`` (or the host's shell) said, as one line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return shorten(" ".join(lines), 500) if lines else f"{way} exited with status {status}"


class RemoteHost(abc.ABC):
    """The part of a host on another machine that is the same whatever reaches it (ssh,
    a command prefix): what runs there runs through ``exec_command``."""

    _programs: RemotePrograms | None = None  # its helper reads shell facts too
    python = "python3"  # the one on the PATH there, if any

    @abc.abstractmethod
    def describe(self) -> str: ...

    @abc.abstractmethod
    def exec_command(self, argv: list[str]) -> list[str]: ...

    @abc.abstractmethod
    async def connect(self, executor: Executor | None = None) -> None: ...

    @property
    @abc.abstractmethod
    def connection(self) -> int: ...

    @abc.abstractmethod
    def lost(self, since: int | None = None, status: int | None = None) -> str | None: ...

    async def until_shell_ready(self, pid: int, tmux_binary: str) -> None:
        """``hosts.local.until_shell_ready``, on the host, in one command there (which
        finds the host's own tmux: ``tmux_binary`` is this machine's name for it)."""
        await run_until_shell_ready(self.exec_command(shell_ready(pid)))

    def program_host(self, max_running: int, gate: GateSetting) -> RemotePrograms:
        """Programs on the host, always under its Perl gate (``schemux.hosts.programs.remote``):
        the gate setting is this machine's."""
        self._programs = RemotePrograms(self)
        return self._programs

    def facts_helper(self) -> FactsHelper | None:
        return self._programs
