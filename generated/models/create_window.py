"""Models of the create_window tool, generated from schemas/tools/create_window.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class CreateWindowInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    session_name: Annotated[str | None, Field(description="Session name to look up.")] = None
    session_id: Annotated[str | None, Field(description="Session ID (e.g. '$1') to look up.")] = (
        None
    )
    window_name: Annotated[str | None, Field(description="Name for the new window.")] = None
    start_directory: Annotated[
        str | None,
        Field(
            description="Existing directory to start in. ``~`` expands; a relative path\nresolves against the MCP server process's directory."
        ),
    ] = None
    attach: Annotated[bool, Field(description="Whether to make the new window active.")] = False
    direction: Annotated[
        Literal["before", "after"] | None, Field(description="Window placement direction.")
    ] = None
    socket_name: Annotated[
        str | None, Field(description="tmux socket name. Defaults to LIBTMUX_SOCKET env var.")
    ] = None
    environment: Annotated[
        dict[str, str] | str | None,
        Field(
            description="Per-process environment as a mapping or JSON object string. Values do\nnot modify the tmux session environment. Each item becomes a tmux\n``-e`` launch option. Values may be visible to host process inspection\nin the tmux client argv during launch and in the child environment\nafterward; MCP audit redaction does not hide either surface. Pass\ncredential references, not literal credentials."
        ),
    ] = None
    suppress_persistent_history: Annotated[
        bool,
        Field(
            description="Whether to suppress persistent history for the spawned shell. Defaults\nto False for MCP and direct Python calls. This per-call option does not\ninherit LIBTMUX_SUPPRESS_HISTORY. Startup files may override these\ncontrols."
        ),
    ] = False


class CreateWindowOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    window_id: Annotated[str, Field(description="Window ID (e.g. '@1')")]
    window_name: Annotated[str | None, Field(description="Window name")] = None
    window_index: Annotated[str | None, Field(description="Window index")] = None
    session_id: Annotated[str | None, Field(description="Parent session ID")] = None
    session_name: Annotated[str | None, Field(description="Parent session name")] = None
    pane_count: Annotated[int, Field(description="Number of panes")]
    window_layout: Annotated[str | None, Field(description="Layout string")] = None
    window_active: Annotated[str | None, Field(description="Active flag ('1' or '0')")] = None
    window_width: Annotated[str | None, Field(description="Width in columns")] = None
    window_height: Annotated[str | None, Field(description="Height in rows")] = None
    active_pane_id: Annotated[
        str | None, Field(description="Pane id (``%N``) of the window's active pane.")
    ] = None
