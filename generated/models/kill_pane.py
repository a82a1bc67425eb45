"""Models of the kill_pane tool, generated from schemas/tools/kill_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class KillPaneInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[
        str, Field(description="Pane ID (e.g. '%1'). Required — no fallback resolution.")
    ]
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class KillPaneOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
