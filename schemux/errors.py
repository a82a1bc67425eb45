"""Every error of the runtime, in one place, and how a message is kept short.

One base, :class:`SchemuxError`, carries what any failure tells a client: a stable
``code``, the ``message``, a ``suggestion`` of what to do next (in the manner of
libtmux-mcp's expected-error type), and its ``delivery``: whether anything reached tmux.
A subclass fixes the code and delivery of one kind of failure. The pipeline
(``schemux.serving.server``) renders an error per contract family: as text with ``isError`` for
most tools, as the ``{ok: false, error: {code, message, delivery, effects}}`` envelope for
the ``tmux_*`` tools (``SchemuxError.envelope``). Rendering does no I/O: what the envelope
reports of a call's effects is attached while the call runs (``schemux.domain.failures``).
Start-up errors (``ConfigError``, ``TmuxUnavailable``) share the base; they are printed
on stderr (``schemux: MESSAGE``) and never reach a client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

PREVIEW_CHARACTERS = 80  # of a value quoted in an error message
MESSAGE_CHARACTERS = 2000  # of a whole message, whatever it quotes

# The codes of the failures the pipeline answers itself (``schemux.serving.server``), where no
# SchemuxError is raised; the audit log records them as it records ``SchemuxError.code``.
INVALID_ARGUMENTS = "invalid_arguments"  # against the inputSchema, or text tmux cannot take
UNKNOWN_TOOL = "unknown_tool"  # a name this server does not serve
INTERNAL_ERROR = "internal_error"  # an unexpected exception, or a result breaking its schema
CANCELLED = "cancelled"  # the client cancelled the call, or the server ended under it
POLICY_DENIED = "policy_denied"  # the policy file refused it, or the person did not approve


def shorten(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text) - limit} more characters)"


def preview(value: object) -> str:
    """``repr(value)`` for an error message, cut after ``PREVIEW_CHARACTERS``: a message
    never echoes a long value back whole."""
    return shorten(repr(value), PREVIEW_CHARACTERS)


def bounded_message(message: str, instance: object) -> str:
    """A validator's message about ``instance`` with every long value it quotes cut
    short: jsonschema quotes the whole instance (a 10 MB value would come back whole), or
    the unexpected keys of an object."""
    if len(message) > PREVIEW_CHARACTERS:
        quoted: list[object] = [instance]
        if isinstance(instance, dict | list):
            quoted += list(instance)
        for value in quoted:
            text = repr(value)
            if len(text) > PREVIEW_CHARACTERS and text in message:
                message = message.replace(text, preview(value))
    return shorten(message, MESSAGE_CHARACTERS)


Delivery = Literal["not_sent", "possibly_sent", "observed"]
"""Whether anything reached tmux: nothing did; the connection failed with a command
outstanding; tmux answered, and the answer is why the call failed."""


@dataclass(frozen=True)
class Created:
    """An object a call created, by reference (``schemux.tmux.references``)."""

    kind: Literal["session"]
    id: str
    generation: str


@dataclass(frozen=True)
class Effects:
    """What a call created before it failed (``known``), or that it created nothing."""

    state: Literal["none", "known"]
    created: tuple[Created, ...] = ()


class SchemuxError(Exception):
    """An expected failure: the call could not be done, and the agent can act on why.

    ``code`` and ``delivery`` default to the class's; ``effects`` is set by
    ``schemux.domain.failures.reporting_effects`` once the call's effects are known, and only
    an error that has them is rendered as the envelope of the ``tmux_*`` family (one refused
    before any tmux work is text, like an invalid argument).
    """

    code: str = "tmux_error"
    delivery: Delivery = "possibly_sent"

    def __init__(
        self,
        message: str,
        *,
        suggestion: str | None = None,
        code: str | None = None,
        delivery: Delivery | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.suggestion = suggestion
        if code is not None:
            self.code = code
        if delivery is not None:
            self.delivery = delivery
        self.effects: Effects | None = None

    def render(self) -> str:
        """The text a client reads: the message, then the suggestion; both bounded."""
        message = shorten(self.message, MESSAGE_CHARACTERS)
        if self.suggestion is None:
            return message
        return f"{message}\nSuggestion: {shorten(self.suggestion, MESSAGE_CHARACTERS)}"

    def envelope(self) -> dict[str, Any]:
        """The failure as the ``tmux_*`` family's result (its contract's error branch,
        the same in every tool of the family): ``effects`` only when known."""
        error: dict[str, Any] = {
            "code": self.code,
            "message": self.render(),
            "delivery": self.delivery,
        }
        if self.effects is not None:
            error["effects"] = {
                "state": self.effects.state,
                "created": [
                    {"kind": c.kind, "id": c.id, "generation": c.generation}
                    for c in self.effects.created
                ],
            }
        return {"ok": False, "error": error}


class Refused(SchemuxError):
    """A call the ``tmux_*`` family refuses with a code of its own (``stale_reference``,
    ``pane_closed``, ``cursor_unknown``, ...): what tmux answered, or what schemux
    holds, shows it cannot be done."""

    def __init__(self, code: str, message: str, delivery: Delivery = "observed") -> None:
        super().__init__(message, code=code, delivery=delivery)


class ShellNotStarted(SchemuxError):
    """A pane made a moment ago still runs tmux's own fork, which has not yet become the
    pane's shell, or its shell is still on its way to its first prompt: a call waits for
    it within its time rather than refuse the pane."""


class ShellBusy(SchemuxError):
    """A pane's shell has handed its terminal to a job: it is not at its prompt."""

    code = "busy"


