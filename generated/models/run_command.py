"""Models of the run_command tool, generated from schemas/tools/run_command.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class RunCommandInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    command: Annotated[str, Field(description="Shell command to run in the target pane.")]
    max_lines: Annotated[
        int | None,
        Field(
            description="Maximum pane output lines to return. Defaults to all captured\nvisible output; pass a small value for a tail-only summary."
        ),
    ] = None
    pane_id: Annotated[str | None, Field(description="Pane ID (e.g. '%1').")] = None
    session_id: Annotated[
        str | None, Field(description="Session ID (e.g. '$1') for pane resolution.")
    ] = None
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None
    suppress_history: Annotated[
        bool,
        Field(
            description="For MCP calls, omission uses the server's LIBTMUX_SUPPRESS_HISTORY\ndefault; an explicit value overrides it. Direct Python calls default\nto False. Best effort: the shell must honor space-prefixed history\nsuppression. Suppression requires a single-line command; multiline\ncommands remain available when suppression is false."
        ),
    ] = True
    timeout: Annotated[
        float,
        Field(
            description="Maximum seconds to wait for command completion. Capped by the\nsame server wait ceiling as ``wait_for_text``; an over-large\nvalue is not an error — the wait returns at the ceiling and\nthe timeout actually enforced is reported on\n``RunCommandResult.effective_timeout``."
        ),
    ] = 30
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    force: Annotated[
        bool,
        Field(
            description="Type though a person watches the pane (skips only the policy's ask for that)."
        ),
    ] = False


class RunCommandOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    effective_timeout: Annotated[
        float,
        Field(
            description="Seconds actually enforced for command completion. Server policy caps the requested ``timeout``; compare against what you passed to see a clamp."
        ),
    ]
    elapsed_seconds: Annotated[float, Field(description="Time spent waiting in seconds")]
    exit_status: Annotated[
        int | None, Field(description="Shell exit status, or None when the command timed out")
    ] = None
    output: Annotated[
        list[str] | None, Field(description="Tail-preserved pane output after the wait completes")
    ] = None
    output_truncated: Annotated[
        bool, Field(description="True when output was tail-preserved to stay within max_lines")
    ] = False
    output_truncated_lines: Annotated[
        int, Field(description="Number of pane lines dropped from the head when truncating")
    ] = 0
    pane_id: Annotated[str, Field(description="Pane ID that received the command")]
    timed_out: Annotated[bool, Field(description="True when the wait timed out")]
