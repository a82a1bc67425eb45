"""Typing into a pane as send_keys does: the rules of one operation, shared by send_keys
and send_keys_batch (and run_command's typing leaves modes the same way).

``keys`` reaches tmux as one quoted argument after ``--``: never an option, never split
into a list of keys. Without ``literal``, tmux reads it as a key name when the whole of it
is one (``C-c``, ``Enter``, ``Up``, ``Escape``, ``F1``, ...) and types it as text
otherwise; with ``literal`` it is always text. ``suppress_history`` types a space first
(shells that ignore space-led commands keep it out of history); ``enter`` presses Enter
afterwards, in the same tmux command line.

A pane in a mode (copy mode while a person scrolls back, view mode, a choose-tree, the
clock) takes keys as the mode's, not its program's: tmux looks each one up in the mode's
key table and runs what it is bound to (``y`` or ``C-w`` can run a ``run-shell`` or the
``copy-command``), and typed text never reaches the program. So the same command line
first leaves every mode of the pane (``copy-mode -q``, as pressing ``q`` would: the
person's scroll position and selection are given up, the pane shows its live screen).
tmux runs one client's command line to its end before it reads another client's keys, so
a person who enters copy mode again does so before the line or after it, never between
leaving the mode and typing.
"""

from __future__ import annotations

from schemux.panes.targets import PaneInfo
from schemux.tmux.command import THEN
from schemux.tmux.server import TmuxServer


def leaving_modes(pane_id: str) -> tuple[str, ...]:
    """The commands (ending with a separator) that take a pane out of every mode, to
    begin a command line that types into it."""
    return ("copy-mode", "-q", "-t", pane_id, THEN)


async def send_keys(
    server: TmuxServer,
    pane: PaneInfo,
    keys: str,
    *,
    enter: bool,
    literal: bool,
    suppress_history: bool,
) -> None:
    """Type ``keys`` into ``pane`` (see the module)."""
    text = (" " if suppress_history else "") + keys
    command = [
        *leaving_modes(pane.pane_id),
        *("send-keys", "-t", pane.pane_id, *(["-l"] if literal else []), "--", text),
    ]
    if enter:
        command += [THEN, "send-keys", "-t", pane.pane_id, "Enter"]
    await server.run(*command)
