"""Models of the respawn_pane tool, generated from schemas/tools/respawn_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class RespawnPaneInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str, Field(description="Pane ID (e.g. '%1'). Required.")]
    kill: Annotated[
        bool,
        Field(
            description="When True (default), pass ``-k`` to tmux so the current\nprocess is killed before respawning. When False, respawn\nfails if the pane already has a running process."
        ),
    ] = True
    shell: Annotated[
        str | None,
        Field(
            description="Replacement command for tmux to launch. When omitted, tmux\nreplays the original argv (good default for shells; may differ\nfor processes spawned via custom shell at split time). Matches\nthe ``shell`` parameter on :func:`split_window` and the\neventual upstream ``Pane.respawn(shell=)`` API."
        ),
    ] = None
    start_directory: Annotated[
        str | None,
        Field(
            description="Existing directory to start in. ``~`` expands; a relative path\nresolves against the MCP server process's directory."
        ),
    ] = None
    environment: Annotated[
        dict[str, str] | str | None,
        Field(
            description="Environment variables to set for the relaunched process. Each\nitem becomes one ``-e KEY=VALUE`` flag (tmux's\n``cmd-respawn-pane.c`` supports the flag repeatedly). Values\nsupplied in a mapping are redacted in the audit log on a\nper-key basis — keys like ``DATABASE_URL`` remain visible but\ntheir values are replaced by ``{len, sha256_prefix}`` digests.\nA JSON object string is redacted as one scalar digest, so its\nkeys are not retained in the audit record. Values may still\nappear briefly in the OS process table while tmux spawns the\nnew process; do not pass long-lived secrets here when a\nhost-resident agent or other tenant could observe ``ps``."
        ),
    ] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None
    suppress_persistent_history: Annotated[
        bool,
        Field(
            description="Whether to suppress persistent history for the spawned shell. Defaults\nto False for MCP and direct Python calls. This per-call option does not\ninherit LIBTMUX_SUPPRESS_HISTORY. Startup files may override these\ncontrols."
        ),
    ] = False


class RespawnPaneOutput(BaseModel):
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
