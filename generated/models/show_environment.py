"""Models of the show_environment tool, generated from schemas/tools/show_environment.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ShowEnvironmentInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    session_name: Annotated[
        str | None, Field(description="Session name to query environment for.")
    ] = None
    session_id: Annotated[str | None, Field(description="Session ID to query environment for.")] = (
        None
    )
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class ShowEnvironmentOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    variables: Annotated[dict[str, str | bool], Field(description="Environment variable mapping")]
