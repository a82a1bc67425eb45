"""The wrapper typed around a run_command command, and its life in tmux: armed, typed,
disarmed, released, or abandoned.

The command is typed into the shell inside a wrapper that reports back to tmux from the
pane, once, after the command:

    printf '\r\33[K';(
    COMMAND
    );{tmux} if -F '#{@opt}' "set -pF @opt 'E $? #{E:@opt}';wait -S DONE;
                                run -bd HOLD '#{@hold}';wait RESUME;set -pu @opt"

It records the exit status and where the output ends (the armed option's value is that
format) in the private pane option ``@opt``, signals DONE, and holds the shell until
RESUME: the screen stays still while the output is captured, so the shell's next prompt
can neither join the last output row nor scroll the rows we address. Where the output
starts is found from the prompt's position and text, read just before typing in the same
tmux call (``schemux.shell.output``); the ``printf`` (a builtin) clears the row it starts
on, where a shell without a line editor (dash) printed its PS2 prompts after the terminal
echoed the typed lines.

``@opt`` is set ("armed") by us before typing and removed by us (disarmed) as soon as the
wait ends, whatever ended it; the wrapper does nothing once it is gone, so a call that
timed out or was cancelled leaves no option, no channel signal and no waiting client
behind. A cancelled call also interrupts its command as a person's C-c would; a timed-out
one leaves it running.

The hold ends with schemux, not with a time: with the option we set a server option
``@hold`` whose value is the timer's script (and the owner's mark:
``schemux.shell.abandoned_wrappers``), and remove it when we release the shell. tmux itself
runs the script ``HOLD_SECONDS`` after the report, as a job of the server (no client's,
so it outlives every client): if ``@hold`` is still there, it sets the timer again while
schemux's control client runs (a schemux stopped or slow captures when it goes on), and
releases the shell once that client is gone (its owner was killed before its capture);
the wrapper then removes ``@opt``. The timer tests a server option, not the pane's: it
must not fail when the pane has gone, since tmux keeps such an error for the next client
that attaches. Names and formats live in options rather
than in the typed text because every character typed costs time.

On another host whose program helper runs, the last line reports to the helper instead,
with shell builtins (``Syntax.reported``): no option, no hold flag, no tmux client
(``schemux.shell.reported``). A pane whose shell has schemux's hooks gets no wrapper:
``schemux.shell.hooked``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import shlex
from dataclasses import dataclass

from schemux.errors import PaneGone, SchemuxError, TmuxCommandError
from schemux.hosts.protocol import ShellReports
from schemux.panes.keys import leaving_modes
from schemux.panes.targets import PaneInfo
from schemux.shell.abandoned_wrappers import HOLD_SECONDS, REPORT_FORMAT, TOKEN_BYTES, WrapperNames
from schemux.shell.output import Report
from schemux.system.processes import this_process
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer

# how long a call waits for its waiter to wake once the wrapper is disarmed
WAKE_SECONDS = 1.0


@dataclass(frozen=True)
class Syntax:
    """How the wrapper is written for a kind of shell: what groups the command, the
    exit status's variable, and the report to a helper (``REPORTED``): TOKEN and STATUS
    written to the pipe WRITES, then lines read from READS until one is TOKEN (the
    helper's answer; one of an earlier call's is passed over) or its end (the helper
    ended), shell builtins only; a pipe that cannot be opened (the helper gone) holds
    nothing. The shell is left with the variable ``__sx`` (the answer) set."""

    open: str
    close: str
    status: str
    reported: str


POSIX = Syntax(
    "(",  # a subshell: the command's cd, exports stay in it
    ")",
    "$?",
    "printf '%s %s\\n' TOKEN STATUS 2>/dev/null >WRITES&&"
    'while read -r __sx <READS&&[ "$__sx" != TOKEN ];do :;done',
)
FISH = Syntax(  # fish has no subshell: a block
    "begin",
    "end",
    "$status",
    "printf '%s %s\\n' TOKEN STATUS 2>/dev/null >WRITES&&"
    'while read -l __sx <READS&&test "$__sx" != TOKEN;end',
)


class Wrapper:
    """One call's wrapper: its private names, and the keystrokes typed with them."""

    def __init__(
        self,
        server: TmuxServer,
        pane: PaneInfo,
        suppress_history: bool,
        *,
        syntax: Syntax = POSIX,
        reports: ShellReports | None = None,
    ) -> None:
        self.token = secrets.token_hex(TOKEN_BYTES)
        # the pipes to the host's helper the wrapper reports through; None: to tmux
        self.reports = reports
        self.names = names = WrapperNames(self.token)
        self.option, self.hold, self.done, self.resume = (
            names.option,
            names.hold,
            names.done,
            names.resume,
        )
        self.pane_id = pane.pane_id
        self.socket_path = pane.socket_path
        self.tmux = " ".join(shlex.quote(part) for part in (server.binary, "-S", pane.socket_path))
        # a leading space keeps it out of history
        self.prefix = " " if suppress_history else ""
        self.syntax = syntax
        self.first_line = self.prefix + "printf '\\r\\33[K';" + syntax.open
        self.last_line = ""  # the wrapper's last typed line (set by ``keystrokes``)

    @property
    def release(self) -> tuple[str, ...]:
        """The tmux commands that free the shell the wrapper holds after its report."""
        return ("set-option", "-s", "-u", self.hold, THEN, "wait-for", "-S", self.resume)

    def arm_and_type(self, command: str) -> tuple[str, ...]:
        """The tmux commands that arm the wrapper (its option and hold flag; nothing for
        one that reports to a helper) and type it around ``command``, then Enter."""
        pane = self.pane_id
        if self.reports is not None:
            return (
                *leaving_modes(pane), "send-keys", "-t", pane, "-l", self.keystrokes(command),
                THEN, "send-keys", "-t", pane, "Enter",
            )  # fmt: skip
        return (
            "set-option", "-p", "-t", pane, self.option, REPORT_FORMAT,
            THEN, "set-option", "-sF", self.hold, self.names.hold_format(this_process(), self.tmux),
            THEN, *leaving_modes(pane), "send-keys", "-t", pane, "-l", self.keystrokes(command),
            THEN, "send-keys", "-t", pane, "Enter",
        )  # fmt: skip

    def keystrokes(self, command: str) -> str:
        # short: every character typed costs time. The report's format is the armed
        # option's value, and the timer's script is the hold flag's (both set with the
        # arming); run-shell expands #{hold} to it, and it tests the flag itself when it runs
        opt, pane = self.option, self.pane_id
        if self.reports is not None:
            there = f"/proc/{self.reports.helper_pid}/fd/"
            written = {
                "TOKEN": self.token,
                "STATUS": self.syntax.status,
                "WRITES": f"{there}{self.reports.writes}",
                "READS": f"{there}{self.reports.reads}",
            }
            report = re.sub("TOKEN|STATUS|WRITES|READS", lambda word: written[word[0]],
                            self.syntax.reported)  # fmt: skip
            self.last_line = f"{self.syntax.close};{report}"
            return f"{self.first_line}\n{command.rstrip()}\n{self.last_line}"
        report = (
            f"{self.tmux} if -Ft{pane} '#{{{opt}}}' "
            f"\"set -pFt{pane} {opt} 'E {self.syntax.status} #{{E:{opt}}}';"
            f"wait -S {self.done};run -bd{HOLD_SECONDS} '#{{{self.hold}}}';"
            f'wait {self.resume};set -put{pane} {opt}"'
        )
        self.last_line = f"{self.syntax.close};{report}"
        return f"{self.first_line}\n{command.rstrip()}\n{self.last_line}"


