"""Programs that schemux starts, each in a pane of its own, and everything they print.

How one runs, and why each step:

* **A gate.** The pane runs a fixed ``sh`` script (``_GATE``) with the program's argv as
  arguments (no shell parses them): it first waits on a private ``tmux wait-for`` channel,
  so nothing runs before the output copy is attached; then it applies stdin (``input``, a
  private file) and stderr (``separateStderr``) redirections, runs the program as its
  child, and writes an end marker to the terminal: a private OSC sequence carrying a token
  and the program's exit status (``$?``, where 128+N means signal N, as the contracts
  read it). The marker is the last thing the pane prints, so when it comes out of the copy
  every byte the program wrote is already in: no byte is lost at the end (control mode's
  ``%output`` lost those, pitfall 1), and the status is right at once, where tmux 3.3a
  could report it seconds late (pitfall 3).
* **The copy.** ``pipe-pane -O`` writes the pane's bytes into a FIFO in a private runtime
  directory; a task reads it as it arrives, keeps the raw bytes nowhere, turns them into
  text (``schemux.terminal_text``) and appends that to the program's text file on disk.
  Readers wake on each append, not by polling.
* **Reads** address the text file by byte offset: a cursor is that offset, tagged with
  the program's own salt so that one program's cursor is refused by another.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import shutil
import signal as signals
import tempfile
import time
import zlib
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from schemux.engine import OWNED_SESSION, THEN
from schemux.errors import ToolError
from schemux.shell_commands import process_exit
from schemux.terminal_text import TextFilter
from schemux.tmux import TmuxServer

PAGE_CHARACTERS = 24_000
STOP_GRACE_SECONDS = 2.0
GATE_GRACE_SECONDS = 2.0
_CURSOR_TAG_BITS = 16
_MARKER_PREFIX = b"\x1b]7777;schemux-end;"

# $0 is the gate's name; then tmux binary, gate channel, token, stdin file or "",
# stderr file or "", and the program's argv (the socket is the first field of $TMUX,
# which tmux sets in every pane). The program runs as the gate's child (not in
# its place) so that the gate outlives it and reports its status; the child sets up its
# own stderr, and the gate's stays /dev/null, so sh's "Segmentation fault" and the like
# never join the output. A program that could not be run leaves sh's own message (exec:
# ...: not found) and is flagged "n" in the marker, as is one whose gate could not reach
# tmux. After the marker the gate waits on its channel once more, holding the pane's
# terminal open until schemux has the marker: tmux 3.3a was seen to lose all output of a
# program whose terminal closed before it read it (and then, its screen too).
_GATE = (
    "tmux_bin=$1 socket=${TMUX%%,*} gate=$2 token=$3 input=$4 errors=$5; shift 5; "
    'end() { printf \'\\033]7777;schemux-end;%s;%s;%s\\007\' "$token" "$1" "$2"; }; '
    '"$tmux_bin" -S "$socket" wait-for "$gate" || { end 125 n; exit 125; }; '
    'if [ -n "$input" ]; then exec < "$input"; fi; '
    'if [ -n "$errors" ]; then exec 3> "$errors"; else exec 3>&2; fi; '
    "exec 2>/dev/null; "
    '(exec 2>&3 3>&-; exec "$@"); status=$?; flag=x; '
    'if [ "$status" -ge 126 ] && [ "$status" -le 127 ] && ! command -v -- "$1" >/dev/null; '
    "then flag=n; fi; "
    'end "$status" "$flag"; '
    '"$tmux_bin" -S "$socket" wait-for "$gate"; '
    'exit "$status"'
)

SIGNAL_NAMES = {int(number): number.name for number in signals.Signals}


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
class Ending:
    outcome: str  # completed, not_started, expired, stopped, gone
    exit_status: int | None
    signal: str | None


def ending_from_marker(status: int, flag: str) -> Ending:
    """The contracts' reading of the gate's report: a program that could not be run is
    not_started; a status above 128 is a signal (so an exit 130 reads as SIGINT)."""
    if flag == "n":
        return Ending("not_started", status, None)
    if status > 128 and status - 128 in SIGNAL_NAMES:
        return Ending("completed", None, SIGNAL_NAMES[status - 128])
    return Ending("completed", status, None)


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
    keep: bool = False
    hold: bool = False
    token: str = field(default_factory=lambda: secrets.token_hex(8))
    text_size: int = 0
    output_done: bool = False
    output_cut: bool = False
    lost_end: bool = False
    ending: Ending | None = None
    ended_by: str | None = None  # "stopped" or "expired" while schemux ends it
    lifetime_task: asyncio.Task[None] | None = None
    pump_task: asyncio.Task[None] | None = None
    watch_task: asyncio.Task[None] | None = None
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
            raise ToolError(
                f"cursor {cursor} is not one that read_program returned for {self.id}",
                suggestion="pass the cursor of this program's previous read, or omit it",
            )
        offset = cursor >> _CURSOR_TAG_BITS
        if offset > self.text_size:
            raise ToolError(
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


@dataclass(frozen=True)
class Page:
    text: str
    cursor: int
    ended: bool


class ProgramStore:
    """The programs of one running schemux, their output in a private runtime directory
    (mode 0700) that ``close`` removes."""

    def __init__(self, limits: ProgramLimits | None = None) -> None:
        self.limits = limits or ProgramLimits()
        self._programs: OrderedDict[str, Program] = OrderedDict()
        self._root: Path | None = None
        # opening a FIFO blocks until its writer opens it: one thread per running program
        # at most, of its own, so that nothing else in the process can starve the copies
        self._openers = ThreadPoolExecutor(self.limits.max_running, "schemux-copy")

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="schemux-"))  # mkdtemp: mode 0700
        return self._root

    def get(self, program_id: str) -> Program:
        program = self._programs.get(program_id)
        if program is None:
            raise ToolError(
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
        running = sum(1 for p in self._programs.values() if p.ending is None)
        if running >= self.limits.max_running:
            raise ToolError(
                f"{running} programs run already, the most this server allows",
                suggestion="stop one with stop_program, or wait for one to end",
            )
        program_id = f"p{secrets.token_hex(6)}"
        directory = self.root / program_id
        directory.mkdir(mode=0o700)
        program = Program(program_id, server, directory, keep=spec.keep, hold=spec.hold)
        try:
            await self._launch(program, spec)
        except BaseException:
            self.forget(program)
            with contextlib.suppress(ToolError):
                if program.pane_id:
                    await server.run("kill-pane", "-t", program.pane_id)
            raise
        self._programs[program_id] = program
        program.lifetime_task = asyncio.ensure_future(self._expire(program, spec.lifetime))
        return program

    async def _launch(self, program: Program, spec: ProgramSpec) -> None:
        server = program.server
        fifo = program.directory / "copy"
        os.mkfifo(fifo, 0o600)
        program.text_path.touch(0o600)
        stdin_path = ""
        if spec.stdin_text is not None:
            stdin_file = program.directory / "stdin"
            stdin_file.write_text(spec.stdin_text)
            stdin_path = str(stdin_file)
        gate = f"schemux_gate_{program.token}"
        environment = [f"-e{key}={value}" for key, value in sorted(spec.environment.items())]
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
        created = await server.run(
            *sizing, *_placement(spec), "-d", "-P", "-F", "#{pane_id} #{window_id} #{pane_pid}",
            "-c", spec.start_directory, *environment,
            "sh", "-c", _GATE, "schemux-gate", server.binary, gate, program.token,
            stdin_path, str(program.stderr_path) if spec.separate_stderr else "",
            *spec.argv, *unsizing,
        )  # fmt: skip
        pane_id, window_id, pid = created[-1].split()
        program.pane_id, program.gate_pid = pane_id, int(pid)
        program.pump_task = asyncio.ensure_future(self._pump(program, fifo))
        program.watch_task = asyncio.ensure_future(self._watch_gate(program))
        setup = ["set-option", "-w", "-t", window_id, "remain-on-exit", "on"]
        if sized and not own:
            size = [*(["-x", str(spec.width)] if spec.width else [])]
            size += ["-y", str(spec.height)] if spec.height else []
            if spec.placement == "split":
                setup += [THEN, "resize-pane", "-t", pane_id, *size]
            else:
                setup += [THEN, "resize-window", "-t", window_id, *size]
        await server.run(
            *setup, THEN,
            "pipe-pane", "-O", "-t", pane_id, f"exec cat > {shlex.quote(str(fifo))}", THEN,
            "wait-for", "-S", gate,
        )  # fmt: skip

    async def _watch_gate(self, program: Program) -> None:
        """The gate's process ending is the last word: its marker is then in the copy, or
        will never be (its tmux client failed, or it was killed). If the copy has not
        ended a moment after, close it, so that the program ends as gone, not never."""
        await process_exit(program.gate_pid)
        deadline = time.monotonic() + GATE_GRACE_SECONDS
        while not program.output_done and time.monotonic() < deadline:
            await program.wait_change(deadline - time.monotonic())
        if not program.output_done:  # a dead pane keeps its pipe: only its end closes it
            with contextlib.suppress(ToolError):
                await program.server.run("kill-pane", "-t", program.pane_id)

    async def _pump(self, program: Program, fifo: Path) -> None:
        """Copy the pane's bytes to the text file until the end marker or the copy's end."""
        # opening blocks until pipe-pane's cat opens the other end: a thread waits for it
        fd = await asyncio.get_running_loop().run_in_executor(
            self._openers, os.open, fifo, os.O_RDONLY
        )
        os.set_blocking(fd, False)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
        )
        text_filter = TextFilter()
        marker = _MARKER_PREFIX + program.token.encode() + b";"
        pending = b""
        report: list[bytes] | None = None
        try:
            with program.text_path.open("ab") as text_file:
                while report is None:
                    chunk = await reader.read(1 << 16)
                    if not chunk:
                        break
                    data = pending + chunk
                    at = data.find(marker)
                    if at >= 0:
                        end = data.find(b"\x07", at)
                        if end < 0:
                            pending = data
                            continue
                        report = data[at + len(marker) : end].split(b";")
                        data = data[:at]
                        pending = b""
                    else:  # hold back only what may be the start of a split marker
                        held = marker_start(data, marker)
                        data, pending = data[:held], data[held:]
                    self._append(program, text_file, text_filter.feed(data))
                if report is None:
                    self._append(program, text_file, text_filter.feed(pending))
                self._append(program, text_file, text_filter.finish())
        finally:
            transport.close()
        program.output_done = True
        if report is not None:
            self._end(program, ending_from_marker(int(report[0]), report[1].decode()))
            if not program.hold:  # run_program releases it once it has read the screen
                await self.release(program)
        else:  # the copy ended without the marker: the pane was removed from outside
            program.lost_end = True
            self._end(program, Ending("gone", None, None))

    def _append(self, program: Program, text_file: object, text: str) -> None:
        if not text or program.output_cut:
            return
        data = text.encode()
        room = self.limits.output_limit - program.text_size
        if len(data) > room:
            data = data[:room]
            cut = data.rfind(b"\n") + 1  # cut on a line break
            data = data[:cut]
            program.output_cut = True
        text_file.write(data)  # type: ignore[attr-defined]
        text_file.flush()  # type: ignore[attr-defined]
        program.text_size += len(data)
        program.changed()

    def _end(self, program: Program, ending: Ending) -> None:
        if program.ending is not None:
            return
        if program.ended_by is not None:
            ending = Ending(program.ended_by, ending.exit_status, ending.signal)
        program.ending = ending
        if program.lifetime_task is not None and not program.keep:
            program.lifetime_task.cancel()  # a kept pane goes when its lifetime does
        program.changed()
        self._retire_old()

    async def wait_end(self, program: Program, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the program's end; whether it came."""
        deadline = time.monotonic() + timeout
        while program.ending is None and time.monotonic() < deadline:
            await program.wait_change(deadline - time.monotonic())
        return program.ending is not None

    async def release(self, program: Program) -> None:
        """Let the gate go (it holds its pane after the marker), then close the copy and
        the pane as after any end."""
        with contextlib.suppress(ToolError):
            await program.server.run("wait-for", "-S", f"schemux_gate_{program.token}")
        await self._after_end(program)

    async def _after_end(self, program: Program) -> None:
        """Close the copy; remove the pane unless it is to stay for a person."""
        with contextlib.suppress(ToolError):
            if program.keep:
                await program.server.run("pipe-pane", "-t", program.pane_id)
            else:
                await program.server.run("kill-pane", "-t", program.pane_id)

    def _retire_old(self) -> None:
        """Let the output of the oldest ended programs go, beyond the retention count."""
        ended = [p for p in self._programs.values() if p.finished]
        for program in ended[: max(0, len(ended) - self.limits.retained_ended)]:
            del self._programs[program.id]
            shutil.rmtree(program.directory, ignore_errors=True)

    async def _expire(self, program: Program, lifetime: float) -> None:
        await asyncio.sleep(lifetime)
        if not await self.terminate(program, "expired") and program.keep:
            with contextlib.suppress(ToolError):  # ended before: only its pane stayed
                await program.server.run("kill-pane", "-t", program.pane_id)

    async def terminate(self, program: Program, outcome: str) -> bool:
        """End a running program (SIGTERM, then SIGKILL); False when it had ended."""
        if program.ending is not None:
            return False
        program.ended_by = outcome
        for signal in (signals.SIGTERM, signals.SIGKILL):
            children = _children(program.gate_pid)
            for pid in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal)
            if not children:  # still at its gate, or its pane is going: remove the pane
                with contextlib.suppress(ToolError):
                    await program.server.run("kill-pane", "-t", program.pane_id)
            deadline = time.monotonic() + STOP_GRACE_SECONDS
            while program.ending is None and time.monotonic() < deadline:
                await program.wait_change(deadline - time.monotonic())
            if program.ending is not None:
                return True
        self._end(program, Ending(outcome, None, None))  # it would not die: give it up
        return True

    async def read(
        self, program: Program, cursor: int, max_lines: int | None, timeout: float
    ) -> Page:
        offset = program.offset_of(cursor)
        deadline = time.monotonic() + timeout
        while True:
            page = self._page(program, offset, max_lines)
            if page is not None:
                return page
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Page("", program.cursor_for(offset), False)
            await program.wait_change(remaining)

    def _page(self, program: Program, offset: int, max_lines: int | None) -> Page | None:
        """What a read from ``offset`` returns now, or None while there is nothing to give.

        A page ends on a line break: after ``max_lines`` lines, or the last break within
        ``PAGE_CHARACTERS``. Only a line longer than a page, or the unterminated last
        line of a finished program, ends elsewhere.
        """
        available = program.text_size - offset
        with program.text_path.open("rb") as text_file:
            text_file.seek(offset)
            data = text_file.read(min(available, PAGE_CHARACTERS * 4))
        # the file is our own UTF-8: "ignore" only drops a character cut at the read's end
        text = data.decode("utf-8", "ignore")[:PAGE_CHARACTERS]
        cut = _after_lines(text, max_lines)
        if cut == 0:
            if len(text) >= PAGE_CHARACTERS or (
                program.finished and len(text.encode()) == available
            ):
                cut = len(text)
            elif not text and program.finished:
                return Page("", program.cursor_for(offset), True)
            else:
                return None  # a line still being written: wait for its end
        end = offset + len(text[:cut].encode())
        return Page(
            text[:cut], program.cursor_for(end), program.finished and end == program.text_size
        )

    async def stop(self, program: Program) -> tuple[Ending, bool]:
        was_running = await self.terminate(program, "stopped")
        assert program.ending is not None
        ending = program.ending
        self.forget(program)
        with contextlib.suppress(ToolError):
            await program.server.run("kill-pane", "-t", program.pane_id)
        return ending, was_running

    def forget(self, program: Program) -> None:
        self._programs.pop(program.id, None)
        if program.watch_task is not None:
            program.watch_task.cancel()
        if program.pump_task is not None and not program.pump_task.done():
            program.pump_task.cancel()
            # a copy that never began has a thread blocked opening the FIFO: open the
            # other end, so that it returns
            with contextlib.suppress(OSError):
                os.close(os.open(program.directory / "copy", os.O_WRONLY | os.O_NONBLOCK))
        shutil.rmtree(program.directory, ignore_errors=True)

    async def close(self) -> None:
        """End every program that still runs, and remove the runtime directory."""
        for program in list(self._programs.values()):
            if program.ending is None:
                await self.terminate(program, "stopped")
            self.forget(program)
            with contextlib.suppress(ToolError):
                await program.server.run("kill-pane", "-t", program.pane_id)
        self._openers.shutdown(wait=False)
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)


def _placement(spec: ProgramSpec) -> list[str]:
    if spec.from_pane is None:
        return ["new-window", "-t", f"={OWNED_SESSION}:"]
    if spec.placement == "split":
        return ["split-window", "-t", spec.from_pane]
    return ["new-window", "-t", f"{spec.from_session}:"]


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def _after_lines(text: str, max_lines: int | None) -> int:
    """Where the text of up to ``max_lines`` complete lines ends (all of them for None)."""
    if max_lines is None:
        return text.rfind("\n") + 1
    end = 0
    for _ in range(max_lines):
        found = text.find("\n", end)
        if found < 0:
            break
        end = found + 1
    return end


def marker_start(data: bytes, marker: bytes) -> int:
    """Where a marker that may be cut off at the end of ``data`` would begin; ``len(data)``
    when the end cannot be the start of one. Everything before that goes out at once, so
    a line reaches readers as soon as it is written."""
    start = data.rfind(b"\x1b", max(0, len(data) - len(marker) - 24))
    if start < 0:
        return len(data)
    tail = data[start:]
    if marker.startswith(tail) or (tail.startswith(marker) and b"\x07" not in tail):
        return start
    return len(data)
