"""Models of the clear_pane tool, generated from schemas/tools/clear_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ClearPaneInput(BaseModel):
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
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class ClearPaneOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
