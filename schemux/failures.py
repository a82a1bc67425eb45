"""Failures as the error envelope of the ``tmux_*`` family: ``{code, message, delivery,
effects}``.

``delivery`` says honestly whether anything reached tmux: ``not_sent`` (nothing did),
``observed`` (tmux answered, and the answer is why the call failed), ``possibly_sent``
(the connection failed with a command outstanding). ``effects`` lists what the call
created: a read creates nothing itself, but the first command schemux sends to a server
makes its owned session there (see ``schemux.engine``), and a failed call that did so
says it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from schemux.control_connection import ConnectionLost
from schemux.errors import ServerUnavailable, TmuxCommandError, ToolError
from schemux.process_identity import TrackingUnavailable
from schemux.references import server_identity
from schemux.tmux import TmuxServer

T = TypeVar("T")


@dataclass(frozen=True)
class Created:
    kind: str
    id: str
    generation: str


@dataclass
class Failure(Exception):
    """A call that failed: a stable ``code`` and a message that says what to do next."""

    code: str
    message: str
    delivery: Literal["not_sent", "possibly_sent", "observed"] = "observed"
    effects_state: Literal["none", "known", "unknown"] = "none"
    created: list[Created] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def failure_of(error: ToolError | TrackingUnavailable) -> Failure:
    """The failure a lower layer's error means."""
    if isinstance(error, TrackingUnavailable):
        return Failure("tracking_unavailable", f"tracking is refused: {error}")
    if isinstance(error, ServerUnavailable):
        return Failure("server_unavailable", error.render(), "not_sent")
    if isinstance(error, TmuxCommandError):
        return Failure("tmux_error", error.render())
    if isinstance(error, ConnectionLost):
        return Failure("connection_lost", error.render(), "possibly_sent")
    return Failure("tmux_error", error.render(), "possibly_sent")


async def attempt(server: TmuxServer, work: Awaitable[T]) -> T:
    """``work``'s result, or a Failure for whatever went wrong, with its effects."""
    before = len(server.created_sessions)
    try:
        return await work
    except Failure as caught:
        failure = caught
    except (ToolError, TrackingUnavailable) as error:
        failure = failure_of(error)
    made = server.created_sessions[before:]
    if made:
        try:
            identity = await server_identity(server)
        except ToolError:
            failure.effects_state = "unknown"  # the server is gone or not answering
        else:
            failure.effects_state = "known"
            failure.created = [Created("session", id, identity.generation(id)) for id in made]
    raise failure
