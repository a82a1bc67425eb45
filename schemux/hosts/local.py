"""This machine as a host: a tmux argv runs as it is, its pids and files are this
process's own, and the facts a host answers are read here (the tmux on PATH, the home
directory, a new login shell's readiness from ``/proc``)."""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Mapping
from concurrent.futures import Executor

import anyio

from schemux.config import GateSetting
from schemux.errors import TmuxUnavailable
from schemux.hosts.programs.gate import choose_gate
from schemux.hosts.programs.host import LocalPrograms
from schemux.hosts.protocol import FactsHelper
from schemux.system.processes import executable, read_stat
from schemux.system.tethered import tethered
from schemux.versions import MINIMUM_VERSION, parse_version


def tmux_binary() -> str:
    path = shutil.which("tmux")
    if path is None:
        raise TmuxUnavailable("tmux was not found on PATH; install tmux 3.3 or newer")
    return path


def check_tmux() -> str:
    """Return ``tmux -V``'s text, or raise TmuxUnavailable saying why tmux cannot serve.

    Runs once at start-up, before any event loop exists.
    """
    try:
        done = subprocess.run([tmux_binary(), "-V"], capture_output=True, text=True, check=False)
    except OSError as error:
        raise TmuxUnavailable(f"tmux cannot be run: {error}") from None
    text = done.stdout.strip()
    if parse_version(text) < MINIMUM_VERSION:
        raise TmuxUnavailable(f"{text} is too old: schemux needs tmux 3.3 or newer")
    return text


def home_directory(env: Mapping[str, str]) -> str:
    """Where the login shell starts: ``$HOME``, else the passwd entry's, else /."""
    home = env.get("HOME")
    if home and os.path.isdir(home):
        return home
    try:
        return pwd.getpwuid(os.getuid()).pw_dir or "/"
    except KeyError:
        return "/"


def shell_holds_terminal(pid: int, tmux_binary: str) -> bool:
    """Whether the pane's process ``pid`` is its shell (no longer the tmux server it was
    forked from) and holds its terminal's foreground (no startup file's command runs).
    True when /proc cannot tell: there is nothing to wait for then."""
    try:
        running = executable(pid)
        stat = read_stat(pid)
    except (OSError, ValueError):
        return True
    return running != os.path.realpath(tmux_binary) and stat.pgrp == stat.tpgid


async def until_shell_ready(
    pid: int, tmux_binary: str, *, within: float = 5.0, steady: float = 0.1
) -> None:
    """Return once the agent's new login shell has held its terminal for ``steady``
    seconds (or after ``within``). Until it has exec'd, the pane runs a copy of the tmux
    server, and while its startup files run a command, that command runs: a first call
    coming at once would find either and refuse the pane."""
    loop = asyncio.get_running_loop()
    since: float | None = None
    with anyio.move_on_after(within):
        while True:
            if not shell_holds_terminal(pid, tmux_binary):
                since = None
            elif since is None:
                since = loop.time()
            elif loop.time() - since >= steady:
                return
            await asyncio.sleep(0.01)


class LocalHost:
    """This machine: a tmux argv runs as it is."""

    kind = "local"
    pids_here = True
    files_here = True
    connection = 0  # no connection: the way here is never lost
    tmux_version = None  # no connect reads it: the tmux a command runs is looked up each time

    @property
    def python(self) -> str | None:
        """schemux's own interpreter, where this process may run it again (a process
        whose user cannot reach it, as one started by root with its capabilities, may
        not)."""
        executable = sys.executable
        return executable if executable and os.access(executable, os.X_OK) else None

    def describe(self) -> str:
        return "this machine"

    def where(self) -> str:
        return ""

    def label(self) -> str:
        return "local"

    def tmux_binary(self) -> str:
        return tmux_binary()

    def command(self, argv: list[str]) -> list[str]:
        return argv

    def client_command(self, argv: list[str]) -> list[str]:
        """A tmux client that lives as long as schemux (a control client): it gets SIGTERM
        when schemux dies (``schemux.system.tethered``)."""
        return tethered(argv)

    def exec_command(self, argv: list[str]) -> list[str]:
        return argv

    async def connect(self, executor: Executor | None = None) -> None:
        """Nothing to connect: no thread is asked for."""

    def check_tmux(self) -> str:
        return check_tmux()

    def lost(self, since: int | None = None, status: int | None = None) -> str | None:
        return None

    def reached(self, status: int) -> bool:
        return True

    def home(self) -> str:
        return home_directory(os.environ)

    async def until_shell_ready(self, pid: int, tmux_binary: str) -> None:
        await until_shell_ready(pid, tmux_binary)

    def program_host(self, max_running: int, gate: GateSetting) -> LocalPrograms:
        return LocalPrograms(max_running, choose_gate(gate))

    def facts_helper(self) -> FactsHelper | None:
        """None: this machine's ``/proc`` is read directly (``schemux.shell.idle``)."""
        return None

    def close(self) -> None:
        """Nothing to end."""


LOCAL = LocalHost()
