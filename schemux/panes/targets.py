"""Finding the pane a call means, from the ids and names the contracts take.

With no target, the pane is the agent's pane: the one schemux made when it started the
server (``schemux.tmux.agent_session``), marked with the pane option ``AGENT_MARK``; it stays
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
from types import MappingProxyType
from typing import Protocol, TypeVar

from schemux.audit.log import CallRecord
from schemux.errors import NotFound, SchemuxError, TmuxCommandError, preview
from schemux.names import OWNED_SESSION
from schemux.tmux.agent_session import AGENT_MARK
from schemux.tmux.format import option, query, tmux_row
from schemux.tmux.owned_session import CONTROL_MARK, is_control_window
from schemux.tmux.server import TmuxServer, agent_shell, agent_shell_ended

_ID_SHAPES = MappingProxyType(
    {
        "pane_id": (re.compile(r"%\d+"), "%3"),
        "window_id": (re.compile(r"@\d+"), "@1"),
        "session_id": (re.compile(r"\$\d+"), "$0"),
    }
)

_PANE_ID = _ID_SHAPES["pane_id"][0]


@tmux_row
class PaneRow:
    """A pane as a target's lookup reads it, with its session's use and activity, and
    whether it is the agent's pane."""

    pane_id: str
    window_id: str
    session_id: str
    session_name: str
    pane_dead: bool
    pane_in_mode: bool
    pane_current_command: str
    pane_pid: int | None
    pane_current_path: str
    socket_path: str
    session_activity: int | None
    window_active: bool
    pane_active: bool
    control: bool = option(CONTROL_MARK)
    agent: bool = option(AGENT_MARK)


# the active pane of each session's active window, and the agent's pane wherever it is
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
                raise SchemuxError(
                    f"{name} {preview(value)} is not a tmux {name.replace('_', ' ')}",
                    suggestion=f"pass an id like {example!r}, as list-panes -F "
                    f"'#{{{name}}}' prints it",
                )
        if self.session_name == "":
            raise SchemuxError("session_name is empty", suggestion="omit it or name a session")

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


def names_a_pane(request: PaneFields) -> bool:
    """Whether a request of that family names its pane, rather than take the default."""
    fields = (request.pane_id, request.window_id, request.session_id, request.session_name)
    return any(field is not None for field in fields)


async def resolve_requested_pane(
    server: TmuxServer, request: PaneFields, notes: CallRecord | None
) -> PaneInfo:
    """The pane a request of that family names (``resolve_pane``)."""
    target = PaneTarget(
        pane_id=request.pane_id,
        window_id=request.window_id,
        session_id=request.session_id,
        session_name=request.session_name,
    )
    return await resolve_pane(server, target, notes)


async def resolve_pane(
    server: TmuxServer, target: PaneTarget, notes: CallRecord | None
) -> PaneInfo:
    """The pane ``target`` means on ``server``: a window or session means its active pane.
    The pane is noted in the call's audit record ``notes`` (None: a request no record
    keeps, such as a resource's)."""
    target.validate()
    tmux_target = target.tmux_target()
    not_found = f"no pane matches {target.describe()} on {server.address.describe()}"
    listing = server.address.command_text("list-panes", "-a")
    list_panes = f"list the panes with `{listing}` and pass an existing pane_id"
    row: PaneRow | None
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
                sessions = server.address.command_text("list-sessions")
                raise NotFound(not_found, suggestion=f"list the sessions with `{sessions}`")
            making = server.address.command_text("new-session", "-d")
            raise NotFound(not_found, suggestion=f"create a session, e.g. `{making}`")
    elif target.pane_id is not None:
        # one round trip: every session holding the pane's window, to choose from
        rows = await query(server, PaneRow, "list-panes", "-a", "-f", _is_pane(target.pane_id))
        row = choose_session(rows, target)
        if row is None:
            raise NotFound(not_found, suggestion=list_panes)
    else:
        try:
            rows = await query(server, PaneRow, "display-message", "-t", tmux_target)
        except TmuxCommandError as error:
            raise NotFound(f"{not_found}: {error.stderr}", suggestion=list_panes) from None
        if not rows:
            raise NotFound(not_found, suggestion=list_panes)
        row = rows[0]
        if target.window_id is not None:
            row = await _holding_session(server, target, row)
    if is_control_window(row.session_name, row.control):
        raise NotFound(
            f"{not_found}: it is the window of schemux's control clients in {OWNED_SESSION!r}",
            suggestion="target a pane of another session",
        )
    pane = PaneInfo(
        pane_id=row.pane_id,
        window_id=row.window_id,
        session_id=row.session_id,
        session_name=row.session_name,
        dead=row.pane_dead,
        in_mode=row.pane_in_mode,
        current_command=row.pane_current_command,
        pid=row.pane_pid or 0,
        current_path=row.pane_current_path,
        socket_path=row.socket_path,
    )
    _check_agreement(target, pane)
    if notes is not None:
        notes.note_pane(pane.pane_id)
    return pane


