"""Wait until tmux has taken in all that was written to a pane's terminal.

The terminal hands what a shell writes to tmux a moment after the shell wrote it (a
kernel work item, late on a busy machine), so a hook's message can reach schemux before
tmux has the line or output written just before it. A cursor query written to the
terminal, as a program in the pane would write it, is answered by tmux only once it has
parsed everything before it; its answer comes back as the terminal's input, read here
with the terminal's line editing and echo off for that moment, then restored. The shell
must be held (by its hook, waiting for schemux) meanwhile: nothing else reads or changes
the terminal then, but keys typed into it at that moment, which the query's read takes.

bash's and zsh's hooks ask themselves, with their ``read``; fish's ``read`` is its line
editor on a terminal, so schemux asks for fish's hooks (``HookedShell.asks_terminal``).
The terminal is not schemux's controlling terminal, so no job-control signal comes of
reading it or setting its modes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios
from typing import Any

CURSOR_QUERY = b"\x1b[6n"
ANSWER_END = b"R"
WITHIN_SECONDS = 2.0


async def until_tmux_read(tty: str, within: float = WITHIN_SECONDS) -> None:
    """Return once tmux answered a cursor query written to ``tty`` after all that came
    before it (or after ``within`` seconds, or at once where the terminal cannot be
    opened: a pane gone)."""
    try:
        fd = os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        saved = termios.tcgetattr(fd)
        termios.tcsetattr(fd, termios.TCSANOW, _answer_modes(saved))
        try:
            os.write(fd, CURSOR_QUERY)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_read_answer(fd), within)
        finally:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
    except (OSError, termios.error):
        return  # the pane went meanwhile
    finally:
        os.close(fd)


def _answer_modes(modes: list[Any]) -> list[Any]:
    """``modes`` (``termios.tcgetattr``'s list) with line editing and echo off, a read
    taking each byte as it comes."""
    characters = list(modes[6])
    characters[termios.VMIN] = 1
    characters[termios.VTIME] = 0
    local = modes[3] & ~(termios.ICANON | termios.ECHO)
    return [*modes[:3], local, *modes[4:6], characters]


async def _read_answer(fd: int) -> None:
    """Read the answer a byte at a time, so that no byte after it is taken."""
    while True:
        try:
            byte = os.read(fd, 1)
        except BlockingIOError:
            await _until_readable(fd)
            continue
        if byte in (ANSWER_END, b""):
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
