"""References that bind to one live tmux object: ``{kind, id, generation}``.

tmux numbers panes, windows and sessions from 0 again when a server restarts, so an id
alone can name another object than the one an agent saw. The generation ties an id to
the server instance it was read from: a digest of the server's pid, its start time and
its socket path, with the object's id. A server restarted on the same socket gets a new
pid and start time, so every reference taken before no longer matches; within one
server instance tmux never reuses an id, so a match means the very object.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from schemux.errors import Created, SchemuxError
from schemux.tmux.format import Runner, parse_row, query, row_format, tmux_row


@tmux_row
class IdentityRow:
    """The fields that tell one running tmux server (rows reading more extend it)."""

    pid: int
    start_time: int
    socket_path: str


IDENTITY_FORMAT = row_format(IdentityRow)


@tmux_row
class CreatedSessionRow(IdentityRow):
    """What a ``new-session -P -F`` prints to give the new session's reference: the
    server prints its own identity with the id, so no further command is needed for it."""

    session_id: str


@dataclass(frozen=True)
class ServerIdentity:
    """One running tmux server, as it reports itself."""

    pid: int
    start_time: int
    socket_path: str

    @classmethod
    def parse(cls, line: str) -> ServerIdentity:
        """From a line of ``IDENTITY_FORMAT``."""
        return cls.of(parse_row(IdentityRow, line))

    @classmethod
    def of(cls, row: IdentityRow) -> ServerIdentity:
        """From a row holding the identity's fields (and maybe others)."""
        return cls(row.pid, row.start_time, row.socket_path)

    def generation(self, object_id: str) -> str:
        text = f"{self.pid}\0{self.start_time}\0{self.socket_path}\0{object_id}"
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class Server(Runner, Protocol):
    """A tmux server that can be asked (a ``schemux.tmux.server.TmuxServer``)."""

    def describe(self) -> str: ...


async def server_identity(server: Server) -> ServerIdentity:
    rows = await query(server, IdentityRow, "display-message")
    if not rows:
        raise SchemuxError(f"tmux on {server.describe()} did not report its identity")
    return ServerIdentity.of(rows[0])


def created_session(row: CreatedSessionRow) -> Created:
    """The reference of a session made by a ``new-session`` that printed a
    ``CreatedSessionRow`` (or a row extending it)."""
    generation = ServerIdentity.of(row).generation(row.session_id)
    return Created("session", row.session_id, generation)
