"""Running a command in a pane's interactive shell and reading back exactly its output.

The command is typed into the shell inside a wrapper that talks to tmux from the pane:

    {T} if -F '#{@opt}' 'set -pF @opt "B #{history_size} #{cursor_y}"';(
    COMMAND
    );{T} if -F '#{@opt}' "set -pF @opt '#{@opt} E $? ...';wait-for -S DONE;wait-for RESUME"

The first step records where the output starts, as an absolute grid row (history size
plus cursor row, taken when the shell begins running the command, so after the echo of
the typed lines). The second records the exit status and where the output ends, signals
DONE, and then holds the shell until RESUME: the screen stays still while the output is
captured, so the shell's next prompt can neither join the last output row nor scroll the
rows we address. The private option ``@opt`` is set ("armed") by us before typing and
removed by us at the end; both steps do nothing once it is gone, so a call that timed out
or was cancelled leaves no option, no signal and no waiting client behind.

When tmux may have dropped history rows during the command (the history reached
history-limit, or the command cleared it), the absolute rows no longer hold; the output
then starts after the last row that shows this call's private token, or at the top of the
history when that row is gone too, and the lost head is reported.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import shlex
import time
from dataclasses import dataclass

from schemux.errors import TmuxCommandError, ToolError
from schemux.targets import PaneInfo
from schemux.tmux import TmuxServer

POSIX_SHELLS = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "ksh93",
        "mksh",
        "oksh",
        "loksh",
        "ash",
        "yash",
        "posh",
        "busybox",
    }
)


@dataclass(frozen=True)
class Positions:
    """What the wrapper recorded: begin row, exit status, end cursor, history limit."""

    begin_history: int
    begin_row: int
    exit_status: int
    end_history: int
    end_row: int
    end_column: int
    history_limit: int

    @classmethod
    def parse(cls, value: str) -> Positions | None:
        """Read ``B h y E status h y x limit``; None until the command has ended."""
        fields = value.split()
        if len(fields) != 9 or fields[0] != "B" or fields[3] != "E":
            return None
        try:
            numbers = [int(field) for i, field in enumerate(fields) if i not in (0, 3)]
        except ValueError:
            return None
        return cls(*numbers)

    @property
    def last_output_row(self) -> int:
        """Row (relative to the visible screen at the end) of the last output line."""
        return self.end_row if self.end_column > 0 else self.end_row - 1

    @property
    def history_may_have_dropped(self) -> bool:
        """True unless the history certainly kept every row since the begin step.

        tmux frees a tenth of history-limit whenever the history is full, so after any
        drop the history holds at least limit - limit/10 rows.
        """
        collected = max(1, self.history_limit // 10)
        return self.end_history < self.begin_history or (
            self.end_history >= self.history_limit - collected
        )

    def first_output_row(self) -> int:
        """Row (relative to the visible screen at the end) of the first output line."""
        return self.begin_history + self.begin_row - self.end_history


@dataclass(frozen=True)
class ShellCommandResult:
    exit_status: int | None
    timed_out: bool
    lines: list[str]
    head_lost: bool
    elapsed: float


def check_shell_pane(pane: PaneInfo) -> None:
    """Refuse panes whose keystrokes would not reach an idle POSIX shell."""
    if pane.dead:
        raise ToolError(
            f"pane {pane.pane_id} is dead (its program exited)",
            suggestion="respawn it with `tmux respawn-pane` or target another pane",
        )
    if pane.in_mode:
        raise ToolError(
            f"pane {pane.pane_id} is in copy mode, so typed keys would not reach its shell",
            suggestion=f"leave the mode first (`tmux send-keys -t {pane.pane_id} -X cancel`)",
        )
    command = pane.current_command.removeprefix("-")
    if command not in POSIX_SHELLS:
        raise ToolError(
            f"pane {pane.pane_id} is running {command!r}, not a POSIX shell at its prompt",
            suggestion="wait for that program to finish, or target a pane idle at a shell "
            "prompt (bash, zsh, sh, ...)",
        )


def check_command(command: str, suppress_history: bool) -> None:
    if not command.strip():
        raise ToolError("command must not be empty", suggestion="pass the shell command to run")
    if suppress_history and ("\n" in command or "\r" in command):
        raise ToolError(
            "command must be a single line when suppress_history=True",
            suggestion="join the lines with ';' or pass suppress_history=false",
        )
    if "\r" in command:
        raise ToolError(
            "command contains a carriage return, which the shell would take as Enter",
            suggestion="use '\\n' line breaks",
        )


_PANE_GONE = re.compile(r"can't find pane|no such pane")


class _Call:
    """The private names of one call."""

    def __init__(self, server: TmuxServer, pane: PaneInfo) -> None:
        token = secrets.token_hex(8)
        self.token = token
        self.option = f"@schemux_{token}"
        self.done = f"schemux_done_{token}"
        self.resume = f"schemux_resume_{token}"
        self.pane_id = pane.pane_id
        self.tmux = " ".join(shlex.quote(part) for part in (server.binary, "-S", pane.socket_path))

    def keystrokes(self, command: str, suppress_history: bool) -> str:
        opt, pane = self.option, self.pane_id
        begin = (
            f"{self.tmux} if -Ft{pane} '#{{{opt}}}' "
            f"'set -pFt{pane} {opt} \"B #{{history_size}} #{{cursor_y}}\"'"
        )
        end = (
            f"{self.tmux} if -Ft{pane} '#{{{opt}}}' "
            f"\"set -pFt{pane} {opt} '#{{{opt}}} E $? #{{history_size}} #{{cursor_y}} "
            f"#{{cursor_x}} #{{history_limit}}';wait-for -S {self.done};wait-for {self.resume}\""
        )
        prefix = " " if suppress_history else ""
        return f"{prefix}{begin};(\n{command.rstrip()}\n);{end}"


async def run_in_shell(
    server: TmuxServer,
    pane: PaneInfo,
    command: str,
    *,
    timeout: float,
    suppress_history: bool,
) -> ShellCommandResult:
    """Type ``command`` into the idle shell of ``pane`` and wait up to ``timeout`` seconds."""
    check_command(command, suppress_history)
    check_shell_pane(pane)
    call = _Call(server, pane)
    started = time.monotonic()
    await server.run(
        "set-option", "-p", "-t", pane.pane_id, call.option, "armed", ";",
        "send-keys", "-t", pane.pane_id, "-l", call.keystrokes(command, suppress_history), ";",
        "send-keys", "-t", pane.pane_id, "Enter",
    )  # fmt: skip
    disarmed = False
    try:
        ended = await server.wait_for(call.done, timeout)
        state = await _disarm(server, call)
        disarmed = True
    finally:
        if not disarmed:
            await asyncio.shield(_abandon(server, call))
    positions = Positions.parse(state)
    if positions is not None:  # ended, possibly between the timeout and the disarm
        # shielded: the shell waits for this capture to release it, cancelled or not
        lines, head_lost = await asyncio.shield(_capture_ended(server, call, positions))
        return ShellCommandResult(
            positions.exit_status, False, lines, head_lost, time.monotonic() - started
        )
    if ended:
        raise ToolError(f"the wrapper in pane {pane.pane_id} left no positions ({state!r})")
    if not state.startswith("B "):
        await server.run("send-keys", "-t", pane.pane_id, "C-c")
        raise ToolError(
            f"the shell in pane {pane.pane_id} did not start the command within "
            f"{timeout:g} s; it was still reading input (an unclosed quote, bracket or "
            "heredoc?), so the typed input was cancelled with C-c",
            suggestion="check the command's quoting; the pane is at its prompt again",
        )
    lines, head_lost = await _capture_running(server, call, state)
    return ShellCommandResult(None, True, lines, head_lost, time.monotonic() - started)


async def _disarm(server: TmuxServer, call: _Call) -> str:
    """Read and remove the option in one step; after it, the wrapper does nothing more."""
    lines = await _in_pane(
        server, call,
        "display-message", "-p", "-t", call.pane_id, f"#{{{call.option}}}", ";",
        "set-option", "-p", "-u", "-t", call.pane_id, call.option,
    )  # fmt: skip
    return lines[0] if lines else ""


async def _in_pane(server: TmuxServer, call: _Call, *args: str) -> list[str]:
    """A tmux command on the call's pane, which may have been closed meanwhile."""
    try:
        return await server.run(*args)
    except TmuxCommandError as error:
        if not _PANE_GONE.search(error.stderr):
            raise
        raise ToolError(
            f"pane {call.pane_id} was closed while the command ran; its exit status and "
            "output are lost",
            suggestion="run it again in a pane that stays open",
        ) from None


