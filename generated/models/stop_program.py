"""Models of the stop_program tool, generated from schemas/tools/stop_program.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class StopProgramInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    program_id: Annotated[
        str,
        Field(
            alias="programId",
            description="The id start_program returned.",
            max_length=64,
            min_length=1,
        ),
    ]


class StopProgramOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    exit_status: Annotated[
        int | None,
        Field(
            alias="exitStatus",
            description="Its exit status once it completed on its own; null when a signal ended it or it never ran.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    outcome: Annotated[
        Literal["completed", "not_started", "expired", "stopped", "gone"],
        Field(
            description="How it ended: stopped when this call ended it; otherwise how it had ended before. How the program stands: running, completed (ended on its own, as exitStatus or signal says), not_started (argv[0] not found or not executable, or startDirectory not entered), expired (its lifetime ended it), stopped (stop_program ended it), gone (its pane was removed from outside)."
        ),
    ]
    program_id: Annotated[str, Field(alias="programId", description="The program stopped.")]
    signal: Annotated[
        str | None,
        Field(description='The signal that ended it, such as "SIGTERM"; otherwise null.'),
    ]
    was_running: Annotated[
        bool,
        Field(alias="wasRunning", description="True when it still ran and this call ended it."),
    ]
