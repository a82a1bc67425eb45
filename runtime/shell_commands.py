"""Running a command in a pane's interactive shell and reading back exactly its output.

The command is typed into the shell inside a wrapper that reports back to tmux from the
pane, once, after the command:

    (
    COMMAND
    );{tmux} if -F '#{@opt}' "set -pF @opt 'E $? #{history_size} ...';
                                wait-for -S DONE;wait-for RESUME"

It records the exit status and where the output ends in the private pane option ``@opt``,
signals DONE, and holds the shell until RESUME: the screen stays still while the output
is captured, so the shell's next prompt can neither join the last output row nor scroll
the rows we address. Where the output starts is known without a second report: just
before typing, in the same tmux call, we read the prompt's row; the rows from there show
the prompt and the echo of the typed wrapper, whose last row carries this call's private
token, and the output is every row after that one.

``@opt`` is set ("armed") by us before typing and removed by us (disarmed) as soon as the
wait ends, whatever ended it; the wrapper does nothing once it is gone, so a call that
timed out or was cancelled leaves no option, no channel signal and no waiting client
behind.

When tmux may have dropped history rows during the command (the history reached
history-limit, or the command cleared it), the prompt's row no longer holds; the whole
history is searched for the token instead, and when that row is gone too, the head of the
output went with it and is reported lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from schemux.engine import THEN
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
class Prompt:
    """Where the prompt was just before typing."""

    history: int
    row: int

    @classmethod
    def parse(cls, value: str) -> Prompt:
        history, row = (int(field) for field in value.split())
        return cls(history, row)


@dataclass(frozen=True)
class Cursor:
    """Where the output ends: history size, cursor row and column, and history-limit."""

    history: int
    row: int
    column: int
    history_limit: int

    @property
    def last_output_row(self) -> int:
        """Row (relative to the visible screen) of the last output line."""
        return self.row if self.column > 0 else self.row - 1

    def first_row_since(self, prompt: Prompt) -> int | None:
        """Row (relative to the visible screen) where ``prompt`` is now; None when tmux may
        have dropped history rows since, so that the prompt's row is no longer known.

        tmux frees a tenth of history-limit whenever the history is full, so after any
        drop the history holds at least limit - limit/10 rows.
        """
        collected = max(1, self.history_limit // 10)
        if self.history < prompt.history or self.history >= self.history_limit - collected:
            return None
        return prompt.history + prompt.row - self.history


@dataclass(frozen=True)
class Report:
    """What the wrapper recorded after the command: ``E status history row column limit``."""

    exit_status: int
    cursor: Cursor

    @classmethod
    def parse(cls, value: str) -> Report | None:
        """None while the command has not ended (or for anything else)."""
        fields = value.split()
        if len(fields) != 6 or fields[0] != "E":
            return None
        try:
            status, history, row, column, limit = (int(field) for field in fields[1:])
        except ValueError:
            return None
        return cls(status, Cursor(history, row, column, limit))


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
    groups = _terminal_groups(pane.pid)
    if groups is not None and groups[0] == groups[1]:  # the pane's own program is idle
        command = _process_name(pane.pid)
    else:
        command = pane.current_command.removeprefix("-")
    if (groups is not None and groups[0] != groups[1]) or command not in POSIX_SHELLS:
        raise ToolError(
            f"pane {pane.pane_id} is running {command!r}, not a POSIX shell at its prompt",
            suggestion="wait for that program to finish, or target a pane idle at a shell "
            "prompt (bash, zsh, sh, ...)",
        )


def _process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _earlier_wrapper_leaving(shell_pid: int) -> bool:
    """Whether the terminal's foreground is still the tmux client of an earlier call's
    wrapper, released and on its way out (its name shows the private resume channel),
    or a group whose leader has just gone while the shell takes its terminal back."""
    groups = _terminal_groups(shell_pid)
    if groups is None or groups[0] == groups[1]:
        return False
    try:
        cmdline = Path(f"/proc/{groups[1]}/cmdline").read_bytes()
    except OSError:
        return True
    return b"schemux_resume_" in cmdline or not cmdline


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


class _Call:
    """The private names of one call."""

    def __init__(self, server: TmuxServer, pane: PaneInfo) -> None:
        self.token = secrets.token_hex(8)
        self.option = f"@schemux_{self.token}"
        self.done = f"schemux_done_{self.token}"
        self.resume = f"schemux_resume_{self.token}"
        self.pane_id = pane.pane_id
        self.tmux = " ".join(shlex.quote(part) for part in (server.binary, "-S", pane.socket_path))

    def keystrokes(self, command: str, suppress_history: bool) -> str:
        opt, pane = self.option, self.pane_id
        report = (
            f"{self.tmux} if -Ft{pane} '#{{{opt}}}' "
            f"\"set -pFt{pane} {opt} 'E $? #{{history_size}} #{{cursor_y}} #{{cursor_x}} "
            f"#{{history_limit}}';wait-for -S {self.done};wait-for {self.resume}\""
        )
        prefix = " " if suppress_history else ""
        return f"{prefix}(\n{command.rstrip()}\n);{report}"


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
    if _earlier_wrapper_leaving(pane.pid):
        await until_shell_has_terminal(pane.pid)
    check_shell_pane(pane)
    call = _Call(server, pane)
    started = time.monotonic()
    typed = await server.run(
        "display-message", "-p", "-t", pane.pane_id, "#{history_size} #{cursor_y}",
        THEN, "set-option", "-p", "-t", pane.pane_id, call.option, "armed",
        THEN, "send-keys", "-t", pane.pane_id, "-l", call.keystrokes(command, suppress_history),
        THEN, "send-keys", "-t", pane.pane_id, "Enter",
    )  # fmt: skip
    prompt = Prompt.parse(typed[0])
    waiting = asyncio.ensure_future(server.wait(call.done))
    disarmed = False
    try:
        finished, _ = await asyncio.wait({waiting}, timeout=timeout)
        ended = bool(finished)
        state = await _disarm(server, call)
        disarmed = True
        await waiting  # the disarm signalled it, if the wrapper had not
    finally:
        if not disarmed:
            await asyncio.shield(_abandon(server, call, waiting))
    report = Report.parse(state)
    if report is not None:  # ended, possibly between the timeout and the disarm
        # shielded: the shell waits for this capture to release it, cancelled or not
        release = (THEN, "wait-for", "-S", call.resume)
        lines, head_lost = await asyncio.shield(
            _capture_output(server, call, prompt, report.cursor, release)
        )
        return ShellCommandResult(
            report.exit_status, False, lines, head_lost, time.monotonic() - started
        )
    if ended:
        raise ToolError(f"the wrapper in pane {pane.pane_id} reported {state!r}, not an end")
    if shell_reads_input(pane.pid):
        await server.run("send-keys", "-t", pane.pane_id, "C-c")
        raise ToolError(
            f"the shell in pane {pane.pane_id} did not start the command within "
            f"{timeout:g} s; it was still reading input (an unclosed quote, bracket or "
            "heredoc?), so the typed input was cancelled with C-c",
            suggestion="check the command's quoting; the pane is at its prompt again",
        )
    now = await _in_pane(
        server, call, "display-message", "-p", "-t", call.pane_id,
        "#{history_size} #{cursor_y} #{cursor_x} #{history_limit}",
    )  # fmt: skip
    cursor = Cursor(*(int(field) for field in now[0].split()))
    lines, head_lost = await _capture_output(server, call, prompt, cursor, ())
    return ShellCommandResult(None, True, lines, head_lost, time.monotonic() - started)


def _terminal_groups(pid: int) -> tuple[int, int] | None:
    """(process group of ``pid``, foreground process group of its terminal), from /proc;
    None where /proc does not show it (gone, or a tmux server in another pid namespace)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the fields after the parenthesised name: state ppid pgrp session tty_nr tpgid
    fields = stat[stat.rindex(")") + 2 :].split()
    group, foreground = int(fields[2]), int(fields[5])
    if foreground <= 0:  # no controlling terminal (yet): nothing to tell
        return None
    return group, foreground


