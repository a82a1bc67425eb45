"""One run_command call in a shell whose hooks report (``schemux.hooks``):
only the command is typed, as a person would, and the hooks tell the call over its
channel (``schemux.shell.channel``) when the output starts and when the command ended,
with its status, holding the shell each time while the call reads the pane.

Compared with the wrapper (``schemux.shell.wrapper``), nothing runs in the pane but the
command and the hooks' shell builtins: no tmux client, no option, no channel of tmux's.
A call that ends any way but by the command's end (timed out, failed) disarms the shell,
after which its hooks tell nobody; a cancelled one first interrupts its command as a
person's C-c would, and takes the interrupted command's end.

Where tmux's history-limit dropped the head of the output, the call counts the lines it
lost from what saw the pane's whole output (its recording, ``OutputLineEnds``), asked
while the hooks hold the shell after its end mark.
"""

from __future__ import annotations

import asyncio
import enum
import secrets
import time
from typing import Protocol

from schemux.errors import SchemuxError
from schemux.hooks import SHELL, HookedShell
from schemux.panes.claims import PaneClaim
from schemux.panes.keys import leaving_modes
from schemux.panes.targets import PaneInfo
from schemux.shell.barrier import server_of, terminal_of, until_tmux_read
from schemux.shell.capture import (
    CommandStart,
    command_start,
    cursor_at,
    end_from,
    end_now,
    output_end_now,
    quiet_output,
    quiet_reading,
    read_marked_output,
)
from schemux.shell.channel import COMMAND_ENDED, COMMAND_STARTS, HookChannels
from schemux.shell.facts import shell_facts
from schemux.shell.output import Finished, Located, without_interrupt_echo
from schemux.shell.settling import TYPING_GRACE_SECONDS, PaneSettling, until_line_taken_in
from schemux.shell.wrapper import (
    in_pane,
    pane_closed,
    pane_dead,
    pane_gone,
    send_interrupt,
    typed,
)
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer

# how often a call waiting for its command checks that the pane is still there
GONE_POLL_SECONDS = 0.25
# how long a cancelled call waits for the prompt hook of the command it interrupted
INTERRUPTED_HOOK_SECONDS = 2.0


class _Outcome(enum.Enum):
    ENDED = "ended"
    TIMED_OUT = "timed out"


class OutputLineEnds(Protocol):
    """What saw every byte a pane wrote while a call drove it (``domain.pane_recording``)."""

    async def output_line_ends(self) -> int | None:
        """The line ends the command wrote between the hooks' ``C`` mark and their last
        ``D`` mark, once all the pane wrote so far came in; None when they were not seen."""


