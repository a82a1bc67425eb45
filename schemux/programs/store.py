"""The programs of one running schemux: starting them, their limits, their ends (on their
own, stopped, expired, or their pane gone), retention of their output, and cleanup."""

from __future__ import annotations

import asyncio
import logging
import secrets
import shlex
import signal as signals
from collections import OrderedDict, deque
from collections.abc import Coroutine
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from schemux.audit.log import CallRecord
from schemux.audit.recordings import Recordings
from schemux.config import ProgramLimits
from schemux.errors import NotFound, SchemuxError, preview
from schemux.hosts.programs.gate import Ending, Outcome, ending_from_marker
from schemux.hosts.programs.host import ProgramHost
from schemux.programs.output import (
    Page,
    copy_output,
    cursor_for,
    end_recording,
    follow_resizes,
    offset_of,
    page_at,
)
from schemux.programs.panes import (
    create_pane,
    kill_pane,
    leave_pane,
    link_for_layouts,
    start_copy,
)
from schemux.programs.program import Program, ProgramSpec, Tasks
from schemux.system.runtime_identity import own_identity
from schemux.tmux.server import TmuxServer

STOP_GRACE_SECONDS = 2.0
EXIT_GRACE_SECONDS = 1.0  # at exit, SIGTERM's grace: every exit path ends within ~2 s
GATE_GRACE_SECONDS = 2.0
COPY_OPEN_SECONDS = 10.0  # from pipe-pane to its writer's open: milliseconds, unless tmux hangs
GONE = Ending("gone", None, None)
logger = logging.getLogger("schemux")


@dataclass(frozen=True)
class ProgramCaller:
    """Who asks the store: the MCP session of the call (``schemux.calls.sessions``: a
    program is the session's that started it, and no other's), and the call's audit
    record, which notes the program it starts or names (None: a request no record keeps,
    such as a resource's)."""

    session: str | None
    notes: CallRecord | None = None


