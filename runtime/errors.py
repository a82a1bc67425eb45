"""Errors a tool call can end in, besides a schema violation."""

from __future__ import annotations

import re

from pydantic import BaseModel


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
        if self.suggestion is None:
            return self.message
        return f"{self.message}\nSuggestion: {self.suggestion}"


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
