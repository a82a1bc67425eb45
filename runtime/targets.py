"""Finding the pane a call means, from the ids and names the contracts take.

With no target, the pane is the one tmux's own command line picks when run outside
tmux: the active pane of the active window of the most recently used session. schemux's
control client is attached to its own session (``OWNED_SESSION``), where commands
without ``-t`` would land, so the rule is applied here explicitly: among all sessions but
the owned one, the highest ``session_activity`` wins; as that has whole seconds only,
a tie goes to the newest session (the highest session id). The owned session is never
resolved to, whatever the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schemux.engine import CONTROL_MARK, OWNED_SESSION
from schemux.errors import TmuxCommandError, ToolError
from schemux.tmux import TmuxServer

_ID_SHAPES = {
    "pane_id": (re.compile(r"%\d+"), "%3"),
    "window_id": (re.compile(r"@\d+"), "@1"),
    "session_id": (re.compile(r"\$\d+"), "$0"),
}

_FIELDS = (
    "pane_id",
    "window_id",
    "session_id",
    "session_name",
    "pane_dead",
    "pane_in_mode",
    "pane_current_command",
    "pane_pid",
    "pane_current_path",
    "socket_path",
    CONTROL_MARK,
)
_FORMAT = "\t".join(f"#{{{name}}}" for name in _FIELDS)


@dataclass(frozen=True)
class PaneInfo:
    pane_id: str
    window_id: str
    session_id: str
    session_name: str
    dead: bool
    in_mode: bool
    current_command: str
    pid: int
    current_path: str
    socket_path: str


@dataclass(frozen=True)
class PaneTarget:
    """What a call asked for; any mix of the four, the most specific one wins and the
    others must agree with it."""

    pane_id: str | None = None
    window_id: str | None = None
    session_id: str | None = None
    session_name: str | None = None

    def validate(self) -> None:
        for name, (shape, example) in _ID_SHAPES.items():
            value = getattr(self, name)
            if value is not None and not shape.fullmatch(value):
                raise ToolError(
                    f"{name} {value!r} is not a tmux {name.replace('_', ' ')}",
                    suggestion=f"pass an id like {example!r}, as list-panes -F "
                    f"'#{{{name}}}' prints it",
                )
        if self.session_name == "":
            raise ToolError("session_name is empty", suggestion="omit it or name a session")

    def tmux_target(self) -> str | None:
        if self.pane_id is not None:
            return self.pane_id
        if self.window_id is not None:
            return self.window_id
        if self.session_id is not None:
            return self.session_id
        if self.session_name is not None:
            return f"={self.session_name}:"
        return None

    def describe(self) -> str:
        given = [f"{k}={v!r}" for k, v in vars(self).items() if v is not None]
        return (
            ", ".join(given) if given else "the default pane (active pane of the current session)"
        )


async def resolve_pane(server: TmuxServer, target: PaneTarget) -> PaneInfo:
    """The pane ``target`` means on ``server``: a window or session means its active pane."""
    target.validate()
    tmux_target = target.tmux_target()
    not_found = f"no pane matches {target.describe()} on {server.address.describe()}"
    list_panes = "list the panes with `tmux list-panes -a` and pass an existing pane_id"
    if tmux_target is None:
        line = await _default_pane(server)
        if line is None:
            raise ToolError(not_found, suggestion="create a session, e.g. `tmux new-session -d`")
    else:
        try:
            lines = await server.run("display-message", "-p", "-t", tmux_target, _FORMAT)
        except TmuxCommandError as error:
            raise ToolError(f"{not_found}: {error.stderr}", suggestion=list_panes) from None
        # display-message answers an unknown target with an empty line, not an error
        if not lines or not lines[0].split("\t", 1)[0]:
            raise ToolError(not_found, suggestion=list_panes)
        line = lines[0]
    values = dict(zip(_FIELDS, line.split("\t"), strict=True))
    if values["session_name"] == OWNED_SESSION and values[CONTROL_MARK] == "1":
        raise ToolError(
            f"{not_found}: it is the window of schemux's control clients in {OWNED_SESSION!r}",
            suggestion="target a pane of another session",
        )
    pane = PaneInfo(
        pane_id=values["pane_id"],
        window_id=values["window_id"],
        session_id=values["session_id"],
        session_name=values["session_name"],
        dead=values["pane_dead"] == "1",
        in_mode=values["pane_in_mode"] == "1",
        current_command=values["pane_current_command"],
        pid=int(values["pane_pid"] or 0),
        current_path=values["pane_current_path"],
        socket_path=values["socket_path"],
    )
    _check_agreement(target, pane)
    return pane


async def _default_pane(server: TmuxServer) -> str | None:
    """The ``_FORMAT`` line of the default pane (see the module's docstring), if any."""
    lines = await server.run(
        "list-panes", "-a", "-f", "#{&&:#{window_active},#{pane_active}}",
        "-F", f"#{{session_activity}}\t{_FORMAT}",
    )  # fmt: skip
    best: tuple[int, int, str] | None = None
    for line in lines:
        activity, _, rest = line.partition("\t")
        values = dict(zip(_FIELDS, rest.split("\t"), strict=True))
        if values["session_name"] == OWNED_SESSION:
            continue
        key = (int(activity), int(values["session_id"].lstrip("$")), rest)
        if best is None or key[:2] > best[:2]:
            best = key
    return None if best is None else best[2]


def _check_agreement(target: PaneTarget, pane: PaneInfo) -> None:
    for name in ("window_id", "session_id", "session_name"):
        wanted = getattr(target, name)
        if wanted is not None and wanted != getattr(pane, name):
            raise ToolError(
                f"pane {pane.pane_id} is not in {name} {wanted!r} "
                f"(it is in {name} {getattr(pane, name)!r})",
                suggestion="pass only pane_id, or ids that belong together",
            )
