"""A pane's first call made before tmux's fork has become the pane's shell waits for it,
within the call's time, instead of refusing the pane (seen: ``'tmux: server'``, not a
shell at its prompt, for a call right after ``new-session``); so does one made while the
shell's startup files run a job in the foreground, the pane still empty (seen: ``'zsh'``,
not a shell at its prompt, for a login zsh with Debian 13's zsh plugins)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.errors import SchemuxError, ShellBusy, ShellNotStarted
from schemux.serving.state import ServingState
from schemux.shell import commands
from schemux.shell.commands import shell_once_started
from schemux.shell.facts import LocalShellFacts, RemoteShellFacts, ShellFacts
from schemux.shell.idle import ShellsWithoutEditor, check_shell_command
from schemux.shell.settling import SETTLE_SECONDS
from schemux.system.processes import children
from schemux.tmux.server import TmuxServer
from tests.support import Pane as TestPane
from tests.support import (
    call,
    call_error,
    new_pane,
    pane_format,
    require_tool,
    shell_holds_terminal,
    tmux,
    until,
)

pytestmark = pytest.mark.anyio


class Pane:
    pane_id = "%7"
    current_command = "tmux: server"


class JobPane(Pane):
    current_command = "zsh"  # a fork of the shell holds the terminal's foreground


class StartingFacts:
    """Facts of a pane whose fork becomes fish at the ``after``-th reading."""

    def __init__(self, after: int) -> None:
        self.after, self.readings = after, 0

    async def check_shell_pane(self, pane: Any) -> str:
        self.readings += 1
        if self.readings < self.after:
            raise ShellNotStarted(f"pane {pane.pane_id} has not started its shell yet")
        return "fish"


def test_tmuxs_fork_is_a_shell_not_started_yet() -> None:
    with pytest.raises(ShellNotStarted):
        check_shell_command(Pane(), (5, 5), "tmux: server")  # type: ignore[arg-type]
    with pytest.raises(SchemuxError, match="running 'vim', not a shell") as refused:
        check_shell_command(Pane(), (5, 5), "vim")  # type: ignore[arg-type]
    assert not isinstance(refused.value, ShellBusy)  # the pane's own program: never waited for
    with pytest.raises(ShellBusy):  # a job holds the shell's terminal
        check_shell_command(JobPane(), (5, 6), "")  # type: ignore[arg-type]


async def test_the_call_waits_for_the_shell() -> None:
    facts = StartingFacts(after=4)
    shell = await shell_once_started(None, facts, Pane(), time.monotonic(), 5)  # type: ignore[arg-type]
    assert (shell, facts.readings) == ("fish", 4)


async def test_a_shell_that_never_starts_is_refused_at_the_deadline() -> None:
    facts = StartingFacts(after=10**9)
    started = time.monotonic()
    with pytest.raises(SchemuxError, match=r"has not started its shell yet after 0.2 s") as refused:
        await shell_once_started(None, facts, Pane(), started, 0.2)  # type: ignore[arg-type]
    assert not isinstance(refused.value, ShellNotStarted)
    # at the deadline, not before; the upper bound only tells a refusal from a wait that
    # runs on (how late after the deadline is the loop's latency, which load sets)
    assert 0.2 <= time.monotonic() - started < 10


class EndingJobFacts:
    """Facts of a pane whose job holds the terminal at the first reading only."""

    def __init__(self) -> None:
        self.readings = 0

    async def check_shell_pane(self, pane: Any) -> str:
        self.readings += 1
        if self.readings == 1:
            raise ShellBusy(f"pane {pane.pane_id} is running 'bash', not a shell at its prompt")
        return "bash"


async def test_a_job_that_ends_before_the_screen_is_read_is_not_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The job holding the terminal (the first prompt hook's tmux client) ends, and the
    prompt is drawn, between the reading of the terminal and the reading of the screen:
    the shell is at its prompt (seen refused, 'running bash', on a loaded Debian 13 run)."""

    async def prompt_shown(server: Any, pane: Any) -> bool:
        return False

    monkeypatch.setattr(commands, "shows_nothing_yet", prompt_shown)
    facts = EndingJobFacts()
    shell = await shell_once_started(None, facts, JobPane(), time.monotonic(), 5)  # type: ignore[arg-type]
    assert (shell, facts.readings) == ("bash", 2)


