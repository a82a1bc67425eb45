"""Models of the kill_session tool, generated from schemas/tools/kill_session.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class KillSessionInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    session_name: Annotated[str | None, Field(description="Session name to look up.")] = None
    session_id: Annotated[str | None, Field(description="Session ID (e.g. '$1') to look up.")] = (
        None
    )
    socket_name: Annotated[
        str | None, Field(description="tmux socket name. Defaults to LIBTMUX_SOCKET env var.")
    ] = None


class KillSessionOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
