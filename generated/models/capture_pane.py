"""Models of the capture_pane tool, generated from schemas/tools/capture_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class CapturePaneInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str | None, Field(description="Pane ID (e.g. '%1').")] = None
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    session_id: Annotated[
        str | None, Field(description="Session ID (e.g. '$1') for pane resolution.")
    ] = None
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    start: Annotated[
        int | None,
        Field(
            description="Start line number. 0 is the first visible line. Negative values\nreach into scrollback history (e.g. -100 for last 100 lines)."
        ),
    ] = None
    end: Annotated[int | None, Field(description="End line number.")] = None
    max_lines: Annotated[
        int | None,
        Field(
            description="Maximum number of lines to return. Defaults to\n``CAPTURE_DEFAULT_MAX_LINES``. Pass ``None`` to return the\nfull capture with no truncation."
        ),
    ] = 500
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class CapturePaneOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: Annotated[
        str,
        Field(
            description="The captured text: the rows asked for, top to bottom, one line each; after a truncation, a first line [... truncated K lines ...]."
        ),
    ]