# jobs a zshrc runs in the foreground before the first prompt: a subshell of two
# commands, which stays a fork of the shell (its last command alone would be exec'd), as
# Debian 13's zsh plugins fork; and a program (slow init)
STARTUP_JOBS = ["( sleep 1; : )", "sleep 1"]


@pytest.mark.parametrize("job", STARTUP_JOBS)
async def test_a_job_of_the_startup_files_is_waited_for(
    memory_client: Client, main_tmux_socket: str, tmp_path: Path, job: str
) -> None:
    """The first call comes while the rc's job holds the terminal: it waits for the
    prompt and runs; a program started at that prompt is still refused at once."""
    require_tool("zsh")
    (tmp_path / ".zshrc").write_text(f"{job}\nPROMPT='ready%# '\n")
    name = f"forking{id(tmp_path)}"
    pane_id, window_id, session_id = tmux(
        main_tmux_socket, "new-session", "-d", "-s", name, "-x", "80", "-y", "20",
        "-e", f"ZDOTDIR={tmp_path}", "-e", "LANG=C.UTF-8",
        "-P", "-F", "#{pane_id} #{window_id} #{session_id}", "zsh",
    ).split()  # fmt: skip
    pane = TestPane(main_tmux_socket, pane_id, window_id, session_id, name)
    try:
        await until(lambda: not shell_holds_terminal(pane))  # the rc's fork runs
        first = await call(
            memory_client, "run_command", command="echo first-ok", pane_id=pane_id, timeout=10
        )
        assert (first["output"], first["exit_status"]) == (["first-ok"], 0)
        await anyio.sleep(SETTLE_SECONDS)  # a next call that soon waits for the prompt
        tmux(main_tmux_socket, "send-keys", "-t", pane_id, "sleep 30", "Enter")
        await until(lambda: not shell_holds_terminal(pane))
        started = anyio.current_time()
        refused = await call_error(
            memory_client, "run_command", command="echo no", pane_id=pane_id, timeout=10
        )
        assert "is running 'sleep', not a shell at its prompt" in refused, refused
        assert anyio.current_time() - started < 1.0
    finally:
        tmux(main_tmux_socket, "kill-session", "-t", f"={name}", check=False)


# the facts of this machine's shells as /proc gives them, and as a remote server's are
# read (run-shell: a local server's host has no helper)
FACT_READERS: dict[str, Callable[[TmuxServer], ShellFacts]] = {
    "proc": LocalShellFacts,
    "run-shell": RemoteShellFacts,
}


@pytest.mark.parametrize("reader", FACT_READERS)
async def test_a_job_of_the_startup_files_is_no_shell_without_a_line_editor(
    tool_context: ServingState, main_tmux_socket: str, tmp_path: Path, reader: str
) -> None:
    """A bash whose rc runs a job longer than the wait for its line editor (the rc's job
    runs in the shell's own process group: job control starts after the rc) holds its
    terminal asleep in canonical mode, as a shell reading its line without an editor
    does; it is not remembered as one, or no later call would wait for its line editor
    (seen: the call after a cancelled one typed while bash still handled the interrupt,
    its keys echoed twice and the echo taken as output, test_shell_matrix's
    test_cancellation[own-bash-slow]). A bash without editing is still remembered."""
    server = tool_context.services.tmux()
    facts = FACT_READERS[reader](server)
    without_editor = server.shared(ShellsWithoutEditor)
    rc = tmp_path / "rc"
    rc.write_text("sleep 30\n")
    slow = new_pane(main_tmux_socket, command=f"bash --rcfile {rc} -i")
    plain = new_pane(main_tmux_socket, command="bash --norc --noprofile --noediting -i")
    try:
        slow_pid, plain_pid = (int(pane_format(pane, "#{pane_pid}")) for pane in (slow, plain))
        await until(lambda: bool(children(slow_pid)))  # the rc's sleep runs
        await until(lambda: pane_format(plain, "#{cursor_x}") != "0")  # at its prompt
        for pid in (slow_pid, plain_pid):
            await facts.until_line_editor_reads(pid, 0.2)
        assert {pid for pid, _ in without_editor} == {plain_pid}
    finally:
        for pane in (slow, plain):
            tmux(main_tmux_socket, "kill-session", "-t", f"={pane.session_name}", check=False)


