"""Models of the read_program tool, generated from schemas/tools/read_program.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class ReadProgramInput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    cursor: Annotated[
        int | None,
        Field(
            description="The cursor the previous read_program returned. Omit to read from the start.",
            ge=0,
            le=9007199254740991,
        ),
    ] = None
    max_lines: Annotated[
        int | None,
        Field(
            alias="maxLines",
            description="Return at most this many lines from cursor. A page also stops at about 24,000 characters, so fewer lines come back when they are long.",
            gt=0,
            le=9007199254740991,
        ),
    ] = None
    program_id: Annotated[
        str,
        Field(
            alias="programId",
            description="The id start_program returned.",
            max_length=64,
            min_length=1,
        ),
    ]
    timeout_ms: Annotated[
        int,
        Field(
            alias="timeoutMs",
            description="How long to wait for something new: 0 returns at once, and omitted is 30 seconds. Clamped by the server ceiling.",
            ge=0,
            le=9007199254740991,
        ),
    ] = 30000


class ReadProgramOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    cursor: Annotated[
        int,
        Field(
            description="Pass to the next read_program.", ge=-9007199254740991, le=9007199254740991
        ),
    ]
    effective_timeout_ms: Annotated[
        int,
        Field(
            alias="effectiveTimeoutMs",
            description="The wait allowed.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    ended: Annotated[
        bool,
        Field(
            description="Whether it has ended and every byte it wrote has been returned. Until it is true, call again with cursor."
        ),
    ]
    exit_status: Annotated[
        int | None,
        Field(
            alias="exitStatus",
            description="The exit status once it completed, or 127 or 126 when not_started; null for a program a signal ended (see signal) or one still running.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    lost_end: Annotated[
        bool,
        Field(
            alias="lostEnd",
            description="True when tmux closed the pane before reading the end of the output.",
        ),
    ]
    outcome: Annotated[
        Literal["running", "completed", "not_started", "expired", "stopped", "gone"],
        Field(
            description="How the program stands, set from the first read after it ends, while ended stays false until its output is all read. running: it still runs. completed: it ended on its own, as exitStatus or signal says. not_started: it never ran, because argv[0] was not found or is not executable, or startDirectory could not be entered; text says which. expired: its lifetime ended it; start it again with a longer lifetimeMs. stopped: stop_program ended it while this read waited. gone: its pane was removed from outside, with no status."
        ),
    ]
    output_complete: Annotated[
        bool,
        Field(
            alias="outputComplete",
            description="True once ended is true and nothing is missing. False while it runs, when outputCut or lostEnd is true, or when a stop or the lifetime ended the program before its output was read to the end.",
        ),
    ]
    output_cut: Annotated[
        bool,
        Field(
            alias="outputCut",
            description="True once the copy stopped at its limit; later output is not kept.",
        ),
    ]
    signal: Annotated[
        str | None,
        Field(
            description='The signal that ended the program, such as "SIGTERM"; otherwise null. A program that exits 130 on its own reads as SIGINT, as that status means.'
        ),
    ]
    text: Annotated[str, Field(description="What it printed after cursor.")]
