"""Models of the paste_text tool, generated from schemas/tools/paste_text.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class PasteTextInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    text: Annotated[str, Field(description="The text to paste.")]
    pane_id: Annotated[str | None, Field(description="Pane ID (e.g. '%1').")] = None
    bracket: Annotated[
        bool,
        Field(
            description='Whether to use bracketed paste mode. Default True.\nBracketed paste wraps the text in escape sequences that tell\nthe terminal "this is pasted text, not typed input".'
        ),
    ] = True
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    session_id: Annotated[str | None, Field(description="Session ID for pane resolution.")] = None
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None
    force: Annotated[
        bool,
        Field(
            description="Type though a person watches the pane (skips only the policy's ask for that)."
        ),
    ] = False


class PasteTextOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