async def in_pane(server: TmuxServer, pane_id: str, *args: str) -> list[str]:
    """A tmux command on a call's pane, which may have been closed meanwhile."""
    try:
        return await server.run(*args)
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        raise pane_closed(pane_id) from None


GONE_BEFORE_TYPING = "before the command was typed (its shell had ended)"


async def typed(pane_id: str, typing: asyncio.Future[list[str]]) -> list[str]:
    """The answer of the command list that types a call's command (awaited shielded, so
    a cancel leaves it to the caller's clean-up). A pane gone by then is the call's
    ``pane_gone``: tmux found no such pane, so the list typed nothing and nothing ran (the
    pane of a shell that just ran ``exit``, which the call found a moment before)."""
    try:
        return await asyncio.shield(typing)
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        raise pane_gone(pane_id, GONE_BEFORE_TYPING) from None


def pane_gone(pane_id: str, when: str) -> PaneGone:
    """The error of a call whose pane closed ``when`` (before its command ran): nothing
    ran, so a call with no target may go on in a new agent shell."""
    return PaneGone(
        f"pane {pane_id} closed {when}; nothing ran",
        suggestion="run it again in a pane that is open",
    )


def pane_closed(pane_id: str) -> SchemuxError:
    """The error of a call whose pane went before its command reported."""
    return SchemuxError(
        f"pane {pane_id} was closed while the command ran (its shell ended, or the pane "
        "was killed); its exit status and output are lost",
        suggestion="run it again in a pane that stays open",
    )


