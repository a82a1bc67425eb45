"""Models of the search_panes tool, generated from schemas/tools/search_panes.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class SearchPanesInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pattern: Annotated[
        str,
        Field(
            description="Text to search for in pane contents. Treated as literal text by\ndefault. Set ``regex=True`` to interpret as a regular expression."
        ),
    ]
    regex: Annotated[
        bool,
        Field(
            description="Whether to interpret pattern as a regular expression. Default False\n(literal text matching)."
        ),
    ] = False
    session_name: Annotated[
        str | None, Field(description="Limit search to panes in this session.")
    ] = None
    session_id: Annotated[
        str | None, Field(description="Limit search to panes in this session (by ID).")
    ] = None
    match_case: Annotated[
        bool, Field(description="Whether to match case. Default False (case-insensitive).")
    ] = False
    content_start: Annotated[
        int | None,
        Field(description="Start line for capture. Negative values reach into scrollback."),
    ] = None
    content_end: Annotated[int | None, Field(description="End line for capture.")] = None
    max_matched_lines_per_pane: Annotated[
        int,
        Field(
            description="Per-pane cap on ``matched_lines``. Defaults to\n``SEARCH_DEFAULT_MAX_LINES_PER_PANE``."
        ),
    ] = 50
    limit: Annotated[
        int | None,
        Field(
            description="Maximum matching panes returned on this call. Defaults to\n``SEARCH_DEFAULT_LIMIT``. Pass ``None`` to disable the cap."
        ),
    ] = 500
    offset: Annotated[
        int,
        Field(
            description="Skip this many matching panes from the start. Use with\n``limit`` for pagination."
        ),
    ] = 0
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class SearchPanesOutputPaneContentMatch(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str, Field(description="Pane ID (e.g. '%1')")]
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
    pane_current_command: Annotated[str | None, Field(description="Running command")] = None
    pane_current_path: Annotated[str | None, Field(description="Current working directory")] = None
    window_id: Annotated[str | None, Field(description="Parent window ID")] = None
    window_name: Annotated[str | None, Field(description="Parent window name")] = None
    session_id: Annotated[str | None, Field(description="Parent session ID")] = None
    session_name: Annotated[str | None, Field(description="Parent session name")] = None
    matched_lines: Annotated[
        list[str],
        Field(
            description="The lines that matched, oldest first (the last ``max_matched_lines_per_pane`` of them)"
        ),
    ]
    is_caller: Annotated[
        bool | None,
        Field(
            description="Whether this is the pane this MCP server runs in. ``true`` when the pane matches the server's ``TMUX_PANE`` *and* lives on the tmux socket its ``TMUX`` names (compared by realpath); ``false`` otherwise, including when the pane id matches but the socket does not or cannot be proven to; ``null`` when the server does not run inside tmux at all."
        ),
    ] = None


class SearchPanesOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    matches: Annotated[
        list[SearchPanesOutputPaneContentMatch] | None,
        Field(description="The matching panes of this page, in pane id order."),
    ] = None
    truncated: Annotated[
        bool,
        Field(
            description="True when the result set was truncated by ``limit`` or by ``max_matched_lines_per_pane`` on any pane."
        ),
    ] = False
    truncated_panes: Annotated[
        list[str] | None,
        Field(
            description="Pane IDs that matched but were skipped because the global ``limit`` was already satisfied. Re-request with a larger ``offset`` to retrieve them."
        ),
    ] = None
    total_panes_matched: Annotated[
        int,
        Field(
            description="Total number of panes that matched the pattern before ``offset`` / ``limit`` were applied."
        ),
    ]
    offset: Annotated[int, Field(description="The ``offset`` that produced this page.")]
    limit: Annotated[int | None, Field(description="The ``limit`` that produced this page.")]
