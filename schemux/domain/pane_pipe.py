"""pipe_pane: a pane's output copied into a file by a shell command that tmux runs
(``pipe-pane``), or that copy stopped.

Running that command is the tool's purpose. tmux starts ``sh -c`` with a command line
schemux writes, ``umask 077 && exec cat >> PATH`` (``>`` when not appending), and only
the path is the caller's: one word of it, quoted for the shell (``shlex.quote``), with
each ``#`` doubled, because ``pipe-pane`` expands its command as a format, where
``#(...)`` would run and ``#{...}`` be replaced. The path must be absolute: the shell
runs in the tmux server's working directory, which the caller does not know, and ``~``
is not expanded. A file the pipe makes is the user's alone (0600); a file that exists
keeps its mode, and a symbolic link is followed, as ``cat``'s redirection follows it.
The copy is the pane's output as tmux reads it from the program: text with the
terminal's escape sequences.

A pane has one pipe. A pane that has one already is refused (the pipe may be a
person's log), and so is any pane of schemux's programs (marked ``PANE_OPTION``), whose
pipe is the copy that program's output is read from: replacing or stopping it would lose
that output. On this machine a path whose directory is missing, or that is a directory,
is refused before tmux runs anything; on another host a pipe that cannot open its file
ends at once, unseen. A pipe lasts until it is stopped (a call without a path), its
pane ends or the tmux server does: schemux's own end does not stop it.
"""

from __future__ import annotations

import os
import shlex

import anyio

from schemux.errors import INVALID_ARGUMENTS, NotFound, SchemuxError, Unfit, preview
from schemux.panes.targets import PaneInfo
from schemux.shell.abandoned import PANE_OPTION
from schemux.tmux.format import format_literal, option, query, tmux_row
from schemux.tmux.server import TmuxServer


@tmux_row
class _PipeRow:
    """Whether a pane has a pipe open, and whose program it runs (schemux's mark)."""

    pane_pipe: bool
    program: str = option(PANE_OPTION)


def check_path(path: str) -> None:
    """Refuse, before any tmux work, a path that is not absolute."""
    if not path.startswith("/"):
        raise SchemuxError(
            f"output_path {preview(path)} is not an absolute path",
            suggestion="pass the file's whole path from '/' (the pipe's shell runs in the "
            "tmux server's working directory, and does not expand ~)",
            code=INVALID_ARGUMENTS,
        )


def pipe_command(path: str, append: bool) -> str:
    """The shell command ``pipe-pane`` is given for ``path`` (see the module's docstring),
    as tmux reads it back from its format expansion."""
    redirection = ">>" if append else ">"
    return format_literal(f"umask 077 && exec cat {redirection} {shlex.quote(path)}")


async def start_pipe(server: TmuxServer, pane: PaneInfo, path: str, append: bool) -> None:
    """Copy ``pane``'s output into ``path`` from now on (see the module's docstring)."""
    state = await _state(server, pane)
    if pane.dead:
        raise Unfit(
            f"pane {pane.pane_id} is dead: its program has ended and writes nothing more",
            suggestion="pipe a pane whose program runs",
        )
    if state.pane_pipe:
        raise Unfit(
            f"pane {pane.pane_id} pipes its output already (pane_pipe is 1), perhaps into a "
            "person's log",
            suggestion="stop that pipe first (a call without output_path), then start yours",
        )
    if server.address.host.files_here:
        problem = await anyio.to_thread.run_sync(_place_problem, path)
        if problem is not None:
            raise Unfit(
                f"output_path {preview(path)}: {problem}",
                suggestion="pass a file's path in a directory that exists",
            )
    await server.run("pipe-pane", "-O", "-t", pane.pane_id, pipe_command(path, append))


async def stop_pipe(server: TmuxServer, pane: PaneInfo) -> bool:
    """Stop ``pane``'s pipe; whether it had one open."""
    state = await _state(server, pane)
    if not state.pane_pipe:
        return False
    await server.run("pipe-pane", "-t", pane.pane_id)
    return True


async def _state(server: TmuxServer, pane: PaneInfo) -> _PipeRow:
    """The pane's pipe and mark; Unfit for a pane of schemux's programs."""
    rows = await query(server, _PipeRow, "display-message", "-t", pane.pane_id)
    if not rows:
        raise NotFound(f"pane {pane.pane_id} was closed")
    if rows[0].program:
        raise Unfit(
            f"pane {pane.pane_id} runs a program schemux started: its pipe is the copy "
            "that program's output is read from",
            suggestion="read the program's output with its programId, or pipe another pane",
        )
    return rows[0]


def _place_problem(path: str) -> str | None:
    """What keeps a pipe from writing ``path`` on this machine, if anything is seen."""
    if os.path.isdir(path):
        return "is a directory"
    if not os.path.isdir(os.path.dirname(path)):
        return "its directory does not exist"
    return None
