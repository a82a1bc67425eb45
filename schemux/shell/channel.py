"""The line between run_command calls and the hooks of the shell they type into
(``schemux.hooks``), with no process started on either side.

For each hooked shell it types into, a schemux process keeps two pipes, open as long as
it runs (``HookChannels``, kept by the tmux server's ``TmuxServer``). A call arms the
shell by making its armed file (``HookedShell.armed``, named by the shell's pid, in a
private directory): this process's pid, the pipe the hooks write to and the pipe they
read from, and its owner identity. The channel writes that once, into a file of its own
beside it, and a call makes the armed file a hard link to that: a link is a few
microseconds where writing a new file took 0.2-0.4 ms on an ext4 disk, on every call's
path. While that file is there, the shell's hooks open those
pipes through ``/proc/PID/fd`` and tell the call, one line each:

* ``C NONCE``: a command is about to run (before its output);
* ``D NONCE STATUS PASTE EOL``: a command ended with STATUS, before the prompt (or an
  ``exit``); PASTE (``1``/``0``) and EOL (zsh's end-of-line mark, ``-`` for none) as at
  the first prompt (``HookedShell``).

and then wait for the answer, a line holding the message's NONCE (an answer left by a
hook that gave up waiting is no later hook's), so the screen stays still while the call
reads where the output starts or captures it. Without the file the
hooks do nothing but write the OSC 133 marks, so a person's commands in the pane cost no
more than the marks; a line that comes when no call is armed (a hook that read the file
just before the call removed it) is answered at once.

The pipes stay open between calls because a hook may open them a moment after the call
it told has ended: pipes closed then, their numbers taken by the next call's, would leave
it waiting on the next call's pipe. The wait lasts as long as this process and no longer:
a schemux stopped (SIGSTOP, a laptop asleep, a debugger) or slow answers when it goes on,
and its call reads the command's end exactly; its pipes go with it (the hook's ``/proc``
path is gone, or its read sees the end of the pipe). No timer frees the shell meanwhile:
a result lost to a pause is worse than a pane that waits through it. An armed file left
by a process that was killed names an owner that is gone
(``remove_abandoned_armed_files``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
from pathlib import Path

from schemux.hooks import private_directory
from schemux.system.processes import process_name
from schemux.system.runtime_identity import own_identity, owner_alive

COMMAND_STARTS = "C"
COMMAND_ENDED = "D"


class HookChannel:
    """The pipes to one shell's hooks, and whether a call has armed them."""

    def __init__(self, armed: Path) -> None:
        self.armed = armed
        self.loop = asyncio.get_running_loop()
        self._from_shell, from_shell_writer = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._answers, self._to_shell = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._from_shell_writer = from_shell_writer
        self._mark = f"{os.getpid()} {from_shell_writer} {self._answers} {own_identity()}\n"
        # the mark, written once: each arm links the armed file to it (its own name: two
        # channels of one process may reach one shell, by two host names)
        self._marked = armed.with_name(f".{armed.name}.{os.getpid()}.{from_shell_writer}")
        self._marked_written = False
        self._lines: collections.deque[str] | None = None  # a call's, while one is armed
        self._arrived = asyncio.Event()
        self._unread = b""
        self._open = True
        self.loop.add_reader(self._from_shell, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self._from_shell, 4096)
        except BlockingIOError:
            return
        *lines, self._unread = (self._unread + data).split(b"\n")
        for line in lines:
            text = line.decode(errors="replace")
            if self._lines is None:
                self.answer(text)  # no call listens: the hook goes on
            else:
                self._lines.append(text)
                self._arrived.set()

    def arm(self) -> None:
        """Arm the shell's hooks for one call (OSError when its file cannot be written):
        the armed file made a link to the mark, which a hook reads whole or not at all;
        one already there (another schemux's, left) replaced by such a link."""
        if not self._marked_written:
            self._write_mark(self._marked)
            self._marked_written = True
        try:
            os.link(self._marked, self.armed)
        except FileNotFoundError:  # the mark was removed from outside: written again
            self._write_mark(self._marked)
            os.link(self._marked, self.armed)
        except FileExistsError:
            replacing = self._marked.with_name(f"{self._marked.name}.new")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(replacing)
            os.link(self._marked, replacing)
            os.replace(replacing, self.armed)
        except OSError:  # a file system without hard links: the armed file written whole
            self._write_mark(self.armed)
        self._lines = collections.deque()

    def _write_mark(self, path: Path) -> None:
        """The mark written to ``path``, which a reader finds whole or not at all."""
        temporary = self._marked.with_name(f"{self._marked.name}.new")
        temporary.write_text(self._mark)
        temporary.replace(path)

    async def message(self, within: float) -> str | None:
        """The hooks' next line to the armed call, or None when none came within
        ``within`` seconds. (A line is never lost to the timeout: it stays queued.)"""
        lines = self._lines
        if lines is not None and not lines:
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), within)
        return lines.popleft() if lines else None

    def answer(self, message: str) -> None:
        """Let the hook that sent ``message`` go on. A line at a time, read at once, never
        fills the pipe."""
        fields = message.split(" ", 2)
        if len(fields) >= 2 and fields[1].isdigit():
            with contextlib.suppress(OSError):
                os.write(self._to_shell, f"{fields[1]}\n".encode())

    def answer_waiting(self) -> bool:
        """Answer every line the hooks sent the armed call and it did not take (read from
        the pipe now); whether one told the command's end."""
        if self._open:
            self._readable()
        waiting = self._lines or collections.deque()
        if self._lines is not None:
            self._lines = collections.deque()
        for line in waiting:
            self.answer(line)
        return any(line.startswith(COMMAND_ENDED) for line in waiting)

    def disarm(self) -> None:
        """Remove the armed file, if it is still ours (the hooks of the next command, a
        person's or a later call's, then tell nobody), and answer what the call left
        unanswered."""
        if self._lines is None:
            return
        with contextlib.suppress(OSError):
            if self.armed.read_text() == self._mark:
                self.armed.unlink()
        left, self._lines = self._lines, None
        for line in left:
            self.answer(line)

    def close(self) -> None:
        """Disarm, and close the pipes: a hook still waiting for an answer goes on."""
        self.disarm()
        if not self._open:
            return
        self._open = False
        if self._marked_written:
            with contextlib.suppress(OSError):
                os.unlink(self._marked)
        with contextlib.suppress(RuntimeError):  # the loop was closed first
            self.loop.remove_reader(self._from_shell)
        for fd in (self._from_shell, self._from_shell_writer, self._answers, self._to_shell):
            with contextlib.suppress(OSError):
                os.close(fd)


