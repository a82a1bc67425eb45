"""Models of the get_server_info tool, generated from schemas/tools/get_server_info.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class GetServerInfoInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    socket_name: Annotated[
        str | None, Field(description="tmux socket name. Defaults to LIBTMUX_SOCKET env var.")
    ] = None


class GetServerInfoOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    is_alive: Annotated[bool, Field(description="Whether the server is running")]
    socket_name: Annotated[str | None, Field(description="Socket name")] = None
    socket_path: Annotated[str | None, Field(description="Socket path")] = None
    session_count: Annotated[int, Field(description="Number of sessions")]
    version: Annotated[str | None, Field(description="tmux version")] = None
