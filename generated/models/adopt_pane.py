"""Models of the adopt_pane tool, generated from schemas/tools/adopt_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class AdoptPaneInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str | None, Field(description="Pane ID (e.g. '%1').")] = None
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    session_id: Annotated[
        str | None, Field(description="Session ID (e.g. '$1') for pane resolution.")
    ] = None
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None
    timeout: Annotated[
        float,
        Field(
            description="Maximum seconds to wait for the shell's prompt and for its hooks to report."
        ),
    ] = 10
    force: Annotated[
        bool,
        Field(
            description="Type though a person watches the pane (skips only the policy's ask for that)."
        ),
    ] = False


class AdoptPaneOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str, Field(description="The pane adopted.")]
    shell: Annotated[
        Literal["bash", "zsh", "fish"], Field(description="Its shell: bash, zsh or fish.")
    ]
    adopted: Annotated[
        bool,
        Field(
            description="True when this call typed the line; false when the shell had the hooks already (nothing was typed)."
        ),
    ]
    line: Annotated[
        str | None,
        Field(
            description="The line typed into the pane (after a space), as the person sees it; null when nothing was typed."
        ),
    ]
