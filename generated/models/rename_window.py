"""Models of the rename_window tool, generated from schemas/tools/rename_window.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class RenameWindowInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    new_name: Annotated[str, Field(description="The new name for the window.")]
    window_id: Annotated[str | None, Field(description="Window ID (e.g. '@1').")] = None
    window_index: Annotated[str | None, Field(description="Window index within the session.")] = (
        None
    )
    session_name: Annotated[str | None, Field(description="Session name.")] = None
    session_id: Annotated[str | None, Field(description="Session ID.")] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class RenameWindowOutput(BaseModel):
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