class PaneBusy(SchemuxError):
    """Another run_command call (of this schemux or another) holds the pane: nothing of
    this call was typed into it."""

    code = "busy"


class NotFound(SchemuxError):
    """What the call names is not there (a pane, session, window or program): nothing
    was changed."""

    code = "not_found"


class PaneGone(NotFound):
    """The pane a call resolved closed before anything was typed into it (its shell had
    just ended, say): nothing ran."""


class InvalidArgument(SchemuxError):
    """An argument the handler cannot take, though its contract allows it (a name tmux
    would change, a layout that is no layout): refused before anything was sent."""

    code = INVALID_ARGUMENTS
    delivery = "not_sent"


class Unfit(SchemuxError):
    """What the call names is there but cannot take the call as it stands (a dead pane,
    one in copy mode, a start directory that cannot be entered, a program not found):
    nothing was changed."""

    code = "refused"


class ServerUnavailable(SchemuxError):
    """No tmux server runs at the address (nothing was sent to one)."""

    code = "server_unavailable"
    delivery = "not_sent"


_TARGET_GONE = re.compile(r"can't find (pane|window|session)|no such (pane|window|session)")


class TmuxCommandError(SchemuxError):
    """tmux answered a command with an error (no such pane, no server, ...)."""

    delivery = "observed"

    def __init__(self, command: str, stderr: str, *, suggestion: str | None = None) -> None:
        super().__init__(f"tmux {command} failed: {stderr}", suggestion=suggestion)
        self.command = command
        self.stderr = stderr

    @property
    def target_gone(self) -> bool:
        """Whether tmux said the pane, window or session named no longer exists (3.3a
        says it in two ways)."""
        return _TARGET_GONE.search(self.stderr) is not None


class ConnectionLost(SchemuxError):
    """The control connection ended (the server exited, or a command timed out)."""

    code = "connection_lost"


class UnsendableArgument(SchemuxError):
    """An argument tmux cannot be given (a NUL character); nothing was sent."""

    delivery = "not_sent"


class TrackingUnavailable(SchemuxError):
    """No native process identity backend for this server; the message says why."""

    code = "tracking_unavailable"
    delivery = "observed"

    def render(self) -> str:
        return f"tracking is refused: {super().render()}"


class TmuxUnavailable(SchemuxError):
    """tmux is missing or too old to serve; the message is one line for stderr."""

    code = "tmux_unavailable"
    delivery = "not_sent"


class ConfigError(SchemuxError):
    """A setting that cannot be used; the message names it."""

    code = "config_error"
    delivery = "not_sent"


class PolicyDenied(SchemuxError):
    """The policy file (``--policy``) refuses the call: a rule denies its command, the
    pane is outside its write scope, or the person declined to approve it."""

    code = POLICY_DENIED
    delivery = "not_sent"


class ApprovalNeeded(SchemuxError):
    """The policy asks the person before this call goes on (``question`` is what they
    are shown); nothing has been sent to tmux. The serving layer asks them by MCP
    elicitation and runs the call again once they accept."""

    code = "approval_needed"
    delivery = "not_sent"

    def __init__(self, question: str, reason: str) -> None:
        super().__init__(question)
        self.question = question
        self.reason = reason