def shell_reads_input(shell_pid: int) -> bool:
    """Whether the shell itself holds its terminal's foreground, so it is still reading
    what was typed rather than running it (a command runs in a process group of its own).
    Where /proc cannot tell, the command is taken as running."""
    groups = _terminal_groups(shell_pid)
    return groups is not None and groups[0] == groups[1]


async def until_shell_has_terminal(shell_pid: int, within: float = 1.0) -> None:
    """Return once the shell holds its terminal again (or after ``within`` seconds).

    Released, the wrapper's tmux client keeps the foreground for a moment; a call that
    comes within that moment waits for it (the next call, not this one: by the time an
    agent sends one, the client is usually gone). The client's
    exit is awaited on a pidfd; the shell takes the terminal back right after reaping it,
    with no event of its own, so that gap of microseconds is bridged by short sleeps.
    """
    exited: set[int] = set()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(within):
            while (groups := _terminal_groups(shell_pid)) and groups[0] != groups[1]:
                leader = groups[1]
                if leader in exited:
                    await asyncio.sleep(0.0005)
                else:
                    await process_exit(leader)
                    exited.add(leader)


async def process_exit(pid: int) -> None:
    """Return when process ``pid`` has exited (at once if it is gone), on a pidfd."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:  # gone already, or no process of its own (a group's id outliving it)
        return
    loop = asyncio.get_running_loop()
    gone: asyncio.Event = asyncio.Event()
    loop.add_reader(pidfd, gone.set)
    try:
        await gone.wait()
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


async def _disarm(server: TmuxServer, call: _Call) -> str:
    """Read and remove the option in one tmux call, after which the wrapper does nothing;
    signal DONE ourselves unless the wrapper already reported (and so signalled): our
    waiter always wakes, and nothing stays signalled behind it."""
    lines = await _in_pane(
        server, call,
        "display-message", "-p", "-t", call.pane_id, f"#{{{call.option}}}", THEN,
        "if-shell", "-F", "-t", call.pane_id, f"#{{!=:#{{=1:#{{{call.option}}}}},E}}",
        f"wait-for -S {call.done}", THEN,
        "set-option", "-p", "-u", "-t", call.pane_id, call.option,
    )  # fmt: skip
    return lines[0] if lines else ""


async def _in_pane(server: TmuxServer, call: _Call, *args: str) -> list[str]:
    """A tmux command on the call's pane, which may have been closed meanwhile."""
    try:
        return await server.run(*args)
    except TmuxCommandError as error:
        if not error.target_gone:
            raise
        raise ToolError(
            f"pane {call.pane_id} was closed while the command ran; its exit status and "
            "output are lost",
            suggestion="run it again in a pane that stays open",
        ) from None


