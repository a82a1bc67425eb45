"""Finding the pane a call means, from the ids and names the contracts take.

With no target, the pane is the agent's pane: the one schemux made when it started the
server (``schemux.agent_session``), marked with the pane option ``AGENT_MARK``; it stays
the default whatever sessions a person adds to that server later, as the pane the agent
has been working in. On a server without one (a server the user started, or one whose
agent pane has ended), the pane is the one tmux's own command line picks when run outside
tmux: the active pane of the active window of the most recently used session. schemux's
control client is attached to its own session (``OWNED_SESSION``), where commands without
``-t`` would land, so the rule is applied here explicitly: among all sessions but the
owned one, the highest ``session_activity`` wins; as that has whole seconds only, a tie
goes to the newest session (the highest session id). When there is no such session on
the configured server, schemux makes the agent's session there and uses its pane. The
owned session is never resolved to, whatever the target.

A window may be in several sessions (``link-window``; a wait links the waited window into
the owned session for its duration), and a ``-t %N`` lookup names the most recently
active of them. So a pane's session is chosen here too: the session a call named, if
it holds the pane; otherwise the most recently active one holding it other than the
owned session, which is the pane's session only for windows that live there alone
(programs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from schemux.agent_session import AGENT_MARK
from schemux.errors import TmuxCommandError, ToolError, preview
from schemux.owned_session import CONTROL_MARK, OWNED_SESSION, is_control_window
from schemux.tmux import TmuxServer, agent_shell, agent_shell_ended
from schemux.tmux_format import Query, Row

_ID_SHAPES = {
    "pane_id": (re.compile(r"%\d+"), "%3"),
    "window_id": (re.compile(r"@\d+"), "@1"),
    "session_id": (re.compile(r"\$\d+"), "$0"),
}

_PANE_ID = _ID_SHAPES["pane_id"][0]

_PANE = Query(
    (
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
)
# the active pane of each session's active window, with how recently the session was
# used, and the agent's pane wherever it is
_ACTIVE = Query(("session_activity", "window_active", "pane_active", AGENT_MARK, *_PANE.names))
_ACTIVE_FILTER = f"#{{||:#{{{AGENT_MARK}}},#{{&&:#{{window_active}},#{{pane_active}}}}}}"


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
                    f"{name} {preview(value)} is not a tmux {name.replace('_', ' ')}",
                    suggestion=f"pass an id like {example!r}, as list-panes -F "
                    f"'#{{{name}}}' prints it",
                )
        if self.session_name == "":
            raise ToolError("session_name is empty", suggestion="omit it or name a session")

    def tmux_target(self) -> str | None:
        """The most specific id given, as a ``-t`` target. A session name never becomes
        one: tmux's target syntax would read its ``:``, ``.`` or a leading ``=`` or
        ``{``; the session is found by comparing names instead."""
        if self.pane_id is not None:
            return self.pane_id
        if self.window_id is not None:
            return self.window_id
        if self.session_id is not None:
            return self.session_id
        return None

    def describe(self) -> str:
        given = [f"{k}={preview(v)}" for k, v in vars(self).items() if v is not None]
        return (
            ", ".join(given) if given else "the default pane (active pane of the current session)"
        )


class PaneFields(Protocol):
    """The target arguments of the libtmux-mcp family (run_command, send_keys,
    wait_for_text): any mix of a pane, a window and a session."""

    @property
    def pane_id(self) -> str | None: ...
    @property
    def window_id(self) -> str | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def session_name(self) -> str | None: ...


async def resolve_requested_pane(server: TmuxServer, request: PaneFields) -> PaneInfo:
    """The pane a request of that family names (``resolve_pane``)."""
    target = PaneTarget(
        pane_id=request.pane_id,
        window_id=request.window_id,
        session_id=request.session_id,
        session_name=request.session_name,
    )
    return await resolve_pane(server, target)


async def resolve_pane(server: TmuxServer, target: PaneTarget) -> PaneInfo:
    """The pane ``target`` means on ``server``: a window or session means its active pane."""
    target.validate()
    tmux_target = target.tmux_target()
    not_found = f"no pane matches {target.describe()} on {server.address.describe()}"
    list_panes = "list the panes with `tmux list-panes -a` and pass an existing pane_id"
    if tmux_target is None:
        row = await _active_pane(server, target.session_name)
        if row is None and target.session_name is None and server.agent is not None:
            await server.make_agent_session(server.agent)
            row = await _active_pane(server, None)
            if row is None:  # made and marked, and gone already
                shell = agent_shell()[0]
                raise agent_shell_ended(shell, server.agent.name, server.address.describe())
        if row is None:
            if target.session_name is not None:
                raise ToolError(not_found, suggestion="list the sessions with `tmux ls`")
            raise ToolError(not_found, suggestion="create a session, e.g. `tmux new-session -d`")
    else:
        try:
            lines = await server.run("display-message", "-p", "-t", tmux_target, _PANE.format)
        except TmuxCommandError as error:
            raise ToolError(f"{not_found}: {error.stderr}", suggestion=list_panes) from None
        row = _PANE.parse(lines[0]) if lines else None
        # display-message answers an unknown target with an empty line, not an error
        if row is None or not row["pane_id"]:
            raise ToolError(not_found, suggestion=list_panes)
        if target.pane_id is not None or target.window_id is not None:
            row = await _holding_session(server, target, row)
    if is_control_window(row["session_name"], row.flag(CONTROL_MARK)):
        raise ToolError(
            f"{not_found}: it is the window of schemux's control clients in {OWNED_SESSION!r}",
            suggestion="target a pane of another session",
        )
    pane = PaneInfo(
        pane_id=row["pane_id"],
        window_id=row["window_id"],
        session_id=row["session_id"],
        session_name=row["session_name"],
        dead=row.flag("pane_dead"),
        in_mode=row.flag("pane_in_mode"),
        current_command=row["pane_current_command"],
        pid=row.number("pane_pid") or 0,
        current_path=row["pane_current_path"],
        socket_path=row["socket_path"],
    )
    _check_agreement(target, pane)
    return pane


async def _active_pane(server: TmuxServer, session_name: str | None) -> Row | None:
    """The active pane of the session named exactly ``session_name``; with None, the
    default pane (see the module's docstring). None when there is no such pane."""
    lines = await server.run("list-panes", "-a", "-f", _ACTIVE_FILTER, "-F", _ACTIVE.format)
    best: tuple[int, int, Row] | None = None
    for row in _ACTIVE.parse_all(lines):
        active = row.flag("window_active") and row.flag("pane_active")
        if session_name is not None:
            if active and row["session_name"] == session_name:
                return row
            continue
        if row["session_name"] == OWNED_SESSION:
            continue
        if row.flag(AGENT_MARK):
            return row
        if not active:
            continue
        key = (row.number("session_activity") or 0, int(row["session_id"].lstrip("$")), row)
        if best is None or key[:2] > best[:2]:
            best = key
    return None if best is None else best[2]


async def _holding_session(server: TmuxServer, target: PaneTarget, row: Row) -> Row:
    """``row``, or the same pane in the session the module's docstring chooses."""
    named = target.session_id is not None or target.session_name is not None
    if row["session_name"] != OWNED_SESSION and not named:
        return row
    pane_id = row["pane_id"]
    if not _PANE_ID.fullmatch(pane_id):  # it goes into a filter format: only tmux's shape
        return row
    lines = await server.run(
        "list-panes", "-a", "-f", f"#{{==:#{{pane_id}},{pane_id}}}", "-F", _ACTIVE.format
    )
    return choose_session(_ACTIVE.parse_all(lines), target) or row


def choose_session(rows: list[Row], target: PaneTarget) -> Row | None:
    """Of one pane's rows (one per session holding its window), leaving out the owned
    session unless the window is there alone: the session ``target`` names, else the
    most recently used."""
    others = [row for row in rows if row["session_name"] != OWNED_SESSION]
    candidates = others or rows
    for row in candidates:
        if (target.session_id, target.session_name) != (None, None) and (
            target.session_id in (None, row["session_id"])
            and target.session_name in (None, row["session_name"])
        ):
            return row
    return max(candidates, key=_recency, default=None)


def _recency(row: Row) -> tuple[int, int]:
    """How recently the session was used; a tie goes to the newest session (as for the
    default pane)."""
    return (row.number("session_activity") or 0, int(row["session_id"].lstrip("$")))


def _check_agreement(target: PaneTarget, pane: PaneInfo) -> None:
    for name in ("window_id", "session_id", "session_name"):
        wanted = getattr(target, name)
        if wanted is not None and wanted != getattr(pane, name):
            raise ToolError(
                f"pane {pane.pane_id} is not in {name} {preview(wanted)} "
                f"(it is in {name} {preview(getattr(pane, name))})",
                suggestion="pass only pane_id, or ids that belong together",
            )
