"""Models of the show_buffer tool, generated from schemas/tools/show_buffer.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ShowBufferInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    buffer_name: Annotated[str, Field(description="Must match the full MCP-namespaced form.")]
    max_lines: Annotated[
        int | None,
        Field(
            description="Maximum number of lines to return. Defaults to\n:data:`SHOW_BUFFER_DEFAULT_MAX_LINES`. Pass ``None`` for no\ntruncation."
        ),
    ] = 500
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class ShowBufferOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    buffer_name: Annotated[str, Field(description="The buffer's name.")]
    content: Annotated[
        str,
        Field(
            description="The buffer's content as text (bytes that are not UTF-8 read as U+FFFD)."
        ),
    ]
    content_truncated: Annotated[
        bool,
        Field(description="True when lines before content were left out to keep within max_lines."),
    ] = False
    content_truncated_lines: Annotated[
        int, Field(description="How many lines before content were left out.")
    ] = 0
