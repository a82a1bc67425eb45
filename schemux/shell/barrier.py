"""Wait until tmux has taken in all that was written to a pane's terminal, and take tmux's
answers to the queries in it off the terminal's input.

The terminal hands what a shell writes to tmux a moment after the shell wrote it (a
kernel work item, late on a busy machine), so a hook's message can reach schemux before
tmux has the line or output written just before it. A status query (``ESC [ 5 n``)
written to the terminal, as a program in the pane would write it, is answered by tmux
only once it has parsed everything before it: its answer (``ESC [ 0 n``) comes back as the
terminal's input after tmux's answers to every query the command wrote (a cursor
position, device attributes, a colour: a ``cat`` of a log can hold them). All of it is
read here, with the terminal's line editing and echo off for that moment, then restored:
left there, those answers would reach the shell's line editor as keys typed, and the
next command's line would begin with them. The shell must be held (by its hook, waiting
for schemux) meanwhile: nothing else reads or changes the terminal then, but keys typed
into it at that moment, which the query's read takes.

bash's and zsh's hooks ask themselves, with their ``read``; fish's ``read`` is its line
editor on a terminal, so schemux asks for fish's hooks (``HookedShell.asks_terminal``),
and for the typed wrapper's shells on this machine. The terminal is not schemux's
controlling terminal, so no job-control signal comes of reading it or setting its modes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios
from typing import Any

from schemux.system.processes import controlling_terminal, stat_of

STATUS_QUERY = b"\x1b[5n"
STATUS_ANSWER = b"\x1b[0n"
WITHIN_SECONDS = 2.0
STOPPED_SECONDS_AT_MOST = 120.0
STOPPED_POLL_SECONDS = 0.25


async def until_tmux_read(
    tty: str, within: float = WITHIN_SECONDS, server_pid: int | None = None
) -> None:
    """Return once tmux answered a status query written to ``tty`` after all that came
    before it, with every byte of input before the answer read and dropped (or after
    ``within`` seconds, or at once where the terminal cannot be opened: a pane gone).

    While the tmux server ``server_pid`` is stopped (SIGSTOP: a debugger, a host's fault),
    the wait goes on past ``within``, up to ``STOPPED_SECONDS_AT_MOST``, and ``within``
    more once it continues: an answer given up on comes later all the same, into the
    shell's input as keys typed at its prompt (``n`` ran as a command so)."""
    try:
        fd = os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        saved = termios.tcgetattr(fd)
        termios.tcsetattr(fd, termios.TCSANOW, _answer_modes(saved))
        try:
            os.write(fd, STATUS_QUERY)
            await _until_answered(fd, within, server_pid)
        finally:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
    except (OSError, termios.error):
        return  # the pane went meanwhile
    finally:
        os.close(fd)


async def _until_answered(fd: int, within: float, server_pid: int | None) -> None:
    reading = asyncio.ensure_future(_read_answer(fd))
    try:
        await asyncio.wait({reading}, timeout=within)
        limit = asyncio.get_running_loop().time() + STOPPED_SECONDS_AT_MOST
        while (
            not reading.done()
            and asyncio.get_running_loop().time() < limit
            and is_stopped(server_pid)
        ):
            await asyncio.wait({reading}, timeout=STOPPED_POLL_SECONDS)
            if not is_stopped(server_pid):  # it goes on: its answer comes as at first
                await asyncio.wait({reading}, timeout=within)
    finally:
        reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reading


def is_stopped(pid: int | None) -> bool:
    """Whether process ``pid`` (on this machine) is stopped by a signal or a tracer."""
    found = stat_of(pid) if pid is not None else None
    return found is not None and found.state in ("T", "t")


def server_of(shell_pid: int) -> int | None:
    """The process that started a pane's shell, the tmux server (None when gone)."""
    found = stat_of(shell_pid)
    return found.ppid if found is not None else None


def terminal_of(shell_pid: int) -> str:
    """The terminal a shell on this machine reads (its controlling terminal), or "" when
    it is gone."""
    try:
        return controlling_terminal(shell_pid)
    except OSError:
        return ""


def _answer_modes(modes: list[Any]) -> list[Any]:
    """``modes`` (``termios.tcgetattr``'s list) with line editing and echo off, a read
    taking each byte as it comes."""
    characters = list(modes[6])
    characters[termios.VMIN] = 1
    characters[termios.VTIME] = 0
    local = modes[3] & ~(termios.ICANON | termios.ECHO)
    return [*modes[:3], local, *modes[4:6], characters]


async def _read_answer(fd: int) -> None:
    """Read up to the answer a byte at a time, so that no byte after it is taken."""
    last = b""
    while True:
        try:
            byte = os.read(fd, 1)
        except BlockingIOError:
            await _until_readable(fd)
            continue
        if not byte:
            return
        last = (last + byte)[-len(STATUS_ANSWER) :]
        if last == STATUS_ANSWER:
            return


async def _until_readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    readable: asyncio.Future[None] = loop.create_future()
    loop.add_reader(fd, _done, readable)
    try:
        await readable
    finally:
        loop.remove_reader(fd)


def _done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