@pytest.mark.parametrize("reader", FACT_READERS)
async def test_a_shell_whose_hooks_say_it_edits_is_never_taken_for_one_without(
    tool_context: ServingState, main_tmux_socket: str, reader: str
) -> None:
    """A shell kept from its prompt longer than the wait (a loaded machine, a slow prompt
    command) looks like one reading its line without an editor; one whose hooks told
    schemux it edits (the agent's pane) is not remembered so, and is waited for again
    (it was, and a later call typed before its line editor read: the terminal echoed the
    keys once more, seen in test_shell_matrix's screen check of agent-zsh-empty)."""
    server = tool_context.services.tmux()
    facts = FACT_READERS[reader](server)
    without_editor = server.shared(ShellsWithoutEditor)
    plain = new_pane(main_tmux_socket, command="bash --norc --noprofile --noediting -i")
    try:
        pid = int(pane_format(plain, "#{pane_pid}"))
        await until(lambda: pane_format(plain, "#{cursor_x}") != "0")  # at its prompt
        await facts.until_line_editor_reads(pid, 0.2, edits=True)
        assert without_editor == set()
        await facts.until_line_editor_reads(pid, 0.2)
        assert {taken for taken, _ in without_editor} == {pid}
        started = asyncio.get_running_loop().time()
        await facts.until_line_editor_reads(pid, 0.3, edits=True)  # waited for all the same
        assert asyncio.get_running_loop().time() - started >= 0.3
    finally:
        tmux(main_tmux_socket, "kill-session", "-t", f"={plain.session_name}", check=False)


@pytest.mark.parametrize("reader", FACT_READERS)
async def test_a_builtin_reading_a_redirection_is_not_the_line_editor(
    tool_context: ServingState, main_tmux_socket: str, tmp_path: Path, reader: str
) -> None:
    """A shell builtin that reads a redirection (``read <FILE``, as the hooks read the
    call's answer after a command) points the shell's own descriptor 0 at FILE for that
    while, its terminal still in canonical mode: the wait for the line editor reads the
    modes of the shell's terminal, not of its descriptor 0, and so goes on waiting. (It
    read FILE's, found none and returned at once: a next call typed before the prompt,
    its keys echoed twice, seen in test_shell_matrix's screen check of agent-bash-vi.)"""
    server = tool_context.services.tmux()
    facts = FACT_READERS[reader](server)
    fifo = tmp_path / "answer"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # bash's open of it for reading does not block
    pane = new_pane(main_tmux_socket, command="bash --norc --noprofile -i")
    try:
        pid = int(pane_format(pane, "#{pane_pid}"))
        await until(lambda: pane_format(pane, "#{cursor_x}") != "0")  # at its prompt
        tmux(main_tmux_socket, "send-keys", "-t", pane.pane_id, f"read -r x < {fifo}", "Enter")
        await until(lambda: os.readlink(f"/proc/{pid}/fd/0") == str(fifo))
        loop = asyncio.get_running_loop()
        started = loop.time()
        await facts.until_line_editor_reads(pid, 0.3, edits=True)
        assert loop.time() - started >= 0.3  # waited: no line editor reads yet
        os.write(writer, b"done\n")  # the builtin returns, the prompt comes, then readline
        await until(lambda: os.readlink(f"/proc/{pid}/fd/0") != str(fifo))
        started = loop.time()
        await facts.until_line_editor_reads(pid, 5.0, edits=True)
        assert loop.time() - started < 4.0  # the line editor reads: not waited out
    finally:
        os.close(writer)
        tmux(main_tmux_socket, "kill-session", "-t", f"={pane.session_name}", check=False)
