"""Models of the rename_session tool, generated from schemas/tools/rename_session.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class RenameSessionInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    new_name: Annotated[str, Field(description="New name for the session.")]
    session_name: Annotated[str | None, Field(description="Current session name to look up.")] = (
        None
    )
    session_id: Annotated[str | None, Field(description="Session ID (e.g. '$1') to look up.")] = (
        None
    )
    socket_name: Annotated[
        str | None, Field(description="tmux socket name. Defaults to LIBTMUX_SOCKET env var.")
    ] = None


class RenameSessionOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    session_id: Annotated[str, Field(description="Session ID (e.g. '$1')")]
    session_name: Annotated[str | None, Field(description="Session name")] = None
    window_count: Annotated[int, Field(description="Number of windows")]
    session_attached: Annotated[str | None, Field(description="Attached client count")] = None
    session_created: Annotated[str | None, Field(description="Creation timestamp")] = None
    active_pane_id: Annotated[
        str | None,
        Field(
            description="Pane id (``%N``) of the session's active pane. Guaranteed non-None on ``create_session`` return (libtmux creates the session with one initial pane). May be None from ``list_sessions`` rows for sessions in transient teardown states where ``active_pane`` is unavailable."
        ),
    ] = None