class HookedCall:
    """One command typed into a hooked shell, and what its hooks told; ``seen``, what
    saw the pane's output, if anything did; ``claim``, the call's claim on the pane, which
    its last command line releases once the command ended (else the call's end does)."""

    def __init__(
        self,
        server: TmuxServer,
        pane: PaneInfo,
        shell: HookedShell,
        seen: OutputLineEnds | None = None,
        claim: PaneClaim | None = None,
    ) -> None:
        self.server = server
        self.pane = pane
        self.shell = shell
        self.seen = seen
        self.claim = claim
        # OSError when the armed file's directory is not ours alone: the wrapper, then
        self.channel = server.shared(HookChannels).channel(shell.armed)
        self.start: CommandStart | None = None
        self.status: int | None = None
        self._ended = ""  # the hooks' line that told the command's end
        self._reported = shell.value  # what SHELL holds: set anew if the hooks tell otherwise
        # the pane's terminal, where schemux asks tmux for the cursor for hooks that do not
        # ask themselves; "" where they do, or the shell is gone: nothing to ask then
        self.tty = "" if shell.asks_terminal else terminal_of(shell.pid)

    def keys(self, command: str, suppress_history: bool) -> tuple[str, ...]:
        """The tmux commands that type ``command`` (one line: ``schemux.shell.typed_command``)
        as a person would: keys and Enter, or a bracketed paste where the line editor
        takes one (faster than keys where plugins redraw at every key)."""
        pane = self.pane.pane_id
        text = command.rstrip("\n")
        # a leading space keeps it out of history: typed as a key, since fish's paste
        # drops the spaces a paste into an empty line begins with
        space = ("send-keys", "-t", pane, "-l", " ", THEN) if suppress_history else ()
        if self.shell.bracketed_paste:
            buffer = f"schemux_{secrets.token_hex(6)}"
            typing: tuple[str, ...] = (
                *space, "set-buffer", "-b", buffer, "--", text,
                THEN, "paste-buffer", "-p", "-d", "-b", buffer, "-t", pane,
            )  # fmt: skip
        else:
            typing = (*space, "send-keys", "-t", pane, "-l", "--", text)
        return (*leaving_modes(pane), *typing, THEN, "send-keys", "-t", pane, "Enter")

    async def until_ended(self, timeout: float) -> _Outcome:
        """Answer the hooks until the command ends (its ``D``), the call times out, or
        the pane goes (its error)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        graced = False
        while True:
            left = deadline - loop.time()
            message = await self.channel.message(min(max(left, 0), GONE_POLL_SECONDS))
            if message is not None:
                if await self._told(message):
                    return _Outcome.ENDED
                continue
            if left <= GONE_POLL_SECONDS:
                if graced or not await self._reads_input():
                    return _Outcome.TIMED_OUT
                # still taking the typed line in (a line editor whose plugins redraw at
                # every key can take longer than a short timeout): a grace for it to start
                # the command, so the call says what it ran rather than blame the quoting
                graced = True
                deadline = loop.time() + TYPING_GRACE_SECONDS
                continue
            if await pane_dead(self.server, self.pane.pane_id):
                if self.start is None:  # the hooks tell the start before it runs
                    when = "before its shell started the command (the shell was ending)"
                    raise pane_gone(self.pane.pane_id, when)
                raise pane_closed(self.pane.pane_id)
            if graced and self.start is not None:
                return _Outcome.TIMED_OUT  # the command started, past the timeout

    async def _told(self, message: str) -> bool:
        """Act on one line of the hooks; whether it was the command's end (the hook then
        waits for ``finish``)."""
        kind, *fields = message.split(" ")
        if self.tty:
            await until_tmux_read(self.tty, server_pid=server_of(self.shell.pid))
        if kind == COMMAND_ENDED and len(fields) == 4 and fields[1].isdigit():
            self.status = int(fields[1])
            self.shell = self.shell.after_command(fields[2], fields[3])
            self._ended = message
            return True
        try:
            if kind == COMMAND_STARTS and self.start is None:  # a pasted block's first
                self.start = await command_start(self.server, self.pane.pane_id)
        finally:
            self.channel.answer(message)
        return False

    async def finish(self, ended: _Outcome) -> Finished:
        """The command's output: once ended, while the hook holds the shell before its
        prompt (then let go); timed out, as far as it got."""
        if ended is _Outcome.TIMED_OUT:
            self.channel.disarm()
            if self.start is None and await self._reads_input():
                await send_interrupt(self.server, self.pane.pane_id)
                raise SchemuxError(
                    f"the shell in pane {self.pane.pane_id} did not start the command "
                    "within the call's timeout; it was still reading input (an unclosed "
                    "quote, bracket or heredoc?), so the typed input was cancelled with C-c",
                    suggestion="check the command's quoting; the pane is at its prompt again",
                )
            return Finished(await self._output(), None, timed_out=True)
        try:
            output = await self._output(releasing=True)
            output = output.with_lines(without_interrupt_echo(output.lines, self.status))
            if not output.exact and self.seen is not None:
                # the hooks hold the shell after their D mark: the last D is theirs
                output = output.counted(await self.seen.output_line_ends())
            return Finished(output, self.status, timed_out=False)
        finally:
            self.channel.disarm()
            self.channel.answer(self._ended)
            self.server.shared(PaneSettling).mark_settling(self.pane.pane_id)

    async def _output(self, *, releasing: bool = False) -> Located:
        """The output so far; ``releasing`` (the command ended), the claim released by
        the last command line read, while the hooks still hold the shell. Where the
        command may have written nothing, the end's line takes the capture such an end
        needs (zsh's end-of-line mark's row) and the release, which tmux makes only while
        the cursor is where the output began; else the capture takes the release."""
        pane = self.pane.pane_id
        claim = self.claim if releasing and self.shell.value == self._reported else None
        quiet = None
        if claim is not None and self.start is not None:
            quiet = quiet_reading(pane, self.start, self.shell.eol_mark)
        if claim is None or quiet is None:
            end = await output_end_now(self.server, pane)
        else:
            at, capture = quiet
            release = claim.releasing(cursor_at(at))
            lines = await in_pane(self.server, pane, *end_now(pane), *capture, *release)
            end = end_from(lines[0])
            if end == at and self.start is not None:
                claim.released = True
                return quiet_output(lines[1:], self.start, end, self.shell.eol_mark)
        if self.shell.value != self._reported:
            value = self.shell.value
            await in_pane(self.server, pane, "set-option", "-p", "-t", pane, SHELL, value)
        if self.start is None:
            status = self.status
            ran = "is still running" if status is None else f"exited with status {status}"
            raise SchemuxError(
                f"the command in pane {pane} {ran}, but its output cannot be told apart "
                "from the typed line: the shell's hooks saw no command start (did it not "
                "parse?)",
                suggestion="check the command's syntax in the pane (capture_pane)",
            )
        then = () if claim is None else claim.releasing()
        located, sent = await read_marked_output(
            self.server, pane, self.start, end, self.shell.eol_mark, then
        )
        if sent and claim is not None:
            claim.released = True
        return located

    async def cancelled(self, typing: asyncio.Future[list[str]] | None) -> None:
        """Undo a cancelled call: once its shell has taken the typed line in, its command
        interrupted, unless it had ended already; the hooks answered throughout, and the
        interrupted command's end awaited (its prompt hook comes a moment after the C-c:
        the next call must not take it for its own's), then the channel disarmed."""
        if typing is not None:
            try:
                await typing
            except Exception:  # the keys' tmux command failed: nothing was typed
                self.channel.disarm()
                return
        try:
            await until_line_taken_in(self.server, self.pane)
            if self.status is None and not self.channel.answer_waiting():
                await send_interrupt(self.server, self.pane.pane_id)
                await self._answer_until_end(INTERRUPTED_HOOK_SECONDS)
        finally:
            self.channel.disarm()

    async def _answer_until_end(self, within: float) -> None:
        """Answer the hooks until they tell a command's end, or for ``within`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while (message := await self.channel.message(max(deadline - loop.time(), 0))) is not None:
            self.channel.answer(message)
            if message.startswith(COMMAND_ENDED):
                return

    async def _reads_input(self) -> bool:
        return await shell_facts(self.server).shell_reads_input(self.pane.pid)


async def run_hooked(
    server: TmuxServer,
    call: HookedCall,
    command: str,
    *,
    timeout: float,
    suppress_history: bool,
) -> Finished:
    """Type ``command`` into the idle hooked shell and wait up to ``timeout`` seconds.

    Cancelled, the call interrupts the command (C-c) and leaves nothing behind."""
    settle = server.shared(PaneSettling).settle
    pane_id = call.pane.pane_id
    started = time.monotonic()
    try:
        call.channel.arm()
    except OSError as error:
        raise SchemuxError(
            f"the shell in pane {pane_id} could not be armed ({error}); nothing was typed"
        ) from None
    try:
        typing = asyncio.ensure_future(server.run(*call.keys(command, suppress_history)))
        try:
            await typed(pane_id, typing)
        except asyncio.CancelledError:
            await asyncio.shield(settle(pane_id, call.cancelled(typing)))
            raise
        try:
            ended = await call.until_ended(timeout - (time.monotonic() - started))
        except asyncio.CancelledError:
            await asyncio.shield(settle(pane_id, call.cancelled(None)))
            raise
        finishing = asyncio.ensure_future(call.finish(ended))
        try:
            return await asyncio.shield(finishing)
        except asyncio.CancelledError:
            await asyncio.shield(settle(pane_id, _cancelled_finishing(call, finishing)))
            raise
    finally:
        call.channel.disarm()


async def _cancelled_finishing(call: HookedCall, finishing: asyncio.Future[Finished]) -> None:
    """Cancelled while the output was read: let the reading end (it lets the shell go),
    then interrupt the command if it still runs (the call had timed out)."""
    try:
        result = await finishing
    except Exception:
        return
    if result.timed_out:
        await send_interrupt(call.server, call.pane.pane_id)
