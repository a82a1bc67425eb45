"""Models of the resize_pane tool, generated from schemas/tools/resize_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ResizePaneInput(BaseModel):
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
    height: Annotated[int | None, Field(description="New height in lines.")] = None
    width: Annotated[int | None, Field(description="New width in columns.")] = None
    zoom: Annotated[
        bool | None,
        Field(description="Toggle pane zoom. If True, zoom the pane. If False, unzoom."),
    ] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class ResizePaneOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    pane_id: Annotated[str, Field(description="Pane ID (e.g. '%1')")]
    pane_index: Annotated[str | None, Field(description="Pane index")] = None
    pane_width: Annotated[str | None, Field(description="Width in columns")] = None
    pane_height: Annotated[str | None, Field(description="Height in rows")] = None
    pane_left: Annotated[
        int | None, Field(description="Left edge column, 0-based and window-relative.")
    ] = None
    pane_top: Annotated[
        int | None, Field(description="Top edge row, 0-based and window-relative.")
    ] = None
    pane_right: Annotated[
        int | None, Field(description="Right edge column (inclusive), window-relative.")
    ] = None
    pane_bottom: Annotated[
        int | None, Field(description="Bottom edge row (inclusive), window-relative.")
    ] = None
    pane_at_left: Annotated[
        bool | None, Field(description="True when the pane touches the window's left edge.")
    ] = None
    pane_at_right: Annotated[
        bool | None, Field(description="True when the pane touches the window's right edge.")
    ] = None
    pane_at_top: Annotated[
        bool | None,
        Field(
            description="True when the pane touches the window's top edge. tmux accounts for ``pane-border-status`` here, so the top row may be 1 instead of 0 when the status bar is at the top."
        ),
    ] = None
    pane_at_bottom: Annotated[
        bool | None, Field(description="True when the pane touches the window's bottom edge.")
    ] = None
    pane_tty: Annotated[
        str | None, Field(description="TTY device path of the pane (e.g. '/dev/pts/5').")
    ] = None
    pane_current_command: Annotated[str | None, Field(description="Running command")] = None
    pane_current_path: Annotated[str | None, Field(description="Current working directory")] = None
    pane_pid: Annotated[str | None, Field(description="Process ID")] = None
    pane_title: Annotated[str | None, Field(description="Pane title")] = None
    pane_active: Annotated[str | None, Field(description="Active flag ('1' or '0')")] = None
    window_id: Annotated[str | None, Field(description="Parent window ID")] = None
    session_id: Annotated[str | None, Field(description="Parent session ID")] = None
    is_caller: Annotated[
        bool | None,
        Field(
            description="MCP caller identity for this pane. ``True`` when the pane matches the caller's ``TMUX_PANE`` *and* lives on the same tmux socket as the caller's ``TMUX`` (verified via socket realpath); ``False`` otherwise, including the case where the pane id matches but the socket does not or cannot be proven to; ``None`` when the MCP process is not running inside tmux at all."
        ),
    ] = None
