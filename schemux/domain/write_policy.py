"""Where the policy lets a call type (``--policy``'s ``write_scope``), and whether a
person is watching the pane it would type into: checked by each tool that types into or
runs in a pane a call names, after the pane is resolved and before any key is sent.

A pane is in the ``agent`` scope when it is in the agent's session or runs one of
schemux's programs; in the ``owned`` scope also when its session was made by a call
(``SessionsMade``, kept per tmux server). A person watches a pane when a client that is
not a control client (a terminal) shows it as its current pane and used it within
``WATCHING_SECONDS``: typing there is the policy's ``watched`` action (``ask`` by default).
A call that says ``force`` knows a person watches and goes on without that ask; it never
skips a rule's ask (asked before any tmux work), a deny, ``watched = "deny"`` or the scope.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from schemux.errors import ApprovalNeeded, PolicyDenied

if TYPE_CHECKING:
    from schemux.domain.call import Call
    from schemux.panes.targets import PaneInfo
    from schemux.tmux.server import TmuxServer

# a client's last keystroke this recent means a person is at it
WATCHING_SECONDS = 300

_CLIENT_FORMAT = "#{client_control_mode}\t#{pane_id}\t#{client_activity}"


class SessionsMade:
    """The ids of the sessions calls made on one tmux server (kept by its
    ``TmuxServer.shared``): the ``owned`` write scope's."""

    def __init__(self) -> None:
        self.ids: set[str] = set()


async def check_typing(
    call: Call, server: TmuxServer, pane: PaneInfo, tool: str, *, force: bool = False
) -> None:
    """Raise ``PolicyDenied`` when the policy's write scope leaves ``pane`` out (whatever
    was approved or forced: the scope is the person's standing word), or
    ``ApprovalNeeded`` (``PolicyDenied`` for ``deny``) when a person watches it and the
    call is not ``approved`` (by them, or by a rule that allows it) nor, for an ask,
    ``force``d (noted on the call's audit record); nothing when no policy is set."""
    policy = call.settings.policy
    if policy is None:
        return
    if policy.write_scope != "all" and not _in_scope(call, server, pane, policy.write_scope):
        wider = "owned" if policy.write_scope == "agent" else "all"
        raise PolicyDenied(
            f"{tool}: pane {pane.pane_id} (session {pane.session_name!r}) is outside the "
            f"policy's write_scope {policy.write_scope!r}; nothing was typed",
            suggestion=f"use a pane of the agent's session ({call.settings.agent.name!r})"
            + (" or of a session you made with create_session" if wider == "all" else "")
            + f", or ask the person to set write_scope = {wider!r} in {policy.path}",
        )
    if call.approved or policy.watched == "allow" or not await _watched(server, pane.pane_id):
        return
    if force and policy.watched == "ask":
        if call.notes is not None:
            call.notes.note_policy("allow", reason="force")
        return
    reason = f"a person is watching pane {pane.pane_id} (a terminal shows it and was used lately)"
    if policy.watched == "deny":
        raise PolicyDenied(
            f"{tool}: {reason}; the policy's watched = 'deny' refuses typing there",
            suggestion="use another pane, or start a program (start_program) instead",
        )
    raise ApprovalNeeded(f"{tool} types into pane {pane.pane_id}: {reason}", reason)


def _in_scope(call: Call, server: TmuxServer, pane: PaneInfo, scope: str) -> bool:
    if pane.session_name == call.settings.agent.name:
        return True
    if call.programs.lookup_pane(server, pane.pane_id, call.session) is not None:
        return True
    return scope == "owned" and pane.session_id in server.shared(SessionsMade).ids


async def _watched(server: TmuxServer, pane_id: str) -> bool:
    """Whether a terminal client (not a control client) has ``pane_id`` as its current
    pane and was used in the last ``WATCHING_SECONDS``."""
    now = time.time()
    for line in await server.run("list-clients", "-F", _CLIENT_FORMAT):
        control, shown, activity = [*line.split("\t"), "", ""][:3]
        if control == "1" or shown != pane_id:
            continue
        if activity.isdigit() and now - int(activity) <= WATCHING_SECONDS:
            return True
    return False
