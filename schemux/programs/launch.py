"""From a start_program or run_program request to a ProgramSpec, checked before anything
runs: argv[0] found and executable, the start directory enterable, fromPaneId alive, and
the variables of that pane's shell read when inheritShell asks for them."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Protocol

from schemux.audit.log import CallRecord
from schemux.errors import SchemuxError, Unfit
from schemux.hosts.programs.host import LaunchProblem, ProgramHost
from schemux.panes.targets import PaneInfo, PaneTarget, resolve_pane
from schemux.programs.program import ProgramSpec
from schemux.shell.commands import run_in_shell
from schemux.tmux.server import TmuxServer

# what every program gets: no pager waits for a key nobody presses
_HEX = re.compile("(?:[0-9a-f]{2})*")  # what ``od -An -v -tx1`` prints, blanks removed
FIXED_ENVIRONMENT = MappingProxyType({"PAGER": "cat", "GIT_PAGER": "cat"})


class LaunchRequest(Protocol):
    """The fields start_program and run_program share."""

    @property
    def argv(self) -> list[str]: ...
    @property
    def from_pane_id(self) -> str | None: ...
    @property
    def placement(self) -> str | None: ...
    @property
    def inherit_shell(self) -> object: ...
    @property
    def input(self) -> str | None: ...
    @property
    def start_directory(self) -> str | None: ...
    @property
    def width(self) -> int | None: ...
    @property
    def height(self) -> int | None: ...


async def program_spec(
    server: TmuxServer,
    request: LaunchRequest,
    notes: CallRecord | None,
    *,
    host: ProgramHost,
    lifetime: float,
    separate_stderr: bool = False,
    keep: bool = False,
    hold: bool = False,
) -> ProgramSpec:
    if not request.argv or not request.argv[0]:
        raise SchemuxError("argv[0] is empty", suggestion="name the program to run first")
    inherit = request.inherit_shell
    if inherit not in (None, False) and request.from_pane_id is None:
        raise SchemuxError(
            "inheritShell needs fromPaneId: the pane whose shell's variables to read",
            suggestion="pass fromPaneId, or drop inheritShell",
        )
    directory = request.start_directory
    from_session = None
    # the host's own: over ssh, the remote session's PATH and directory
    environment = {"PATH": await host.default_path()}
    if request.from_pane_id is not None:
        pane = await resolve_pane(server, PaneTarget(pane_id=request.from_pane_id), notes)
        from_session = pane.session_id
        if pane.dead:
            raise SchemuxError(
                f"fromPaneId {pane.pane_id} is dead: its program has ended",
                suggestion="pass a live pane, or omit fromPaneId",
            )
        if directory is None:
            directory = pane.current_path
            if not directory:  # e.g. a program's pane: its gate's directory is private
                raise SchemuxError(
                    f"the current directory of fromPaneId {pane.pane_id} cannot be read",
                    suggestion="pass startDirectory",
                )
        if inherit not in (None, False):
            names = None if inherit is True else _names(inherit)
            environment = await shell_environment(server, pane, names)
    if directory is None:
        directory = await host.default_directory()
    # argv[0] with inheritShell is found on the shell's PATH, checked by the gate's exec
    program = request.argv[0] if inherit in (None, False) else None
    problem = await host.check_launch(directory, program, environment.get("PATH", ""))
    if problem is not None:
        raise _launch_error(problem, directory, request.argv[0])
    return ProgramSpec(
        argv=list(request.argv),
        start_directory=directory,
        environment={**environment, **FIXED_ENVIRONMENT},
        stdin_text=request.input,
        separate_stderr=separate_stderr,
        from_pane=request.from_pane_id,
        from_session=from_session,
        placement=request.placement or "window",
        width=request.width,
        height=request.height,
        lifetime=lifetime,
        keep=keep,
        hold=hold,
    )


def _launch_error(problem: LaunchProblem, directory: str, program: str) -> Unfit:
    if problem in ("notdir", "denied"):
        reason = "not a directory" if problem == "notdir" else "permission denied"
        return Unfit(
            f"startDirectory {directory!r} cannot be entered ({reason})",
            suggestion="pass an existing directory, literally (no ~ or variables)",
        )
    if problem == "missing":
        return Unfit(f"argv[0] {program!r} does not exist", suggestion="check the path")
    if problem == "noexec":
        return Unfit(f"argv[0] {program!r} is not executable", suggestion="check its permissions")
    return Unfit(
        f"argv[0] {program!r} was not found on this MCP server's PATH, or is not executable",
        suggestion='give its full path, or ["sh", "-c", ...] for a shell builtin',
    )


def _names(inherit: object) -> list[str]:
    """inheritShell's list of names (a generated RootModel of RootModels)."""
    return [str(getattr(item, "root", item)) for item in getattr(inherit, "root", ())]


async def shell_environment(
    server: TmuxServer, pane: PaneInfo, names: list[str] | None
) -> dict[str, str]:
    """The variables the pane's idle shell exported, read by typing one ``env`` into it."""
    result = await run_in_shell(
        server, pane, "env -0 | od -An -v -tx1", timeout=10, suppress_history=True
    )
    digits = "".join("".join(result.lines).split())
    if (
        result.timed_out
        or result.exit_status != 0
        or result.head_lost
        or not _HEX.fullmatch(digits)
    ):
        raise SchemuxError(
            f"could not read the variables of the shell in {pane.pane_id}",
            suggestion="make sure that pane is a POSIX shell idle at its prompt",
        )
    raw = bytes.fromhex(digits)
    variables = {}
    for entry in raw.split(b"\0"):
        key, sep, value = entry.decode("utf-8", "surrogateescape").partition("=")
        if sep and (names is None or key in names):
            variables[key] = value
    return variables
