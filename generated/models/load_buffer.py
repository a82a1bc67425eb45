"""Models of the load_buffer tool, generated from schemas/tools/load_buffer.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class LoadBufferInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    content: Annotated[
        str, Field(description="The text to stage. Can be multi-line. Redacted in audit logs.")
    ]
    logical_name: Annotated[
        str | None,
        Field(
            description='Short label for the buffer. Limited to\n``[A-Za-z0-9_.-]{1,64}`` so the final name stays safe on the\ntmux command line. Empty or ``None`` uses ``"buf"``.'
        ),
    ] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class LoadBufferOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    buffer_name: Annotated[
        str,
        Field(
            description="The actual tmux buffer name (with prefix and UUID nonce). Pass this back to paste_buffer/show_buffer/delete_buffer."
        ),
    ]
    logical_name: Annotated[
        str | None, Field(description="Optional logical name supplied by the caller, if any.")
    ] = None
