"""Models of the pipe_pane tool, generated from schemas/tools/pipe_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class PipePaneInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str | None, Field(description="Pane ID (e.g. '%1').")] = None
    output_path: Annotated[
        str | None, Field(description="File path to write output to. None stops piping.")
    ] = None
    append: Annotated[
        bool,
        Field(description="Whether to append to the file. Default True. If False, overwrites."),
    ] = True
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    session_id: Annotated[str | None, Field(description="Session ID for pane resolution.")] = None
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class PipePaneOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
