"""Models of the set_environment tool, generated from schemas/tools/set_environment.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class SetEnvironmentInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    name: Annotated[str, Field(description="Environment variable name.")]
    value: Annotated[str, Field(description="Environment variable value.")]
    session_name: Annotated[
        str | None, Field(description="Session name to set environment for.")
    ] = None
    session_id: Annotated[str | None, Field(description="Session ID to set environment for.")] = (
        None
    )
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class SetEnvironmentOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    name: Annotated[str, Field(description="Variable name")]
    value: Annotated[str, Field(description="Value that was set")]
    status: Annotated[str, Field(description="Operation status")]