async def _abandon(server: TmuxServer, call: _Call, waiting: asyncio.Future[None]) -> None:
    """Leave nothing behind after a cancelled or failed call: no option, no waiter, and no
    shell held by the wrapper."""
    try:
        state = await _disarm(server, call)
        if Report.parse(state) is not None:
            await server.run("wait-for", "-S", call.resume)
    except ToolError:
        waiting.cancel()  # the pane or the server is gone: end the waiter's client
    with contextlib.suppress(BaseException):
        await waiting


async def _capture_output(
    server: TmuxServer, call: _Call, prompt: Prompt, cursor: Cursor, then: tuple[str, ...]
) -> tuple[list[str], bool]:
    """The output rows up to ``cursor``: those after the echo of the typed wrapper.

    ``then`` (further tmux commands) runs in the same tmux call as the capture.
    """
    first = cursor.first_row_since(prompt)
    lines = await _in_pane(
        server, call, "capture-pane", "-p", "-J", "-t", call.pane_id,
        "-S", "-" if first is None else str(first), "-E", str(cursor.last_output_row), *then,
    )  # fmt: skip
    output, found = after_last_mention(lines, call.token)
    return output, not found and first is None


def after_last_mention(lines: list[str], token: str) -> tuple[list[str], bool]:
    """The lines after the last one that shows ``token`` (the end of the typed wrapper),
    and whether there was one; without one, all the lines."""
    for index in range(len(lines) - 1, -1, -1):
        if token in lines[index]:
            return lines[index + 1 :], True
    return lines, False


def keep_tail(lines: list[str], max_lines: int | None) -> tuple[list[str], int]:
    """The last ``max_lines`` lines (all of them for None) and how many were dropped."""
    if max_lines is None or len(lines) <= max_lines:
        return lines, 0
    return lines[len(lines) - max_lines :], len(lines) - max_lines
