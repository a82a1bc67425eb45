"""Programs that schemux starts, each in a pane of its own, and everything they print.

How one runs, and why each step:

* **A gate** (``schemux.program_gates``: a Perl script, or Python's where there is no
  perl) is the pane's process, with the program's argv, start directory and environment
  as its own arguments (no shell parses them, tmux expands none of them). It holds the
  program until schemux has the output copy in place, then runs it as its child, in the
  start directory, with stdin (``input``, a private file) and stderr (``separateStderr``)
  redirected. When the program ends it writes an end marker to the terminal: a private
  OSC sequence with the program's exit status (128+N for signal N, as the contracts read
  it) and that status's token from a table of random tokens that came to the gate
  through a one-shot FIFO before the program started and is nowhere the program can
  read, so a program cannot fake its end. The marker is the last thing the pane prints,
  so when it comes out of the copy every byte the program wrote is in (control mode's
  ``%output`` lost those), and the status is right at once (tmux 3.3a could report it
  seconds late). The gate is a child subreaper: stopping ends the whole process tree,
  daemons that ``setsid`` included, and so does the pane going away.
* **The copy.** ``pipe-pane -O`` writes the pane's bytes into a FIFO in a private runtime
  directory; a task reads it as it arrives, turns the bytes into text
  (``schemux.terminal_text``) and appends that to the program's text file on disk.
  Readers wake on each append, not by polling.
* **Reads** address the text file by byte offset: a cursor is that offset, tagged with
  the program's own salt so that one program's cursor is refused by another.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import signal as signals
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import anyio

from schemux.abandoned import PANE_OPTION, make_runtime_directory, own_identity
from schemux.errors import SchemuxError
from schemux.owned_session import OWNED_SESSION
from schemux.program_end import Ending, Outcome, Report, ending_from_marker, scan
from schemux.program_gate import TABLE_BYTES
from schemux.program_gates import GateSetting, choose_gate
from schemux.program_pages import Page, page_at
from schemux.terminal_text import TextFilter
from schemux.tmux import TmuxServer
from schemux.tmux_command import THEN

STOP_GRACE_SECONDS = 2.0
EXIT_GRACE_SECONDS = 1.0  # at exit, SIGTERM's grace: every exit path ends within ~2 s
GATE_GRACE_SECONDS = 2.0
_CURSOR_TAG_BITS = 16

logger = logging.getLogger("schemux")


@dataclass(frozen=True)
class ProgramLimits:
    """What protects the machine: programs running at once, ended programs whose output
    stays readable, bytes of text kept per program, and lifetimes."""

    max_running: int = 16
    retained_ended: int = 32
    output_limit: int = 64 * 1024 * 1024
    default_lifetime: float = 600.0
    max_lifetime: float = 24 * 3600.0


@dataclass(frozen=True)
class ProgramSpec:
    argv: list[str]
    start_directory: str
    environment: dict[str, str]
    stdin_text: str | None = None
    separate_stderr: bool = False
    from_pane: str | None = None
    from_session: str | None = None
    placement: str = "window"
    width: int | None = None
    height: int | None = None
    lifetime: float = 600.0
    keep: bool = False
    hold: bool = False


@dataclass
class Program:
    id: str
    server: TmuxServer
    directory: Path
    pane_id: str = ""
    gate_pid: int = 0
    gate_fd: int = -1  # a pidfd of the gate: signals reach it, never a reused pid
    gate_exited: asyncio.Event = field(default_factory=asyncio.Event)
    keep: bool = False
    hold: bool = False
    # the gate's tokens, one per report it can make (schemux.program_gate)
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(TABLE_BYTES), repr=False)
    text_size: int = 0
    output_done: bool = False
    output_cut: bool = False
    lost_end: bool = False
    ending: Ending | None = None
    ended_by: Outcome | None = None  # stopped, expired or timed_out while schemux ends it
    fds: list[int] = field(default_factory=list)  # the secret FIFO's, the directory's
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    lifetime_task: asyncio.Task[None] | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def text_path(self) -> Path:
        return self.directory / "text"

    @property
    def stderr_path(self) -> Path:
        return self.directory / "stderr"

    @property
    def salt(self) -> int:
        return zlib.crc32(self.id.encode()) & ((1 << _CURSOR_TAG_BITS) - 1)

    @property
    def finished(self) -> bool:
        """Ended, and every byte of its output copied."""
        return self.ending is not None and self.output_done

    def cursor_for(self, offset: int) -> int:
        return (offset << _CURSOR_TAG_BITS) | self.salt

    def offset_of(self, cursor: int) -> int:
        if cursor == 0:
            return 0
        if cursor & ((1 << _CURSOR_TAG_BITS) - 1) != self.salt:
            raise SchemuxError(
                f"cursor {cursor} is not one that read_program returned for {self.id}",
                suggestion="pass the cursor of this program's previous read, or omit it",
            )
        offset = cursor >> _CURSOR_TAG_BITS
        if offset > self.text_size:
            raise SchemuxError(
                f"cursor {cursor} is past the end of {self.id}'s output",
                suggestion="pass the cursor of the previous read, or omit it",
            )
        return offset

    def changed(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._changed.wait()


class ProgramStore:
    """The programs of one running schemux, their output in a private runtime directory
    (mode 0700, named after this process so that a later schemux can reap it once this
    one is gone) that ``close`` removes."""

    def __init__(self, limits: ProgramLimits | None = None, gate: GateSetting = "auto") -> None:
        self.limits = limits or ProgramLimits()
        self.gate = choose_gate(gate)
        self._programs: OrderedDict[str, Program] = OrderedDict()
        self._starting = 0  # slots taken by starts still under way
        self._root: Path | None = None
        # opening a FIFO blocks until its writer opens it: one thread per running program
        # at most, of its own, so that nothing else in the process can starve the copies
        self._openers = ThreadPoolExecutor(self.limits.max_running, "schemux-copy")

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = make_runtime_directory()
        return self._root

    def get(self, program_id: str) -> Program:
        program = self._programs.get(program_id)
        if program is None:
            raise SchemuxError(
                f"no program {program_id!r}: it was never started here, was stopped, or its "
                "output was let go after enough later programs ended",
                suggestion="start it again with start_program",
            )
        return program

    def lookup_pane(self, server: TmuxServer, pane_id: str) -> str | None:
        """The id of the program running in ``pane_id`` of ``server``, if schemux started
        one there."""
        for program in self._programs.values():
            if (
                program.pane_id == pane_id
                and program.server.address == server.address
                and program.ending is None
            ):
                return program.id
        return None

    async def start(self, server: TmuxServer, spec: ProgramSpec) -> Program:
        # the slot is taken before the first await: concurrent starts cannot overrun it
        running = sum(1 for p in self._programs.values() if p.ending is None) + self._starting
        if running >= self.limits.max_running:
            raise SchemuxError(
                f"{running} programs run already, the most this server allows",
                suggestion="stop one with stop_program, or wait for one to end",
            )
        self._starting += 1
        try:
            program_id = f"p{secrets.token_hex(6)}"
            directory = self.root / program_id
            directory.mkdir(mode=0o700)
            program = Program(program_id, server, directory, keep=spec.keep, hold=spec.hold)
            try:
                await self._launch(program, spec)
            except BaseException:
                await _unstoppable(self.discard(program))
                raise
            self._programs[program_id] = program
        finally:
            self._starting -= 1
        program.lifetime_task = self._supervise(program, self._expire(program, spec.lifetime))
        return program

    async def _launch(self, program: Program, spec: ProgramSpec) -> None:
        server, directory = program.server, program.directory
        os.mkfifo(directory / "copy", 0o600)
        os.mkfifo(directory / "secret", 0o600)
        # read-write: opening does not wait for the gate, and the FIFO keeps what is
        # written until the gate reads it (held open until the program's end)
        secret_fd = os.open(directory / "secret", os.O_RDWR | os.O_NONBLOCK)
        program.fds.append(secret_fd)
        program.text_path.touch(0o600)
        if spec.separate_stderr:
            program.stderr_path.touch(0o600)
        stdin_path = ""
        if spec.stdin_text is not None:
            stdin_file = directory / "stdin"
            await asyncio.to_thread(stdin_file.write_text, spec.stdin_text, "utf-8")
            stdin_path = str(stdin_file)
        sized = bool(spec.width or spec.height)
        # tmux 3.3 applies a window resize to the pane's terminal only after a delay, so a
        # program sized by resize-window would start at the old size: in schemux's own
        # session (whose only clients ignore size), a new window is made at the session's
        # default-size, so that is set for that one new-window and unset in the same call
        own = spec.from_pane is None
        sizing = (
            ["set-option", "-t", f"={OWNED_SESSION}:", "default-size",
             f"{spec.width or 80}x{spec.height or 24}", THEN]
            if own and sized else []
        )  # fmt: skip
        unsizing = (
            [THEN, "set-option", "-u", "-t", f"={OWNED_SESSION}:", "default-size"]
            if own and sized
            else []
        )
        gate = self.gate.command(
            directory, spec.start_directory, stdin_path,
            str(program.stderr_path) if spec.separate_stderr else "",
            STOP_GRACE_SECONDS, spec.environment, spec.argv,
        )  # fmt: skip
        # "-c /": tmux expands formats in -c, so the start directory goes to the gate
        created = await server.run(
            *sizing, *_placement(spec), "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}",
            "-c", "/", *gate, *unsizing,
        )  # fmt: skip
        pane_id, window_id, pid = created[-1].split()
        program.pane_id, program.gate_pid = pane_id, int(pid)
        program.gate_fd = os.pidfd_open(program.gate_pid)
        # the copy's command is expanded by tmux and run by sh: its path is digits and
        # slashes only, through a descriptor of the program's directory held open for it
        directory_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        program.fds.append(directory_fd)
        copy_path = f"/proc/{os.getpid()}/fd/{directory_fd}/copy"
        self._supervise(program, self._pump(program))
        self._supervise(program, self._watch_gate(program))
        setup = [
            "set-option", "-w", "-t", window_id, "remain-on-exit", "on", THEN,
            "set-option", "-p", "-t", pane_id, PANE_OPTION, own_identity(),
        ]  # fmt: skip
        if sized and not own:
            size = [*(["-x", str(spec.width)] if spec.width else [])]
            size += ["-y", str(spec.height)] if spec.height else []
            if spec.placement == "split":
                setup += [THEN, "resize-pane", "-t", pane_id, *size]
            else:
                setup += [THEN, "resize-window", "-t", window_id, *size]
        await server.run(*setup, THEN, "pipe-pane", "-O", "-t", pane_id, f"exec cat > {copy_path}")
        if program.ending is not None:
            raise SchemuxError(
                f"the pane of {program.id} went away before its program started",
                suggestion="start it again, and leave its pane alone until it ends",
            )
        # the gate lets the program run; one write of PIPE_BUF bytes is all or nothing, and
        # the FIFO (empty, at least a page) takes it
        try:
            written = os.write(secret_fd, program.secret)
        except OSError:
            written = 0
        if written != len(program.secret):
            raise SchemuxError(
                f"the gate of {program.id} could not be told to start it",
                suggestion="start it again",
            )

    def _supervise(self, program: Program, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run ``work`` for ``program``; should it fail, the program ends, visibly gone."""
        task = asyncio.ensure_future(work)
        program.tasks.append(task)
        task.add_done_callback(lambda done: self._task_done(program, done))
        return task

    def _task_done(self, program: Program, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:
            return
        logger.error("program %s: %s failed", program.id, task.get_coro(),
                     exc_info=task.exception())  # fmt: skip
        program.lost_end = True
        program.output_done = True
        self._end(program, Ending("gone", None, None))
        _signal(program, signals.SIGHUP)  # the gate ends the program's tree

    async def _watch_gate(self, program: Program) -> None:
        """The gate's process ending is the last word: its marker is then in the copy, or
        will never be (it was killed). If the copy has not ended a moment after, close it,
        so that the program ends as gone, not never."""
        await _exited(program.gate_fd)
        program.gate_exited.set()
        os.close(program.gate_fd)  # nothing is left to signal
        program.gate_fd = -1
        await self._wait(program, lambda: program.output_done, GATE_GRACE_SECONDS)
        if not program.output_done:  # a dead pane keeps its pipe: only its end closes it
            await _kill_pane(program)

    async def _pump(self, program: Program) -> None:
        """Copy the pane's bytes to the text file until the end marker or the copy's end."""
        # opening blocks until pipe-pane's cat opens the other end: a thread waits for it
        loop = asyncio.get_running_loop()
        fd = await loop.run_in_executor(
            self._openers, os.open, program.directory / "copy", os.O_RDONLY
        )
        os.set_blocking(fd, False)
        reader = asyncio.StreamReader(limit=1 << 20)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
        )
        text_filter = TextFilter()
        key = program.secret
        pending = b""
        report: Report | None = None
        try:
            with program.text_path.open("ab") as text_file:
                while report is None:
                    chunk = await reader.read(1 << 16)
                    if not chunk:
                        break
                    data, pending, report = scan(pending + chunk, key)
                    self._append(program, text_file, text_filter.feed(data))
                if report is None:
                    self._append(program, text_file, text_filter.feed(pending))
                self._append(program, text_file, text_filter.finish())
        finally:
            transport.close()
        program.output_done = True
        if report is not None:
            self._end(program, ending_from_marker(*report))
            if not program.hold:  # run_program releases it once it has read the screen
                await self.release(program)
        else:  # the copy ended without the marker: the pane was removed from outside
            program.lost_end = True
            self._end(program, Ending("gone", None, None))

    def _append(self, program: Program, text_file: BinaryIO, text: str) -> None:
        if not text or program.output_cut:
            return
        data = text.encode()
        room = self.limits.output_limit - program.text_size
        if len(data) > room:
            data = data[:room]
            cut = data.rfind(b"\n") + 1  # cut on a line break
            data = data[:cut]
            program.output_cut = True
        text_file.write(data)
        text_file.flush()
        program.text_size += len(data)
        program.changed()

    def _end(self, program: Program, ending: Ending) -> None:
        if program.ending is not None:
            return
        if program.ended_by is not None:
            ending = Ending(program.ended_by, ending.exit_status, ending.signal)
        program.ending = ending
        _close_all(program.fds)  # the secret was read, the copy opened, or never will be
        if program.lifetime_task is not None and not program.keep:
            program.lifetime_task.cancel()  # a kept pane goes when its lifetime does
        program.changed()
        self._retire_old()

    async def wait_end(self, program: Program, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the program's end; whether it came."""
        return await self._wait(program, lambda: program.ending is not None, timeout)

    @staticmethod
    async def _wait(program: Program, done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not done() and time.monotonic() < deadline:
            await program.wait_change(deadline - time.monotonic())
        return done()

    async def release(self, program: Program) -> None:
        """Let the gate go (it holds its pane after the marker, and ends whatever the
        program left running), then close the copy and the pane as after any end."""
        _signal(program, signals.SIGUSR1)
        if program.keep:  # the pane stays for a person: no longer a program's
            with contextlib.suppress(SchemuxError):
                await program.server.run(
                    "pipe-pane", "-t", program.pane_id, THEN,
                    "set-option", "-p", "-u", "-t", program.pane_id, PANE_OPTION,
                )  # fmt: skip
        else:
            await _kill_pane(program)
        if program.gate_fd >= 0:  # when a call returns, nothing of the program is left
            await _wait_for(program.gate_exited, 1.0)

    def _retire_old(self) -> None:
        """Let the output of the oldest ended programs go, beyond the retention count."""
        ended = [p for p in self._programs.values() if p.finished]
        for program in ended[: max(0, len(ended) - self.limits.retained_ended)]:
            # its tasks are done, but for a kept pane's lifetime, which still removes it
            del self._programs[program.id]
            shutil.rmtree(program.directory, ignore_errors=True)

    async def _expire(self, program: Program, lifetime: float) -> None:
        await asyncio.sleep(lifetime)
        if not await self.terminate(program, "expired") and program.keep:
            await _kill_pane(program)  # ended before: only its pane stayed

    async def terminate(
        self, program: Program, outcome: Outcome, patience: float = STOP_GRACE_SECONDS + 1.0
    ) -> bool:
        """End a running program and everything it started: its gate sends SIGTERM to the
        whole tree, then SIGKILL after its grace. After ``patience`` seconds without an
        end, the pane goes (and the gate kills the tree at once). False when it had ended."""
        if program.ending is not None:
            return False
        program.ended_by = outcome
        _signal(program, signals.SIGUSR2)
        if not await self.wait_end(program, patience):
            await _kill_pane(program)
            if not await self.wait_end(program, 1.0):  # its end will never be told
                program.lost_end = True
                self._end(program, Ending(outcome, None, None))
        return True

    async def read(
        self, program: Program, cursor: int, max_lines: int | None, timeout: float
    ) -> Page:
        offset = program.offset_of(cursor)
        deadline = time.monotonic() + timeout
        while True:
            page = await page_at(program, offset, max_lines)
            if page is not None:
                return page
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Page("", program.cursor_for(offset), False)
            await program.wait_change(remaining)

    async def stop(self, program: Program) -> tuple[Ending, bool]:
        was_running = await self.terminate(program, "stopped")
        assert program.ending is not None
        await self.discard(program)
        return program.ending, was_running

    async def discard(self, program: Program, keep_pane: bool = False) -> None:
        """Remove the program's pane (unless ``keep_pane``) and forget it, once its gate
        has ended the program's whole tree and exited (or a second passed)."""
        if program.pane_id and not keep_pane:
            await _kill_pane(program)
        if program.gate_fd >= 0:
            await _wait_for(program.gate_exited, 1.0)
        self.forget(program)

    def forget(self, program: Program) -> None:
        self._programs.pop(program.id, None)
        for task in program.tasks:
            if not task.done():
                task.cancel()
        # a copy that never began has a thread blocked opening the FIFO: open the other
        # end, so that it returns
        with contextlib.suppress(OSError):
            os.close(os.open(program.directory / "copy", os.O_WRONLY | os.O_NONBLOCK))
        if program.gate_fd >= 0:
            program.fds.append(program.gate_fd)
            program.gate_fd = -1
        _close_all(program.fds)
        shutil.rmtree(program.directory, ignore_errors=True)

    async def close(self) -> None:
        """End every program still running, all at once, each with its whole tree, and
        remove the runtime directory: about two seconds at most, however they resist."""
        programs = list(self._programs.values())
        await asyncio.gather(*(self._close_one(program) for program in programs))
        self._openers.shutdown(wait=False)
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)

    async def _close_one(self, program: Program) -> None:
        if program.ending is None:
            program.ended_by = "stopped"
            _signal(program, signals.SIGUSR2)
            await self.wait_end(program, EXIT_GRACE_SECONDS)
        await self.discard(program)


async def _unstoppable(work: Coroutine[Any, Any, None]) -> None:
    """Clean-up that a cancelled call still carries to its end."""
    with anyio.CancelScope(shield=True):
        await work


async def _kill_pane(program: Program) -> None:
    with contextlib.suppress(SchemuxError):
        await program.server.run("kill-pane", "-t", program.pane_id)


def _close_all(fds: list[int]) -> None:
    while fds:
        os.close(fds.pop())


def _signal(program: Program, signum: int) -> None:
    if program.gate_fd >= 0:
        with contextlib.suppress(OSError):
            signals.pidfd_send_signal(program.gate_fd, signum)


async def _exited(pidfd: int) -> None:
    """Return once the process of ``pidfd`` has exited (a pidfd is readable then). It
    watches a duplicate of its own, so that whoever holds ``pidfd`` may close it."""
    loop = asyncio.get_running_loop()
    gone = asyncio.Event()
    fd = os.dup(pidfd)
    loop.add_reader(fd, gone.set)
    try:
        await gone.wait()
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def _wait_for(event: asyncio.Event, timeout: float) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            await event.wait()


def _placement(spec: ProgramSpec) -> list[str]:
    if spec.from_pane is None:
        return ["new-window", "-t", f"={OWNED_SESSION}:"]
    if spec.placement == "split":
        return ["split-window", "-t", spec.from_pane]
    return ["new-window", "-t", f"{spec.from_session}:"]
