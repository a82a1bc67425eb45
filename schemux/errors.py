"""Errors a tool call can end in, besides a schema violation."""

from __future__ import annotations

import re

from pydantic import BaseModel

PREVIEW_CHARACTERS = 80  # of a value quoted in an error message
MESSAGE_CHARACTERS = 2000  # of a whole message, whatever it quotes


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


class ToolError(Exception):
    """An expected failure: the call could not be done, and the agent can act on why.

    ``suggestion`` says what to do next (in the manner of libtmux-mcp's expected-error
    type); it is rendered after the message in the tool result.
    """

    def __init__(self, message: str, *, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.suggestion = suggestion

    def render(self) -> str:
        message = shorten(self.message, MESSAGE_CHARACTERS)
        if self.suggestion is None:
            return message
        return f"{message}\nSuggestion: {shorten(self.suggestion, MESSAGE_CHARACTERS)}"


class ServerUnavailable(ToolError):
    """No tmux server runs at the address (nothing was sent to one)."""


_TARGET_GONE = re.compile(r"can't find (pane|window|session)|no such (pane|window|session)")


class TmuxCommandError(ToolError):
    """tmux answered a command with an error (no such pane, no server, ...)."""

    def __init__(self, command: str, stderr: str, *, suggestion: str | None = None) -> None:
        super().__init__(f"tmux {command} failed: {stderr}", suggestion=suggestion)
        self.command = command
        self.stderr = stderr

    @property
    def target_gone(self) -> bool:
        """Whether tmux said the pane, window or session named no longer exists (3.3a
        says it in two ways)."""
        return _TARGET_GONE.search(self.stderr) is not None


class FailedResult(Exception):
    """A failure the tool's own contract describes as a result (an error envelope).

    ``result`` is the handler's typed result; the pipeline checks it against the
    outputSchema like any result and sends it as ``structuredContent`` with ``isError``
    set, so a client sees both the contract's error object and that the call failed.
    """

    def __init__(self, result: BaseModel) -> None:
        super().__init__(result)
        self.result = result