class HookChannels:
    """The channels of one tmux server's hooked shells, kept by its ``TmuxServer``."""

    def __init__(self) -> None:
        self._channels: dict[Path, HookChannel] = {}

    def channel(self, armed: Path) -> HookChannel:
        """The channel to the shell whose armed file is ``armed``, made at its first use
        (in the running event loop: one of an earlier loop is made anew). OSError when the
        armed file's directory is not this user's alone (made anew when missing)."""
        private_directory(armed.parent.parent)
        private_directory(armed.parent)
        found = self._channels.get(armed)
        if found is not None and found.loop is asyncio.get_running_loop():
            return found
        if found is not None:
            found.close()
        self._forget_gone_shells()
        made = self._channels[armed] = HookChannel(armed)
        return made

    def _forget_gone_shells(self) -> None:
        for armed, channel in list(self._channels.items()):
            if not process_name(int(armed.name)):
                channel.close()
                del self._channels[armed]

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()


def remove_abandoned_armed_files(directory: Path) -> list[Path]:
    """Remove the armed files whose owner is gone (a process killed in a call), and the
    marks their channels linked them to."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            with contextlib.suppress(OSError):
                fields = Path(entry.path).read_text().split() if entry.is_file() else []
                if len(fields) == 4 and not owner_alive(fields[3]):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed
