"""Models of the kill_server tool, generated from schemas/tools/kill_server.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class KillServerInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    socket_name: Annotated[
        str | None, Field(description="tmux socket name. Defaults to LIBTMUX_SOCKET env var.")
    ] = None


class KillServerOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
