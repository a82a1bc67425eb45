"""Models of the delete_buffer tool, generated from schemas/tools/delete_buffer.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class DeleteBufferInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    buffer_name: Annotated[str, Field(description="Must match the full MCP-namespaced form.")]
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class DeleteBufferOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
