"""Models of the run_shell_command tool, generated from schemas/tools/run_shell_command.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class RunShellCommandInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    command: Annotated[
        str,
        Field(
            description="The shell command, as you would type it; several lines are allowed, heredocs included.",
            min_length=1,
        ),
    ]
    max_lines: Annotated[
        int | None,
        Field(
            alias="maxLines",
            description="Keep at most this many lines, from the end. Defaults to all.",
            gt=0,
            le=9007199254740991,
        ),
    ] = None
    pane_id: Annotated[
        str | None,
        Field(
            alias="paneId",
            description="The pane whose shell runs it. Without one, the default pane: the agent's pane when schemux started the tmux server, else the active pane of the most recently used session.",
        ),
    ] = None
    suppress_history: Annotated[
        bool | None,
        Field(
            alias="suppressHistory",
            description="Keep it out of the shell's history by typing it after a space (the shell must ignore such lines, as bash with HISTCONTROL=ignorespace, zsh with HIST_IGNORE_SPACE and fish do); a command of several lines, here-documents included, stays out whole. Defaults to false.",
        ),
    ] = None
    timeout_ms: Annotated[
        int,
        Field(
            alias="timeoutMs",
            description="How long to wait; 30 s by default and clamped by the server ceiling. A command still running then keeps running; the result says timed_out.",
            gt=0,
            le=9007199254740991,
        ),
    ] = 30000
    force: Annotated[
        bool,
        Field(
            description="Type though a person watches the pane (skips only the policy's ask for that)."
        ),
    ] = False


class RunShellCommandOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    dropped_lines: Annotated[
        int,
        Field(
            alias="droppedLines",
            description="Lines withheld by maxLines.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    effective_timeout_ms: Annotated[
        int,
        Field(
            alias="effectiveTimeoutMs",
            description="The timeout enforced.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    elapsed_ms: Annotated[
        int,
        Field(
            alias="elapsedMs", description="How long the call waited.", ge=0, le=9007199254740991
        ),
    ]
    exit_status: Annotated[
        int | None,
        Field(
            alias="exitStatus",
            description="The command's exit status; null when outcome is timed_out.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    outcome: Annotated[
        Literal["completed", "timed_out"],
        Field(
            description="completed: it finished. timed_out: it still runs in the pane; read the pane with capture_pane, or wait and try again later."
        ),
    ]
    output: Annotated[
        str,
        Field(
            description="What it printed, lines joined by line breaks, as the pane shows them: no prompt, no echoed command. On timed_out, what it printed so far."
        ),
    ]
    output_complete: Annotated[
        bool,
        Field(
            alias="outputComplete",
            description="False when outcome is timed_out, when maxLines cut the output, or when tmux's history limit dropped its head during the command (pipe a long output into a file, or use start_program).",
        ),
    ]
    pane_id: Annotated[str, Field(alias="paneId", description="The pane that ran it.")]
