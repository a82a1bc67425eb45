"""Typing into a pane as send_keys does: the rules of one operation, shared by send_keys
and send_keys_batch.

``keys`` reaches tmux as one quoted argument after ``--``: never an option, never split
into a list of keys. Without ``literal``, tmux reads it as a key name when the whole of it
is one (``C-c``, ``Enter``, ``Up``, ``Escape``, ``F1``, ...) and types it as text
otherwise; with ``literal`` it is always text. ``suppress_history`` types a space first
(shells that ignore space-led commands keep it out of history); ``enter`` presses Enter
afterwards, in the same tmux command line.
"""

from __future__ import annotations

from schemux.targets import PaneInfo
from schemux.tmux import TmuxServer
from schemux.tmux_command import THEN


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
    command = ["send-keys", "-t", pane.pane_id, *(["-l"] if literal else []), "--", text]
    if enter:
        command += [THEN, "send-keys", "-t", pane.pane_id, "Enter"]
    await server.run(*command)
