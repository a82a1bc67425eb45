"""Talking to one tmux server by running the tmux client, without blocking the loop.

Every command is an asyncio subprocess; a wait (``wait-for``) is a child process of its
own that is killed when the wait times out or its call is cancelled, so nothing is left
waiting inside tmux.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import subprocess
from dataclasses import dataclass

from schemux.errors import TmuxCommandError, ToolError

MINIMUM_VERSION = (3, 3)


class TmuxUnavailable(Exception):
    """tmux is missing or too old to serve; the message is one line for stderr."""


def tmux_binary() -> str:
    path = shutil.which("tmux")
    if path is None:
        raise TmuxUnavailable("tmux was not found on PATH; install tmux 3.3 or newer")
    return path


def parse_version(text: str) -> tuple[int, int]:
    """``tmux 3.3a`` -> (3, 3); ``tmux next-3.6`` -> (3, 6); ``tmux master`` -> newest."""
    if text.strip().endswith("master"):
        return (999, 0)
    match = re.search(r"(\d+)\.(\d+)", text)
    if match is None:
        raise TmuxUnavailable(f"cannot read the tmux version from {text.strip()!r}")
    return int(match.group(1)), int(match.group(2))


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


@dataclass(frozen=True)
class ServerAddress:
    """Which tmux server: by socket name (``-L``), socket path (``-S``), or tmux's default."""

    socket_name: str | None = None
    socket_path: str | None = None

    def flags(self) -> tuple[str, ...]:
        if self.socket_path is not None:
            return ("-S", self.socket_path)
        if self.socket_name is not None:
            return ("-L", self.socket_name)
        return ()

    def describe(self) -> str:
        if self.socket_path is not None:
            return f"socket path {self.socket_path}"
        if self.socket_name is not None:
            return f"socket name {self.socket_name!r}"
        return "the default socket"


_NO_SERVER = re.compile(r"no server running|error connecting to|No such file or directory")


class TmuxServer:
    """Commands to one tmux server."""

    def __init__(self, address: ServerAddress, binary: str | None = None) -> None:
        self.address = address
        self.binary = binary or tmux_binary()

    def argv(self, *args: str) -> list[str]:
        return [self.binary, *self.address.flags(), *args]

    async def run(self, *args: str) -> list[str]:
        """Run one tmux command (or several joined by ``;`` arguments); return stdout lines.

        Raises ToolError when no server runs there, TmuxCommandError for any other error.
        """
        proc = await asyncio.create_subprocess_exec(
            *self.argv(*args),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await proc.communicate()
        except BaseException:
            await _reap(proc)
            raise
        if proc.returncode != 0:
            raise self._error(args[0], err.decode(errors="replace").strip())
        text = out.decode(errors="surrogateescape")
        return text.split("\n")[:-1] if text else []

    async def wait_for(self, channel: str, timeout: float) -> bool:
        """Wait until ``channel`` is signalled; False when ``timeout`` passed first.

        The waiting client is killed on timeout and on cancellation alike, which also
        removes this waiter from the channel inside tmux.
        """
        proc = await asyncio.create_subprocess_exec(
            *self.argv("wait-for", channel),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(timeout):
                _, err = await proc.communicate()
        except TimeoutError:
            await _reap(proc)
            return False
        except BaseException:
            await _reap(proc)
            raise
        if proc.returncode != 0:
            raise self._error("wait-for", err.decode(errors="replace").strip())
        return True

    def _error(self, command: str, stderr: str) -> ToolError:
        if _NO_SERVER.search(stderr):
            return ToolError(
                f"no tmux server is running on {self.address.describe()} ({stderr})",
                suggestion="start one (for example `tmux "
                + " ".join([*self.address.flags(), "new-session", "-d"])
                + "`) or point schemux at a running server with --socket-name/--socket-path",
            )
        return TmuxCommandError(command, stderr)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Kill a tmux client and wait for it, even while the caller is being cancelled."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    await asyncio.shield(proc.wait())
