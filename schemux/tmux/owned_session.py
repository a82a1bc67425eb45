"""schemux's own session on every tmux server it uses: its name, how it is made, and
which of its windows no tool ever reads.

``_schemux`` (``OWNED_SESSION``) is detached and runs an inert ``cat`` in an 80x24
window, the window that schemux's control clients attach to
(``schemux.tmux.control.engine``), marked with the window option ``CONTROL_MARK``. Its
other windows are programs schemux started, and, for a wait's duration, user windows
that a wait links in (``schemux.domain.pane_watch``).
"""

from __future__ import annotations

from schemux.names import OWNED_SESSION
from schemux.tmux.command import THEN
from schemux.tmux.format import row_format
from schemux.tmux.references import CreatedSessionRow

OWNED_TARGET = f"={OWNED_SESSION}"  # the session exactly, never a prefix match
CONTROL_MARK = "@schemux_control"  # window option of the owned session's control window


def creation_command() -> tuple[str, ...]:
    """The command list that makes the owned session, printing a ``CreatedSessionRow``."""
    return (
        "new-session", "-d", "-P", "-F", row_format(CreatedSessionRow),
        "-s", OWNED_SESSION, "-x", "80", "-y", "24", "cat", THEN,
        "set-option", "-t", OWNED_SESSION, "detach-on-destroy", "on", THEN,
        "set-option", "-w", "-t", f"{OWNED_SESSION}:", "remain-on-exit", "on", THEN,
        # marks the window of the control clients, which no tool reads; the other
        # windows of the session are programs that schemux started
        "set-option", "-w", "-t", f"{OWNED_SESSION}:", CONTROL_MARK, "1",
    )  # fmt: skip


def is_control_window(session_name: str, control_mark: bool) -> bool:
    """Whether a pane seen in ``session_name``, its window marked ``control_mark``
    (``#{@schemux_control}``), is the control clients' window: never a tool's target."""
    return session_name == OWNED_SESSION and control_mark


def in_other_sessions(linked_sessions_list: str) -> bool:
    """Whether ``#{window_linked_sessions_list}`` names a session other than
    ``_schemux`` (a name holding a comma splits, but never into only ``_schemux``)."""
    return any(name != OWNED_SESSION for name in linked_sessions_list.split(","))


def is_reserved(session_name: str, control_mark: bool, linked_sessions_list: str) -> bool:
    """Whether a window seen in ``session_name`` is one a listing leaves out there: the
    control window, or a user's window linked in (it is listed under its own
    sessions). Program windows live in the owned session alone and are listed."""
    return session_name == OWNED_SESSION and (
        control_mark or in_other_sessions(linked_sessions_list)
    )