async def _abandon(server: TmuxServer, call: _Call) -> None:
    """Leave nothing behind after a cancelled or failed call."""
    try:
        state = await _disarm(server, call)
        if Positions.parse(state) is not None:
            await server.run("wait-for", "-S", call.resume)
    except ToolError:
        pass  # the pane or the server is gone, and with it all this call's state


async def _capture_ended(
    server: TmuxServer, call: _Call, positions: Positions
) -> tuple[list[str], bool]:
    """Capture the output of an ended command, then release the shell the wrapper holds."""
    return await _capture(server, call, positions, (";", "wait-for", "-S", call.resume))


async def _capture_running(server: TmuxServer, call: _Call, state: str) -> tuple[list[str], bool]:
    """What a command that is still running has printed so far."""
    begin_history, begin_row = (int(field) for field in state.split()[1:3])
    now = await _in_pane(
        server, call, "display-message", "-p", "-t", call.pane_id,
        "#{history_size} #{cursor_y} #{cursor_x} #{history_limit}",
    )  # fmt: skip
    history, row, column, limit = (int(field) for field in now[0].split())
    positions = Positions(begin_history, begin_row, 0, history, row, column, limit)
    return await _capture(server, call, positions, ())


async def _capture(
    server: TmuxServer, call: _Call, positions: Positions, then: tuple[str, ...]
) -> tuple[list[str], bool]:
    """Capture the rows between the begin step and ``positions``' end, running ``then``
    (further tmux commands) in the same tmux call."""
    last = positions.last_output_row
    if positions.history_may_have_dropped:
        lines = await _in_pane(
            server,
            call,
            "capture-pane",
            "-p",
            "-J",
            "-t",
            call.pane_id,
            "-S",
            "-",
            "-E",
            str(last),
            *then,
        )
        return after_last_mention(lines, call.token)
    first = positions.first_output_row()
    if first > last:
        if then:
            await _in_pane(server, call, *then[1:])
        return [], False
    lines = await _in_pane(
        server,
        call,
        "capture-pane",
        "-p",
        "-J",
        "-t",
        call.pane_id,
        "-S",
        str(first),
        "-E",
        str(last),
        *then,
    )
    return lines, False


def after_last_mention(lines: list[str], token: str) -> tuple[list[str], bool]:
    """The lines after the last one that shows ``token`` (the end of the typed wrapper).

    Without such a line, the wrapper scrolled out of the history, and with it the head of
    the output: all lines are output, and the head is reported lost.
    """
    for index in range(len(lines) - 1, -1, -1):
        if token in lines[index]:
            return lines[index + 1 :], False
    return lines, True


def keep_tail(lines: list[str], max_lines: int | None) -> tuple[list[str], int]:
    """The last ``max_lines`` lines (all of them for None) and how many were dropped."""
    if max_lines is None or len(lines) <= max_lines:
        return lines, 0
    return lines[len(lines) - max_lines :], len(lines) - max_lines
