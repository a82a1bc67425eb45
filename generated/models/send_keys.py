"""Models of the send_keys tool, generated from schemas/tools/send_keys.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class SendKeysInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    keys: Annotated[str, Field(description="The keys or text to send.")]
    pane_id: Annotated[str | None, Field(description="Pane ID (e.g. '%1').")] = None
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    session_id: Annotated[
        str | None, Field(description="Session ID (e.g. '$1') for pane resolution.")
    ] = None
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    enter: Annotated[
        bool, Field(description="Whether to press Enter after sending keys. Default True.")
    ] = True
    literal: Annotated[
        bool,
        Field(
            description="Whether to send keys literally (no tmux interpretation). Default False."
        ),
    ] = False
    suppress_history: Annotated[
        bool,
        Field(
            description="Suppress shell history by prepending a space; only effective where\nthe shell ignores space-prefixed commands. Default False."
        ),
    ] = False
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None
    force: Annotated[
        bool,
        Field(
            description="Type though a person watches the pane (skips only the policy's ask for that)."
        ),
    ] = False


class SendKeysOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
