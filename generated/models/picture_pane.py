"""Models of the picture_pane tool, generated from schemas/tools/picture_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class PicturePaneInput(BaseModel):
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
    format: Annotated[Literal["png", "svg"], Field(description="png (the default) or svg.")] = "png"


class PicturePaneOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    pane_id: Annotated[str, Field(description="The pane drawn.")]
    format: Annotated[Literal["png", "svg"], Field(description="The picture's format: png or svg.")]
    mime_type: Annotated[
        Literal["image/png", "image/svg+xml"],
        Field(description="The image content's type: image/png or image/svg+xml."),
    ]
    pane_width: Annotated[int, Field(description="The pane's width in cells.", ge=1)]
    pane_height: Annotated[int, Field(description="The pane's height in cells.", ge=1)]
    pixel_width: Annotated[int, Field(description="The picture's width in pixels.", ge=1)]
    pixel_height: Annotated[int, Field(description="The picture's height in pixels.", ge=1)]
    cursor_x: Annotated[int, Field(description="The cursor's column (0-based).", ge=0)]
    cursor_y: Annotated[int, Field(description="The cursor's row (0-based).", ge=0)]
    cursor_visible: Annotated[
        bool,
        Field(
            description="Whether the cursor shows (and is drawn): false when the program hid it or a mode shows."
        ),
    ]
    title: Annotated[str, Field(description="The pane's title.")]
    pane_mode: Annotated[
        str | None,
        Field(
            description="The mode that shows over the pane (e.g. 'copy-mode'), or null; the picture shows the screen under it."
        ),
    ]
    alternate_on: Annotated[
        bool,
        Field(description="Whether the pane shows its alternate screen (a full-screen program's)."),
    ]
