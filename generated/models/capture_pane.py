"""Models of the capture_pane tool, generated from schemas/tools/capture_pane.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class CapturePaneInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    history_lines: Annotated[
        int | None,
        Field(
            alias="historyLines",
            description="Rows of history above the screen to include, at most; 0, the default, for the screen alone.",
            ge=0,
            le=100000,
        ),
    ] = None
    pane_id: Annotated[
        str, Field(alias="paneId", description="The pane, such as a started program's paneId.")
    ]


class CapturePaneOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    alternate_screen: Annotated[
        bool,
        Field(
            alias="alternateScreen",
            description="True when a full-screen program shows its alternate screen (no history there).",
        ),
    ]
    cursor_x: Annotated[
        int,
        Field(
            alias="cursorX", description="The cursor's column, from 0.", ge=0, le=9007199254740991
        ),
    ]
    cursor_y: Annotated[
        int,
        Field(
            alias="cursorY",
            description="The cursor's row on the screen, from 0.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    dead: Annotated[
        bool,
        Field(
            description="True when the pane's program has ended and the pane stays to show its output."
        ),
    ]
    height: Annotated[int, Field(description="Rows of the screen.", ge=0, le=9007199254740991)]
    history_rows: Annotated[
        int,
        Field(
            alias="historyRows",
            description="How many of the returned rows are history, above the screen.",
            ge=0,
            le=9007199254740991,
        ),
    ]
    pane_id: Annotated[str, Field(alias="paneId", description="The pane captured.")]
    rows: Annotated[
        list[str],
        Field(
            description="History rows (as many as historyRows) and then the screen's rows, top to bottom, without trailing spaces."
        ),
    ]
    width: Annotated[int, Field(description="Columns of the screen.", ge=0, le=9007199254740991)]
