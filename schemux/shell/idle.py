"""Whether a pane's shell is idle at its prompt and takes typed keys, from /proc and the
terminal's settings (no tmux work: it reads what tmux's pane info named)."""

from __future__ import annotations

import asyncio
import os
import shlex
import termios

import anyio

from schemux.errors import SchemuxError, ShellBusy, ShellNotStarted, Unfit
from schemux.panes.targets import PaneInfo
from schemux.system.processes import (
    children,
    command_line,
    controlling_terminal,
    process_exit,
    process_name,
    stat_of,
)

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


# the shells run_command types into: the POSIX ones, and fish (with hooks, or with a
# wrapper in its own syntax: ``schemux.shell.wrapper``)
TYPED_SHELLS = POSIX_SHELLS | {"fish"}
# the name of the process tmux forks for a new pane, until it execs the pane's program
TMUX_FORK = "tmux: "


def check_shell_pane(pane: PaneInfo) -> str:
    """Refuse panes whose keystrokes would not reach an idle shell run_command types into;
    return the name of the shell that reads them (``check_shell_command``)."""
    check_pane_state(pane)
    groups = _terminal_groups(pane.pid)
    idle = groups is not None and groups[0] == groups[1]  # the pane's own program is idle
    return check_shell_command(pane, groups, process_name(pane.pid) if idle else "")


def check_pane_state(pane: PaneInfo) -> None:
    """Refuse a dead pane, or one in a mode (what tmux itself tells)."""
    if pane.dead:
        respawn = _command_text(pane, "respawn-pane", "-t", pane.pane_id)
        raise Unfit(
            f"pane {pane.pane_id} is dead (its program exited)",
            suggestion=f"respawn it with `{respawn}` or target another pane",
        )
    if pane.in_mode:
        raise Unfit(
            f"pane {pane.pane_id} is in copy mode, so typed keys would not reach its shell",
            suggestion="leave the mode first "
            f"(`{_command_text(pane, 'send-keys', '-t', pane.pane_id, '-X', 'cancel')}`)",
        )


def _command_text(pane: PaneInfo, *args: str) -> str:
    """A tmux command line a person can run on the pane's server (its socket given)."""
    return shlex.join(["tmux", "-S", pane.socket_path, *args])


def check_shell_command(pane: PaneInfo, groups: tuple[int, int] | None, name: str) -> str:
    """Refuse a pane whose shell is not idle at its prompt: ``groups`` as
    ``_terminal_groups`` reads them, ``name`` the pane process's name (read when idle);
    one whose terminal a job holds with ``ShellBusy`` (``shell_once_started`` waits when
    that job is its startup files').
    Return the name of the shell that reads the typed keys, which decides the wrapper's
    syntax: the pane process's own name where it is seen idle, never tmux's
    ``pane_current_command``, which names whatever held the terminal's foreground when
    the pane was looked up (an earlier call's released wrapper client, ``tmux``, for a
    moment after each call)."""
    if groups is not None and groups[0] == groups[1]:  # the pane's own program is idle
        command = name
    else:
        command = pane.current_command.removeprefix("-")
    if command.startswith(TMUX_FORK):
        raise ShellNotStarted(f"pane {pane.pane_id} has not started its shell yet")
    busy = groups is not None and groups[0] != groups[1]
    if busy or command not in TYPED_SHELLS:
        raise (ShellBusy if busy else SchemuxError)(
            f"pane {pane.pane_id} is running {command!r}, not a shell at its prompt",
            suggestion="wait for it to finish, or interrupt it as a person would with "
            f'send_keys {{"pane_id": "{pane.pane_id}", "keys": "C-c", "enter": false}}, '
            "or target a pane idle at a shell prompt (bash, zsh, fish, sh, ...)",
        )
    return command


def earlier_wrapper_leaving(shell_pid: int) -> bool:
    """Whether the terminal's foreground is still the tmux client of an earlier call's
    wrapper, released and on its way out (its name shows the private resume channel),
    or a group whose leader has just gone while the shell takes its terminal back."""
    groups = _terminal_groups(shell_pid)
    if groups is None or groups[0] == groups[1]:
        return False
    cmdline = command_line(groups[1])
    return not cmdline or b"schemux_r_" in cmdline


def _terminal_groups(pid: int) -> tuple[int, int] | None:
    """(process group of ``pid``, foreground process group of its terminal), from /proc;
    None where /proc does not show it (gone, or a tmux server in another pid namespace)."""
    stat = stat_of(pid)
    if stat is None:
        return None
    group, foreground = stat.pgrp, stat.tpgid
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
    with anyio.move_on_after(within):
        while (groups := _terminal_groups(shell_pid)) and groups[0] != groups[1]:
            leader = groups[1]
            if leader in exited:
                await asyncio.sleep(0.0005)
            else:
                await process_exit(leader)
                exited.add(leader)


