"""A new process in a pane, as create_session, create_window, split_window and
respawn_pane start it (libtmux-mcp's): where it starts, its environment, whether its
shell keeps a history file, and the tmux command that makes it.

Every value reaches tmux as one argument of its own, never as a format: ``new-session``,
``new-window``, ``split-window`` and ``respawn-pane`` expand their ``-s``, ``-n`` and
``-c`` as formats (``#(...)`` there runs a shell command), so a name or directory goes
with each ``#`` doubled; their ``-e`` and their command are taken as they are. A name is
given after its flag, so one beginning with ``-`` is a name; the command comes after
``--``.

The start directory is checked before anything is made: ``~`` and ``~/`` are the home
of the host the server runs on, a relative path is taken from schemux's own directory
(on another host, from where its commands start), and the result must be a directory
that can be entered there (tmux would start the process elsewhere, saying nothing).
``environment`` is an object of strings, or the same object as a JSON string; each item
is one ``-e NAME=VALUE``. With history suppressed, the process also gets ``HISTFILE``
``/dev/null`` (bash, zsh, ksh) and ``fish_private_mode`` ``1`` (fish), unless the
environment sets them: its shell then writes no history file, unless its startup files
set another.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from schemux.domain.write_policy import SessionsMade
from schemux.errors import InvalidArgument, TmuxCommandError, Unfit, preview
from schemux.hosts import Host
from schemux.hosts.programs.host import ProgramHost
from schemux.panes.targets import PaneInfo
from schemux.tmux.command import THEN
from schemux.tmux.format import format_literal, parse_row, row_format, tmux_row
from schemux.tmux.server import TmuxServer

MAX_VARIABLES = 1000
HISTORY_SUPPRESSED = MappingProxyType({"HISTFILE": "/dev/null", "fish_private_mode": "1"})
_NAME = re.compile(r"[^=\x00]+")


@tmux_row
class NewPaneRow:
    """What a ``new-session``, ``new-window`` or ``split-window`` prints of what it made."""

    session_id: str
    window_id: str
    pane_id: str


NEW_PANE_FORMAT = row_format(NewPaneRow)


@dataclass(frozen=True)
class Spawn:
    """How a new pane's process starts: ``directory`` (checked, absolute) or None for
    tmux's choice, ``environment`` its ``-e`` items, ``command`` or None for the
    default shell."""

    directory: str | None = None
    environment: Mapping[str, str] = field(default_factory=dict)
    command: str | None = None

    def flags(self) -> tuple[str, ...]:
        """``-c`` and ``-e`` as tmux takes them (see the module's docstring)."""
        flags: list[str] = []
        if self.directory is not None:
            flags += ["-c", format_literal(self.directory)]
        for name, value in self.environment.items():
            flags += ["-e", f"{name}={value}"]
        return tuple(flags)

    def command_arguments(self) -> tuple[str, ...]:
        """The command after ``--``, or nothing for the default shell."""
        return () if self.command is None else ("--", self.command)


def environment_items(
    raw: Mapping[str, str] | str | None, suppress_history: bool
) -> dict[str, str]:
    """The variables ``environment`` names (an object, or its JSON text), with those
    that keep history out when ``suppress_history``; SchemuxError naming the argument
    when one cannot be given to tmux."""
    given = _as_object(raw) if isinstance(raw, str) else dict(raw or {})
    if len(given) > MAX_VARIABLES:
        raise InvalidArgument(
            f"environment has {len(given)} variables: at most {MAX_VARIABLES} are taken",
            suggestion="pass fewer variables",
        )
    for name in given:
        if not _NAME.fullmatch(name):
            raise InvalidArgument(
                f"environment: {preview(name)} is not a variable name (empty, or holding '=')",
                suggestion="name each variable without '='",
            )
    if suppress_history:
        given = {**HISTORY_SUPPRESSED, **given}
    return given


def _as_object(raw: str) -> dict[str, str]:
    if raw == "":
        return {}
    try:
        given = json.loads(raw)
    except ValueError as error:
        raise InvalidArgument(
            f"environment {preview(raw)} is not JSON: {error}",
            suggestion='pass an object, such as {"NAME": "value"}',
        ) from None
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise InvalidArgument(
            f"environment {preview(raw)} is not a JSON object of strings",
            suggestion='pass an object, such as {"NAME": "value"}',
        )
    return given


async def start_directory(given: str | None, host: Host, programs: ProgramHost) -> str | None:
    """The directory ``given`` means on the host (see the module's docstring), checked to
    be one that can be entered there; None when none is given. Call it once the host
    is reached (its home is known then)."""
    if given is None:
        return None
    if given == "":
        raise InvalidArgument("start_directory is empty", suggestion="omit it or name a directory")
    directory = given
    if directory == "~" or directory.startswith("~/"):
        directory = host.home() + directory[1:]
    elif not directory.startswith("/"):
        directory = posixpath.join(await programs.default_directory(), directory)
    directory = posixpath.normpath(directory)
    problem = await programs.check_launch(directory, None, "")
    if problem is not None:
        reason = "permission denied" if problem == "denied" else "not a directory"
        raise Unfit(
            f"start_directory {preview(given)} cannot be entered ({reason}: {directory!r} "
            f"on {host.describe()})",
            suggestion="pass an existing directory",
        )
    return directory


async def new_session(
    server: TmuxServer,
    name: str | None,
    window_name: str | None,
    size: tuple[int | None, int | None],
    spawn: Spawn,
    keep_out_of_session: tuple[str, ...] = (),
) -> NewPaneRow:
    """A new detached session (``new-session -d``) whose one pane runs ``spawn``; its
    ``-e`` items stay in the session's environment, but ``keep_out_of_session``, which
    only its first process gets."""
    width, height = size
    args = ["new-session", "-d", "-P", "-F", NEW_PANE_FORMAT]
    args += _named("-s", name) + _named("-n", window_name)
    args += ["-x", str(width)] if width is not None else []
    args += ["-y", str(height)] if height is not None else []
    made = parse_row(
        NewPaneRow, (await server.run(*args, *spawn.flags(), *spawn.command_arguments()))[0]
    )
    server.shared(SessionsMade).ids.add(made.session_id)  # the policy's "owned" scope
    if keep_out_of_session:
        unset: list[str] = []
        for variable in keep_out_of_session:
            unset += [
                *([THEN] if unset else []),
                "set-environment",
                "-u",
                "-t",
                made.session_id,
                variable,
            ]
        await server.run(*unset)
    return made


async def new_window(
    server: TmuxServer,
    session_id: str,
    name: str | None,
    placement: str | None,
    select: bool,
    spawn: Spawn,
) -> NewPaneRow:
    """A new window in the session ``session_id``: at its first free index, or with
    ``placement`` ``before`` or ``after`` its current window; made its current window
    when ``select``."""
    args = ["new-window", "-P", "-F", NEW_PANE_FORMAT, "-t", f"{session_id}:"]
    args += [] if select else ["-d"]
    args += {"before": ["-b"], "after": ["-a"]}.get(placement or "", [])
    args += _named("-n", name)
    lines = await server.run(*args, *spawn.flags(), *spawn.command_arguments())
    return parse_row(NewPaneRow, lines[0])


async def split_pane(
    server: TmuxServer, pane_id: str, direction: str | None, size: str | None, spawn: Spawn
) -> NewPaneRow:
    """A new pane beside ``pane_id`` (below it unless ``direction`` says), ``size``
    rows or columns (or a percentage of the pane's); the pane split stays active."""
    args = ["split-window", "-d", "-P", "-F", NEW_PANE_FORMAT, "-t", pane_id]
    args += _SPLIT_FLAGS[direction or "below"]
    args += ["-l", size] if size is not None else []
    lines = await server.run(*args, *spawn.flags(), *spawn.command_arguments())
    return parse_row(NewPaneRow, lines[0])


_SPLIT_FLAGS = MappingProxyType(
    {"above": ("-v", "-b"), "below": ("-v",), "left": ("-h", "-b"), "right": ("-h",)}
)
_SIZE = re.compile(r"(?P<number>\d{1,6})(?P<percent>%{0,2})")


def split_size(size: str | int | None) -> str | None:
    """``size`` as ``split-window -l`` takes it: a number of rows or columns, or a
    percentage (``"50%"``; ``"50%%"``, as libtmux-mcp's text once wrote it, is the
    same); SchemuxError naming it otherwise."""
    if size is None:
        return None
    if isinstance(size, int):
        if size < 1:
            raise InvalidArgument(f"size {size} is not a size", suggestion="pass 1 or more")
        return str(size)
    found = _SIZE.fullmatch(size)
    if (
        found is None
        or int(found["number"]) < 1
        or (found["percent"] and int(found["number"]) > 100)
    ):
        raise InvalidArgument(
            f"size {preview(size)} is not a size",
            suggestion="pass a number of lines or columns (10), or a percentage ('50%')",
        )
    return found["number"] + ("%" if found["percent"] else "")


async def respawn(server: TmuxServer, pane: PaneInfo, kill: bool, spawn: Spawn) -> None:
    """Start the pane's process again (``respawn-pane``), its running one killed first
    when ``kill``; Unfit when it runs and is not to be killed."""
    args = ["respawn-pane", "-t", pane.pane_id, *(["-k"] if kill else [])]
    try:
        await server.run(*args, *spawn.flags(), *spawn.command_arguments())
    except TmuxCommandError as error:
        if "still active" in error.stderr:
            raise Unfit(
                f"pane {pane.pane_id} still runs {pane.current_command!r}",
                suggestion="pass kill true to end it first",
            ) from None
        raise


def _named(flag: str, name: str | None) -> list[str]:
    return [] if name is None else [flag, format_literal(name)]
