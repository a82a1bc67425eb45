"""Models of the snapshot_pane tool, generated from schemas/tools/snapshot_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class SnapshotPaneInput(BaseModel):
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
    max_lines: Annotated[
        int | None,
        Field(
            description="Maximum number of content lines to return. Defaults to\n``CAPTURE_DEFAULT_MAX_LINES``.\nPass ``None`` to return the full capture untrimmed."
        ),
    ] = 500
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class SnapshotPaneOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str, Field(description="Pane ID (e.g. '%1')")]
    content: Annotated[str, Field(description="Visible pane text")]
    cursor_x: Annotated[int, Field(description="Cursor column (0-based)")]
    cursor_y: Annotated[int, Field(description="Cursor row (0-based)")]
    pane_width: Annotated[int, Field(description="Pane width in columns")]
    pane_height: Annotated[int, Field(description="Pane height in rows")]
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
            description="True when the pane touches the window's top edge. tmux accounts for ``pane-border-status`` here."
        ),
    ] = None
    pane_at_bottom: Annotated[
        bool | None, Field(description="True when the pane touches the window's bottom edge.")
    ] = None
    pane_tty: Annotated[
        str | None, Field(description="TTY device path of the pane (e.g. '/dev/pts/5').")
    ] = None
    pane_pid: Annotated[str | None, Field(description="Process ID")] = None
    pane_dead: Annotated[
        bool | None, Field(description="True when tmux reports the pane process has exited.")
    ] = None
    alternate_on: Annotated[
        bool | None, Field(description="True when the pane is using the alternate screen.")
    ] = None
    pane_in_mode: Annotated[bool, Field(description="True if pane is in copy-mode or view-mode")]
    pane_mode: Annotated[
        str | None, Field(description="Mode name (e.g. 'copy-mode') or None if normal")
    ] = None
    scroll_position: Annotated[
        int | None, Field(description="Lines scrolled back in copy mode (None if not in copy mode)")
    ] = None
    history_size: Annotated[int, Field(description="Total scrollback lines available")]
    title: Annotated[str | None, Field(description="Pane title")] = None
    pane_current_command: Annotated[str | None, Field(description="Running command")] = None
    pane_current_path: Annotated[str | None, Field(description="Current working directory")] = None
    is_caller: Annotated[
        bool | None,
        Field(
            description="MCP caller identity for this pane. ``True`` when the pane matches the caller's ``TMUX_PANE`` *and* lives on the same tmux socket as the caller's ``TMUX`` (verified via socket realpath); ``False`` otherwise, including the case where the pane id matches but the socket does not or cannot be proven to; ``None`` when the MCP process is not running inside tmux at all."
        ),
    ] = None
    content_truncated: Annotated[
        bool,
        Field(
            description="True if ``content`` was tail-preserved to stay within ``max_lines``; oldest lines were dropped."
        ),
    ] = False
    content_truncated_lines: Annotated[
        int, Field(description="Number of lines dropped from the head when truncating.")
    ] = 0