def input_unfinished(pane_id: str, timeout: float) -> SchemuxError:
    """The error of a call whose shell was still reading the typed input at its timeout
    (its typing was then cancelled with C-c)."""
    return SchemuxError(
        f"the shell in pane {pane_id} did not start the command within {timeout:g} s; it "
        "was still reading input (an unclosed quote, bracket or heredoc?), so the typed "
        "input was cancelled with C-c",
        suggestion="check the command's quoting; the pane is at its prompt again",
    )


async def pane_dead(server: TmuxServer, pane_id: str) -> bool:
    """Whether the pane is gone or its program has ended."""
    try:
        lines = await server.run("display-message", "-p", "-t", pane_id, "#{pane_dead}")
    except TmuxCommandError as error:
        if error.target_gone:
            return True
        raise
    return not lines or lines[0] != "0"


async def disarm(server: TmuxServer, wrapper: Wrapper, *, waited: bool) -> str:
    """Read and remove the option in one tmux call, after which the wrapper does nothing;
    unless the wrapper already reported (and so signalled DONE, and holds its shell until
    we release it), remove the hold flag and, when our waiter waits (``waited``), signal
    DONE ourselves: our waiter always wakes, and nothing stays signalled or set behind it
    (tmux keeps a signal nobody waits for, for a waiter that never comes)."""
    option, pane = wrapper.option, wrapper.pane_id
    wake = f"wait-for -S {wrapper.done};" if waited else ""
    lines = await in_pane(
        server, pane,
        "display-message", "-p", "-t", pane, f"#{{{option}}}", THEN,
        "if-shell", "-F", "-t", pane, f"#{{!=:#{{=1:#{{{option}}}}},E}}",
        f"{wake}set-option -s -u {wrapper.hold}", THEN,
        "set-option", "-p", "-u", "-t", pane, option,
    )  # fmt: skip
    return lines[0] if lines else ""


async def drop_hold_flag(server: TmuxServer, wrapper: Wrapper) -> None:
    """Remove the hold flag and free the shell it holds, if any: after a clean-up that
    failed (the pane gone with its shell, or a server that stopped answering, whose
    queued disarm may still have run after the report). Without the flag the wrapper's
    timer frees nothing, so the release is signalled with its removal; a signal nobody
    waits for stays on this call's own channel, which nothing else uses."""
    hold = wrapper.hold
    with contextlib.suppress(SchemuxError):
        release = f"set-option -s -u {hold} ; wait-for -S {wrapper.resume}"
        await server.run("if-shell", "-F", f"#{{{hold}}}", release)


async def interrupt(server: TmuxServer, wrapper: Wrapper) -> None:
    """C-c into the wrapper's pane (``send_interrupt``)."""
    await send_interrupt(server, wrapper.pane_id)


async def send_interrupt(server: TmuxServer, pane_id: str) -> None:
    """C-c into the pane, as a person would: the terminal sends SIGINT to its foreground
    process group (the command, or the shell discarding unfinished input); a mode the
    pane is in (copy mode would take C-c as its own ``cancel``) is left first."""
    await server.run(*leaving_modes(pane_id), "send-keys", "-t", pane_id, "C-c")


async def abandon(
    server: TmuxServer,
    wrapper: Wrapper,
    waiting: asyncio.Future[None] | None,
    *,
    interrupting: bool,
) -> None:
    """Leave nothing behind after a cancelled or failed call: no option, no waiter, no
    shell held by the wrapper; with ``interrupting``, no command still running either."""
    try:
        state = await disarm(server, wrapper, waited=waiting is not None)
        if Report.parse(state) is not None:
            await server.run(*wrapper.release)
        elif interrupting:
            await interrupt(server, wrapper)
    except SchemuxError:  # the pane or the server is gone
        await drop_hold_flag(server, wrapper)
        if waiting is not None:
            waiting.cancel()  # end the waiter's client
    if waiting is not None:
        await woken(waiting)


async def woken(waiting: asyncio.Future[None]) -> None:
    """The waiter, which the disarm signalled if the wrapper had not: given up after
    ``WAKE_SECONDS`` (the signal went to another waiter left on the channel, or the
    waiter's client was lost), ending its client, rather than waited for forever. How
    the waiter ended (cancelled, say, by a clean-up that found the pane gone) is not the
    caller's: only the caller's own cancellation goes on from here."""
    await asyncio.wait({waiting}, timeout=WAKE_SECONDS)
    if not waiting.done():
        waiting.cancel()
        await asyncio.wait({waiting})
    if not waiting.cancelled():
        waiting.exception()  # retrieved: the waiter's failure is not the call's
