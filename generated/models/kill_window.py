"""Models of the kill_window tool, generated from schemas/tools/kill_window.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class KillWindowInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    window_id: Annotated[
        str, Field(description="Window ID (e.g. '@1'). Required — no fallback resolution.")
    ]
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class KillWindowOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