async def _active_pane(server: TmuxServer, session_name: str | None) -> PaneRow | None:
    """The active pane of the session named exactly ``session_name``; with None, the
    default pane (see the module's docstring). None when there is no such pane."""
    best: PaneRow | None = None
    for row in await query(server, PaneRow, "list-panes", "-a", "-f", _ACTIVE_FILTER):
        active = row.window_active and row.pane_active
        if session_name is not None:
            if active and row.session_name == session_name:
                return row
            continue
        if row.session_name == OWNED_SESSION:
            continue
        if row.agent:
            return row
        if active and (best is None or _recency(row) > _recency(best)):
            best = row
    return best


def _is_pane(pane_id: str) -> str:
    """A filter format for the pane ``pane_id``, which goes into the format as it is: so
    only an id of tmux's shape (``%N``, as ``PaneTarget.validate`` and tmux make them)."""
    return f"#{{==:#{{pane_id}},{pane_id}}}"


async def _holding_session(server: TmuxServer, target: PaneTarget, row: PaneRow) -> PaneRow:
    """``row``, or the same pane in the session the module's docstring chooses."""
    named = target.session_id is not None or target.session_name is not None
    if row.session_name != OWNED_SESSION and not named:
        return row
    if not _PANE_ID.fullmatch(row.pane_id):  # it goes into a filter format
        return row
    rows = await query(server, PaneRow, "list-panes", "-a", "-f", _is_pane(row.pane_id))
    return choose_session(rows, target) or row


class SessionFields(Protocol):
    """What choosing among a pane's sessions reads of each row."""

    @property
    def session_id(self) -> str: ...
    @property
    def session_name(self) -> str: ...
    @property
    def session_activity(self) -> int | None: ...


S = TypeVar("S", bound=SessionFields)


def choose_session(rows: list[S], target: PaneTarget) -> S | None:
    """Of one pane's rows (one per session holding its window), leaving out the owned
    session unless the window is there alone: the session ``target`` names, else the
    most recently used."""
    others = [row for row in rows if row.session_name != OWNED_SESSION]
    candidates = others or rows
    for row in candidates:
        if (target.session_id, target.session_name) != (None, None) and (
            target.session_id in (None, row.session_id)
            and target.session_name in (None, row.session_name)
        ):
            return row
    return max(candidates, key=_recency, default=None)


def _recency(row: SessionFields) -> tuple[int, int]:
    """How recently the session was used; a tie goes to the newest session (as for the
    default pane)."""
    return (row.session_activity or 0, int(row.session_id.lstrip("$")))


def _check_agreement(target: PaneTarget, pane: PaneInfo) -> None:
    for name in ("window_id", "session_id", "session_name"):
        wanted = getattr(target, name)
        if wanted is not None and wanted != getattr(pane, name):
            raise SchemuxError(
                f"pane {pane.pane_id} is not in {name} {preview(wanted)} "
                f"(it is in {name} {preview(getattr(pane, name))})",
                suggestion="pass only pane_id, or ids that belong together",
            )
