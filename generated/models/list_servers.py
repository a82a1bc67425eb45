"""Models of the list_servers tool, generated from schemas/tools/list_servers.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ListServersInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    extra_socket_paths: Annotated[
        list[str] | None,
        Field(
            description="Additional filesystem paths to probe alongside the\n``$TMUX_TMPDIR`` scan. Each path is checked for liveness (UNIX\n``connect()``) and queried for server metadata. Paths that do\nnot exist, are not sockets, or have no listener are silently\nskipped."
        ),
    ] = None


class ResultItem(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    is_alive: Annotated[bool, Field(description="Whether the server is running")]
    socket_name: Annotated[str | None, Field(description="Socket name")] = None
    socket_path: Annotated[str | None, Field(description="Socket path")] = None
    session_count: Annotated[int, Field(description="Number of sessions")]
    version: Annotated[str | None, Field(description="tmux version")] = None


class ListServersOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: list[ResultItem]
