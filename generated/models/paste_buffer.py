"""Models of the paste_buffer tool, generated from schemas/tools/paste_buffer.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class PasteBufferInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    buffer_name: Annotated[
        str,
        Field(
            description="Must match the full MCP-namespaced form returned by\n:func:`~libtmux_mcp.tools.buffer_tools.load_buffer`.\nNon-MCP buffers are rejected so the tool cannot be turned into\nan arbitrary-buffer reader."
        ),
    ]
    pane_id: Annotated[str | None, Field(description="Target pane ID.")] = None
    bracket: Annotated[bool, Field(description="Use tmux bracketed paste mode. Default True.")] = (
        True
    )
    session_name: Annotated[str | None, Field(description="Pane resolution fallbacks.")] = None
    session_id: Annotated[str | None, Field(description="Pane resolution fallbacks.")] = None
    window_id: Annotated[str | None, Field(description="Pane resolution fallbacks.")] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None
    force: Annotated[
        bool,
        Field(
            description="Type though a person watches the pane (skips only the policy's ask for that)."
        ),
    ] = False


class PasteBufferOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
