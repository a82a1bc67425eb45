"""Models of the capture_since tool, generated from schemas/tools/capture_since.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class CaptureSinceInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    cursor: Annotated[
        str | None,
        Field(
            description="Opaque cursor returned by a prior ``capture_since`` call. When\nomitted, the tool captures the current visible screen and\nstarts a new cursor."
        ),
    ] = None
    pane_id: Annotated[
        str | None,
        Field(
            description="Pane ID (e.g. '%1'). Optional when ``cursor`` is supplied; the\ncursor carries the original pane id."
        ),
    ] = None
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    session_id: Annotated[
        str | None, Field(description="Session ID (e.g. '$1') for pane resolution.")
    ] = None
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    max_lines: Annotated[
        int | None,
        Field(
            description="Maximum number of lines to return. Defaults to\n``CAPTURE_SINCE_DEFAULT_MAX_LINES``. Pass ``None`` to\ndisable line truncation."
        ),
    ] = 500
    max_bytes: Annotated[
        int | None,
        Field(
            description="Maximum UTF-8 bytes to return across ``lines``. Defaults to\n``CAPTURE_SINCE_DEFAULT_MAX_BYTES``. Pass ``None`` to\ndisable byte truncation."
        ),
    ] = 128000
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class CaptureSinceOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str, Field(description="Pane ID that was captured")]
    cursor: Annotated[str, Field(description="Opaque cursor to pass back to ``capture_since``")]
    lines: Annotated[
        list[str] | None,
        Field(description="Captured lines, oldest first and tail-preserved if truncated"),
    ] = None
    elapsed_seconds: Annotated[float, Field(description="Time spent capturing in seconds")]
    lines_missed: Annotated[
        bool,
        Field(
            description="True when prior history was no longer available, so ``lines`` is a conservative current visible capture rather than a complete delta"
        ),
    ] = False
    truncated: Annotated[
        bool, Field(description="True when ``lines`` was truncated by max_lines or max_bytes")
    ] = False
    truncated_lines: Annotated[
        int, Field(description="Number of lines dropped from the head when truncating")
    ] = 0
    truncated_bytes: Annotated[
        int, Field(description="Approximate UTF-8 bytes dropped from the head when truncating")
    ] = 0
