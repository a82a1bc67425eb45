"""What a failed call of the ``tmux_*`` family reports besides its error: its effects.

The family's error envelope (``SchemuxError.envelope``) says what the call created. A
read creates nothing itself, but the first command schemux sends to a server makes its
owned session there (``schemux.tmux.owned_session``), and starting the configured server makes
the agent's session too. The command that makes a session prints its reference with it
(``schemux.tmux.references.CreatedSessionRow``) into the server's ``created_sessions``, so a
failure is reported from what is known already: nothing is asked of tmux after a call
failed (the server may be gone by then).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from schemux.errors import Effects, SchemuxError
from schemux.tmux.server import TmuxServer

T = TypeVar("T")


async def reporting_effects(server: TmuxServer, work: Awaitable[T]) -> T:
    """``work``'s result; a SchemuxError it raises goes on with the call's effects, the
    sessions made on ``server`` while it ran."""
    created = server.created_sessions
    before = len(created)
    try:
        return await work
    except SchemuxError as error:
        made = tuple(created[before:])
        error.effects = Effects("known", made) if made else Effects("none")
        raise
