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
from typing import TYPE_CHECKING

from schemux.errors import Created, SchemuxError
from schemux.tmux_format import Query, Row

if TYPE_CHECKING:  # schemux.tmux imports this module (created_session), so not at run time
    from schemux.tmux import TmuxServer

IDENTITY = Query(("pid", "start_time", "socket_path"))
IDENTITY_FORMAT = IDENTITY.format
# what a ``new-session -P -F`` prints to give the new session's reference: the server
# prints its own identity with the id, so no further command is needed for it
CREATED_SESSION = Query(("session_id", *IDENTITY.names))


@dataclass(frozen=True)
class ServerIdentity:
    """One running tmux server, as it reports itself."""

    pid: int
    start_time: int
    socket_path: str

    @classmethod
    def parse(cls, line: str) -> ServerIdentity:
        """From a line of ``IDENTITY_FORMAT``."""
        return cls.of(IDENTITY.parse(line))

    @classmethod
    def of(cls, row: Row) -> ServerIdentity:
        """From a row holding the fields of ``IDENTITY`` (and maybe others)."""
        return cls(int(row["pid"]), int(row["start_time"]), row["socket_path"])

    def generation(self, object_id: str) -> str:
        text = f"{self.pid}\0{self.start_time}\0{self.socket_path}\0{object_id}"
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


async def server_identity(server: TmuxServer) -> ServerIdentity:
    lines = await server.run("display-message", "-p", IDENTITY_FORMAT)
    if not lines:
        raise SchemuxError(f"tmux on {server.address.describe()} did not report its identity")
    return ServerIdentity.parse(lines[0])


def created_session(row: Row) -> Created:
    """The reference of a session made by a ``new-session`` that printed (at least) the
    fields of ``CREATED_SESSION``."""
    session_id = row["session_id"]
    return Created("session", session_id, ServerIdentity.of(row).generation(session_id))