def _local_modes(tty: str) -> int | None:
    """The terminal's local mode flags (c_lflag); None where they cannot be read."""
    try:
        fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return int(termios.tcgetattr(fd)[3])
    except termios.error:
        return None
    finally:
        os.close(fd)


def echo_on(tty: str) -> bool:
    """Whether the terminal echoes typed input (the shell's settings while a command
    runs, which its line editor follows); False where it cannot be read."""
    modes = _local_modes(tty)
    return modes is not None and bool(modes & termios.ECHO)


def prompt_key(pane: PaneInfo) -> str | None:
    """The key that makes the pane's idle shell show its prompt again on a cleared
    screen: ``C-l`` where a line editor reads its line (it clears and redraws it),
    ``Enter`` where the shell reads without one (an empty line runs nothing); None when
    the pane's program is not a shell holding its terminal, or /proc cannot tell."""
    if process_name(pane.pid) not in TYPED_SHELLS or not shell_reads_input(pane.pid):
        return None
    try:
        modes = _local_modes(controlling_terminal(pane.pid))
    except OSError:
        return None
    if modes is None:
        return None
    return "Enter" if modes & termios.ICANON else "C-l"


# shells that read their prompt with a line editor, which takes the terminal out of
# canonical mode while it reads (unless editing is turned off)
EDITOR_SHELLS = frozenset({"bash", "zsh", "ksh", "ksh93", "mksh", "oksh", "loksh", "yash"})


class ShellsWithoutEditor(set[tuple[int, str]]):
    """The shells of one tmux server's panes, as (pid, terminal path), whose line editor
    never came (editing is off): not waited for again. Shared by the server's
    ``TmuxServer`` (``server.shared(ShellsWithoutEditor)``): its pids are its host's."""


async def until_line_editor_reads(
    shell_pid: int, without_editor: ShellsWithoutEditor, within: float = 1.0, *, edits: bool = False
) -> None:
    """Return once a shell that edits its prompt's line is doing so (or after ``within``).

    Between a command's end and its prompt, the shell holds its terminal in canonical
    mode with echo on; keys typed then are echoed by the terminal itself and once more by
    the line editor after the prompt: two echoes, the first of which would be taken for
    the one before the output. A slow prompt (PROMPT_COMMAND, a git prompt) widens that
    moment to many milliseconds. The editor's start shows only as the terminal leaving
    canonical mode, so that is polled for, briefly. A shell known to edit its line
    (``edits``: its hooks told so) is never taken for one without an editor, however
    long a loaded machine keeps it from its prompt.
    """
    try:
        tty = controlling_terminal(shell_pid)
    except OSError:
        return
    if process_name(shell_pid) not in EDITOR_SHELLS:
        return
    if not edits and (shell_pid, tty) in without_editor:
        return
    deadline = asyncio.get_running_loop().time() + within
    while (modes := _local_modes(tty)) is not None and modes & termios.ICANON:
        if not shell_reads_input(shell_pid):
            return  # a command of the shell's took the terminal: the caller waits for it
        if asyncio.get_running_loop().time() > deadline:
            if (
                not edits
                and shell_reads_input(shell_pid)
                and _process_state(shell_pid) == "S"
                and not waits_for_own_job(shell_pid)
            ):
                # asleep holding its terminal, in canonical mode, running nothing:
                # reading its prompt's line without an editor (editing is off); not
                # waited for again
                without_editor.add((shell_pid, tty))
            return  # else still busy (a slow prompt command): the caller's checks tell
        await asyncio.sleep(0.0005)


def waits_for_own_job(shell_pid: int) -> bool:
    """Whether a child of the shell is in the shell's own process group: a command it
    runs without job control, such as its startup files' before job control starts (an
    rc's ``sleep``, ``conda`` or ``nvm``), which it waits for holding its terminal in
    canonical mode, asleep, as a shell reading its line without an editor is. (A
    background job of a shell without job control counts too: such a shell is then
    waited for at each call, the longer but safe way.)"""
    group = stat_of(shell_pid)
    if group is None:
        return False
    return any(
        (child := stat_of(pid)) is not None and child.pgrp == group.pgrp
        for pid in children(shell_pid)
    )


def _process_state(pid: int) -> str:
    """The state letter of /proc/PID/stat (R running, S sleeping, ...); "" if gone."""
    stat = stat_of(pid)
    return "" if stat is None else stat.state
