"""schemux.shell.barrier against a real tmux: the wait ends only once tmux has read
what was written to the pane's terminal before it, and leaves the terminal as it was."""

from __future__ import annotations

import array
import fcntl
import os
import signal
import termios
import time
from pathlib import Path

import anyio
import pytest

from schemux.shell.barrier import until_tmux_read
from tests.support import new_pane, pane_format, tmux, until

pytestmark = pytest.mark.anyio

# a program holding its terminal in its own modes, reading nothing (as a shell's hook
# holds its shell, waiting on its pipe)
HOLDER = "stty -icanon -echo; exec sleep 300"


def modes(tty: str) -> list[object]:
    fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY)
    try:
        return termios.tcgetattr(fd)
    finally:
        os.close(fd)


def unread_input(tty: str) -> int:
    """Bytes typed into the terminal that nothing has read yet."""
    fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY)
    try:
        count = array.array("i", [0])
        fcntl.ioctl(fd, termios.FIONREAD, count)
        return count[0]
    finally:
        os.close(fd)


async def test_the_wait_ends_once_tmux_read_what_came_before_it(
    tmux_socket: str, anyio_backend: str
) -> None:
    pane = new_pane(tmux_socket, command=HOLDER)
    tty = pane_format(pane, "#{pane_tty}")
    await until(lambda: not modes(tty)[3] & termios.ICANON)  # type: ignore[operator]
    before = modes(tty)
    server = int(pane_format(pane, "#{pid}"))
    os.kill(server, signal.SIGSTOP)  # tmux reads nothing: the answer cannot come
    try:
        Path(tty).write_text("written-before\n")  # as a program in the pane writes
        async with anyio.create_task_group() as group:
            ended: list[float] = []

            async def wait() -> None:
                await until_tmux_read(tty)
                ended.append(time.monotonic())

            group.start_soon(wait)
            await anyio.sleep(0.5)
            assert not ended
            resumed = time.monotonic()
            os.kill(server, signal.SIGCONT)
        assert ended[0] - resumed < 1.5  # answered, not the 2-s give-up
    finally:
        os.kill(server, signal.SIGCONT)
    # tmux had the line before it answered: it is on the screen at once
    assert "written-before" in tmux(tmux_socket, "capture-pane", "-p", "-t", pane.pane_id)
    assert modes(tty) == before
    assert unread_input(tty) == 0  # the answer was taken, all of it


async def test_a_stopped_tmux_is_waited_for_past_the_give_up(
    tmux_socket: str, anyio_backend: str
) -> None:
    """Given up on, the answer would come later into the shell's input: while tmux is
    stopped the wait goes on, and takes the answer once tmux goes on."""
    pane = new_pane(tmux_socket, command=HOLDER)
    tty = pane_format(pane, "#{pane_tty}")
    await until(lambda: not modes(tty)[3] & termios.ICANON)  # type: ignore[operator]
    server = int(pane_format(pane, "#{pid}"))
    os.kill(server, signal.SIGSTOP)
    try:
        async with anyio.create_task_group() as group:
            ended: list[float] = []

            async def wait() -> None:
                await until_tmux_read(tty, within=0.2, server_pid=server)
                ended.append(time.monotonic())

            group.start_soon(wait)
            await anyio.sleep(0.8)  # four times the give-up
            assert not ended
            resumed = time.monotonic()
            os.kill(server, signal.SIGCONT)
        assert ended[0] - resumed < 1.5
    finally:
        os.kill(server, signal.SIGCONT)
    assert unread_input(tty) == 0  # the answer was taken


async def test_answers_to_queries_written_before_are_taken_with_its_own(
    tmux_socket: str, anyio_backend: str
) -> None:
    """tmux's answers to what a program asked (a cursor position, device attributes, a
    colour, its version) come before the barrier's: all are read, none left for the
    shell's line editor, and nothing typed after the barrier's answer is taken."""
    pane = new_pane(tmux_socket, command=HOLDER)
    tty = pane_format(pane, "#{pane_tty}")
    await until(lambda: not modes(tty)[3] & termios.ICANON)  # type: ignore[operator]
    Path(tty).write_bytes(b"\x1b[6n\x1b[>c\x1b[c\x1b]11;?\x07\x1b]10;?\x1b\\\x1b[>0q")
    with anyio.fail_after(5):
        await until_tmux_read(tty)
    assert unread_input(tty) == 0
    tmux(tmux_socket, "send-keys", "-t", pane.pane_id, "-l", "typed-after")
    await until(lambda: unread_input(tty) == len("typed-after"))


async def test_a_terminal_that_cannot_be_opened_is_no_wait(anyio_backend: str) -> None:
    with anyio.fail_after(0.5):
        await until_tmux_read("/dev/pts/no-such-terminal")
        await until_tmux_read("")