class ProgramStore:
    """The programs of one running schemux, their files on ``host``."""

    def __init__(
        self, host: ProgramHost, limits: ProgramLimits, recordings: Recordings | None = None
    ) -> None:
        """Programs on ``host``, the program host the context's host made, each recorded
        in ``recordings`` (when they are on)."""
        self.limits = limits
        self.host = host
        self.recordings = recordings
        self._programs: OrderedDict[str, Program] = OrderedDict()
        self._starting = 0  # slots taken by starts still under way
        # run_program calls waiting for a slot, first come first served: each future is
        # resolved once a slot is taken for it (``_hand_over``)
        self._slot_waiters: deque[asyncio.Future[None]] = deque()
        self._retired: set[Program] = set()  # let go, with tasks still running
        self._tasks = Tasks("programs")  # removals of retired output

    @property
    def root(self) -> Path:
        return self.host.root

    def get(self, program_id: str, caller: ProgramCaller) -> Program:
        """The program ``program_id`` of the caller's session: another session's is not
        found, as one never started is."""
        program = self._programs.get(program_id)
        if program is None or program.session != caller.session:
            raise NotFound(
                f"no program {preview(program_id)}: it was never started here, or its output "
                "was let go after enough later programs ended",
                suggestion="start it again with start_program",
            )
        if caller.notes is not None:
            caller.notes.note_program(program.id, program.pane_id)
        return program

    def listed(self) -> list[Program]:
        """The programs whose output can be read, oldest first, whichever session's."""
        return list(self._programs.values())

    def visible(self, session: str | None) -> list[Program]:
        """Those of them the MCP session ``session`` started."""
        return [program for program in self._programs.values() if program.session == session]

    def lookup_pane(self, server: TmuxServer, pane_id: str, session: str | None) -> str | None:
        """The id of the program running in ``pane_id`` of ``server``, if schemux started
        one there for the MCP session ``session``."""
        for program in self.visible(session):
            if (
                program.pane_id == pane_id
                and program.server.address == server.address
                and program.ending is None
            ):
                return program.id
        return None

    def _running(self) -> int:
        """Slots taken: programs not ended, and starts under way."""
        return sum(1 for p in self._programs.values() if p.ending is None) + self._starting

    def _hand_over(self) -> None:
        """Give the slots that are free to the calls waiting for one, in their order."""
        while self._slot_waiters and self._running() < self.limits.max_running:
            waiter = self._slot_waiters.popleft()
            self._starting += 1
            waiter.set_result(None)

    async def _take_slot(self, deadline: float | None) -> None:
        """Take a slot (counted in ``_starting``): at once, before any await, so that
        concurrent starts cannot overrun the limit; or, with ``deadline`` (a loop time),
        the first one to come free before it, behind the calls already waiting."""
        if self._running() < self.limits.max_running and not self._slot_waiters:
            self._starting += 1
            return
        running = self._running()
        if deadline is None:
            raise SchemuxError(
                f"{running} programs run already, the most this server allows",
                suggestion="stop one with stop_program, or wait for one to end",
            )
        waiter = asyncio.get_running_loop().create_future()
        self._slot_waiters.append(waiter)
        try:
            with anyio.fail_after(deadline - anyio.current_time()):
                await asyncio.shield(waiter)
        except TimeoutError:
            self._give_up(waiter)
            raise SchemuxError(
                f"{running} programs ran already, the most this server allows, and none "
                "ended within the call's timeout",
                suggestion="call again with a longer timeoutMs, or stop a program with "
                "stop_program",
            ) from None
        except BaseException:
            self._give_up(waiter)
            raise

    def _give_up(self, waiter: asyncio.Future[None]) -> None:
        """A call stops waiting for a slot: out of the queue, and a slot taken for it
        just as it left goes to the next."""
        if waiter in self._slot_waiters:
            self._slot_waiters.remove(waiter)
        elif waiter.done() and not waiter.cancelled():
            self._starting -= 1
            self._hand_over()
        waiter.cancel()

    async def start(
        self,
        server: TmuxServer,
        spec: ProgramSpec,
        caller: ProgramCaller,
        *,
        slot_deadline: float | None = None,
    ) -> Program:
        """Start ``spec`` in a slot of its own, for ``caller``; at the limit, refuse, or
        with ``slot_deadline`` (a loop time) wait for a slot until then."""
        await self._take_slot(slot_deadline)
        try:
            program_id = f"p{secrets.token_hex(6)}"
            directory = self.host.make_directory(program_id)
            program = Program(
                program_id, server, directory, keep=spec.keep, hold=spec.hold,
                session=caller.session,
            )  # fmt: skip
            program.text = self.host.make_text(directory)
            program.tasks = Tasks(program_id, partial(self._failed, program))
            try:
                await self._launch(program, spec, caller.notes)
            except BaseException:
                await _unstoppable(self.discard(program))
                raise
            self._programs[program_id] = program
        finally:
            self._starting -= 1
            self._hand_over()  # the slot goes with a start that failed or already ended
        program.lifetime_task = program.tasks.spawn("lifetime", self._expire(program, spec))
        return program

    async def _launch(self, program: Program, spec: ProgramSpec, notes: CallRecord | None) -> None:
        directory = program.directory
        program.secret_fd = await self.host.prepare(
            directory, spec.stdin_text, spec.separate_stderr
        )
        files = self.host.gate_directory(directory)
        gate = (await self.host.gate()).command(
            files, spec.start_directory,
            f"{files}/stdin" if spec.stdin_text is not None else "",
            f"{files}/stderr" if spec.separate_stderr else "",
            STOP_GRACE_SECONDS, spec.environment, spec.argv,
        )  # fmt: skip
        pane_id, window_id, pid = await create_pane(program.server, spec, gate)
        program.pane_id = pane_id
        if notes is not None:
            notes.note_program(program.id, pane_id)
        program.gate_fd = self.host.open_process(int(pid))
        program.copy_task = program.tasks.spawn("copy", self._copy(program))
        program.tasks.spawn("gate", self._watch_gate(program))
        width, height = await start_copy(
            program.server, spec, pane_id, window_id, own_identity(),
            self.host.copy_command(program.id),
        )  # fmt: skip
        # before the program runs (it waits for its tokens): its first byte is recorded
        if self.recordings is not None:
            program.recording = self.recordings.begin(
                program.id, program.session, width, height,
                command=shlex.join(spec.argv), title=f"program {program.id}",
            )  # fmt: skip
            if program.recording is not None:
                follow_resizes(program, window_id, (width, height))
                if spec.from_pane is not None:  # its window is in another session
                    mark = await link_for_layouts(program.server, window_id)
                    if mark is not None:
                        program.layout_link = (window_id, mark)
                if notes is not None:
                    notes.note_recording(program.id)
        # the program runs only once its copy FIFO has no name left, so that no program
        # (one started at the same moment, say) can open it and write as this one
        copying = await program.until(
            lambda: program.copy_open or program.ending is not None, COPY_OPEN_SECONDS
        )
        if program.ending is not None:
            raise SchemuxError(
                f"the pane of {program.id} went away before its program started",
                suggestion="start it again, and leave its pane alone until it ends",
            )
        if not copying:
            raise SchemuxError(
                f"the copy of {program.id}'s output did not start within "
                f"{COPY_OPEN_SECONDS:g} s, so it was not run",
                suggestion="check that the tmux server is responsive, then start it again",
            )
        # a gate that cannot be watched is not run: nothing could signal or see it end
        await self.host.watching(program.gate_fd)
        # the gate lets the program run once it has its tokens
        if not await self.host.write_secret(program.secret_fd, program.secret):
            raise SchemuxError(
                f"the gate of {program.id} could not be told to start it",
                suggestion="start it again",
            )

    def _failed(self, program: Program, error: BaseException) -> None:
        """A task of the program failed: it ends as gone (its reads say so), and its gate
        ends its tree, told by a signal or by its pane's end."""
        program.lost_end = True
        program.output_done = True
        self._end(program, GONE)
        self._signal(program, signals.SIGHUP)
        if not program.keep:
            self._tasks.spawn("removal", kill_pane(program.server, program.pane_id))

    async def _copy(self, program: Program) -> None:
        report = await copy_output(program, self.host, self.limits.output_limit)
        # its exit status as the gate reported it
        await end_recording(program, None if report is None else report[0])
        program.output_done = True
        program.changed()
        if report is not None:
            self._end(program, ending_from_marker(*report))
            if not program.hold:  # run_program releases it once it has read the screen
                await self.release(program)
        else:  # the copy ended without the marker: the pane was removed from outside
            program.lost_end = True
            self._end(program, GONE)

    async def _watch_gate(self, program: Program) -> None:
        """The gate's process ending is the last word: its marker is then in the copy, or
        will never be (it was killed). If the copy has not ended a moment after, close it,
        so that the program ends as gone, not never."""
        try:
            await self.host.exited(program.gate_fd)
        finally:  # nothing is left to signal (or, should this fail, to watch)
            self.host.close_descriptor(program.gate_fd)
            program.gate_fd = -1
            program.changed()
        if not await program.until(lambda: program.output_done, GATE_GRACE_SECONDS):
            # a dead pane keeps its pipe: only its end closes it
            await kill_pane(program.server, program.pane_id)
        if not await program.until(lambda: program.output_done, GATE_GRACE_SECONDS):
            # the pane's copy is gone, and the copy still has a writer: another process
            # holds the FIFO (it opened it before the copy's writer did). What it wrote
            # cannot be told from the program's output: the end is reported as lost
            logger.warning("the copy of %s has a writer that is not its pane's", program.id)
            if program.copy_task is not None:
                program.copy_task.cancel()
            program.lost_end = True
            program.output_done = True
            self._end(program, GONE)

    def _end(self, program: Program, ending: Ending) -> None:
        if program.ending is not None:
            return
        if program.ended_by is not None:
            ending = Ending(program.ended_by, ending.exit_status, ending.signal)
        program.ending = ending
        if program.secret_fd >= 0:  # the secret was read, or never will be
            self.host.close_descriptor(program.secret_fd)
            program.secret_fd = -1
        if program.lifetime_task is not None and not program.keep:
            program.lifetime_task.cancel()  # a kept pane goes when its lifetime does
        program.changed()
        self._retire_old()
        self._hand_over()

    def _signal(self, program: Program, signum: int) -> None:
        if program.gate_fd >= 0:
            self.host.signal(program.gate_fd, signum)

    async def wait_end(self, program: Program, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the program's end; whether it came."""
        return await program.until(lambda: program.ending is not None, timeout)

    async def _gate_gone(self, program: Program) -> None:
        """Wait (a second at most) for the gate to exit: it ends the program's whole tree
        first, so that when a call returns nothing of the program is left."""
        await program.until(lambda: program.gate_fd < 0, 1.0)

    async def release(self, program: Program) -> None:
        """Let the gate go (it holds its pane after the marker, and ends whatever the
        program left running), then close the copy and the pane as after any end."""
        self._signal(program, signals.SIGUSR1)
        if program.keep:  # the pane stays for a person: no longer a program's
            await leave_pane(program.server, program.pane_id)
        else:
            await kill_pane(program.server, program.pane_id)
        await self._gate_gone(program)

    def _retire_old(self) -> None:
        """Let the output of the oldest ended programs go, beyond the retention count."""
        ended = [p for p in self._programs.values() if p.finished]
        # a kept pane's lifetime still removes it; a release may still be under way
        self._retired = {program for program in self._retired if program.tasks.running}
        for program in ended[: max(0, len(ended) - self.limits.retained_ended)]:
            del self._programs[program.id]
            self._retired.add(program)
            program.let_go_of_text()
            self._tasks.spawn("removal", self.host.remove(program.directory))

    async def _expire(self, program: Program, spec: ProgramSpec) -> None:
        await asyncio.sleep(spec.lifetime)
        if not await self.terminate(program, "expired") and program.keep:
            await kill_pane(program.server, program.pane_id)  # ended before: only its pane stayed

    async def terminate(
        self, program: Program, outcome: Outcome, patience: float = STOP_GRACE_SECONDS + 1.0
    ) -> bool:
        """End a running program and everything it started: its gate sends SIGTERM to the
        whole tree, then SIGKILL after its grace. After ``patience`` seconds without an
        end, the pane goes (and the gate kills the tree at once). False when it had ended."""
        if program.ending is not None:
            return False
        program.ended_by = outcome
        self._signal(program, signals.SIGUSR2)
        if not await self.wait_end(program, patience):
            await kill_pane(program.server, program.pane_id)
            if not await self.wait_end(program, 1.0):  # its end will never be told
                program.lost_end = True
                self._end(program, Ending(outcome, None, None))
        return True

    async def read(
        self, program: Program, cursor: int, max_lines: int | None, timeout: float
    ) -> Page:
        offset = offset_of(program, cursor)
        page = await program.until_some(
            lambda: page_at(program, self.host, offset, max_lines), timeout
        )
        return page or Page("", cursor_for(program, offset), False)

    async def stop(self, program: Program) -> tuple[Ending, bool]:
        """End the program if it runs and remove its pane (a kept one too); its output
        stays readable as an ended program's does (``keep_output``). Whether it ran."""
        was_running = await self.terminate(program, "stopped")
        assert program.ending is not None
        if program.pane_id:
            await kill_pane(program.server, program.pane_id)
        await self.keep_output(program)
        return program.ending, was_running

    async def discard(self, program: Program, keep_pane: bool = False) -> None:
        """Remove the program's pane (unless ``keep_pane``) and forget it, once its gate
        has ended the program's whole tree and exited (or a second passed)."""
        if program.pane_id and not keep_pane:
            await kill_pane(program.server, program.pane_id)
        await self._gate_gone(program)
        await self._forget(program)

    async def keep_output(self, program: Program) -> None:
        """Keep an ended program's output readable, as a started program's is (until
        enough later programs end), once its gate has ended its whole tree and exited (or
        a second passed); its pane goes as ``release`` left it."""
        await self._gate_gone(program)
        self._retire_old()

    async def _forget(self, program: Program) -> None:
        self._programs.pop(program.id, None)
        self._hand_over()
        await program.tasks.cancel()
        # a copy that never began has a thread blocked opening the FIFO: open the other
        # end, so that it returns (and closes what it opened)
        self.host.unblock_copy(program.copy_path)
        for fd in (program.gate_fd, program.secret_fd):
            if fd >= 0:
                self.host.close_descriptor(fd)
        program.gate_fd = program.secret_fd = -1
        program.let_go_of_text()
        await end_recording(program)  # a copy cancelled before its end: what it had
        await self.host.remove(program.directory)

    async def close(self) -> None:
        """End every program still running, all at once, each with its whole tree, and
        remove the runtime directory: about two seconds at most, however they resist."""
        programs = list(self._programs.values())
        await asyncio.gather(*(self._close_one(program) for program in programs))
        await asyncio.gather(*(program.tasks.cancel() for program in self._retired))
        await self._tasks.cancel()
        await self.host.close()

    async def _close_one(self, program: Program) -> None:
        if program.ending is None:
            program.ended_by = "stopped"
            self._signal(program, signals.SIGUSR2)
            await self.wait_end(program, EXIT_GRACE_SECONDS)
        await self.discard(program)


async def _unstoppable(work: Coroutine[Any, Any, None]) -> None:
    """Clean-up that a cancelled call still carries to its end."""
    with anyio.CancelScope(shield=True):
        await work
