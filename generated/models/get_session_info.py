"""Models of the get_session_info tool, generated from schemas/tools/get_session_info.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class GetSessionInfoInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    session_id: Annotated[str | None, Field(description="Session ID (e.g. '$0').")] = None
    session_name: Annotated[str | None, Field(description="Session name.")] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class GetSessionInfoOutput(BaseModel):
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
