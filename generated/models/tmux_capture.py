"""Models of the tmux_capture tool, generated from schemas/tools/tmux_capture.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel


class Target(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    generation: Annotated[str, Field(max_length=128, min_length=1)]
    id: Annotated[str, Field(max_length=32)]
    kind: Literal["pane"]


class TmuxCaptureInputWithoutCursor(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    history_lines: Annotated[int, Field(ge=0, le=1000)] = 0
    max_bytes: Annotated[int, Field(ge=1, le=262144)] = 65536
    max_lines: Annotated[int, Field(ge=1, le=1000)] = 200
    target: Target
    track: bool = False


class TmuxCaptureInputWithCursor(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    cursor: Annotated[str, Field(max_length=32)]
    target: Target


class TmuxCaptureInput(RootModel[TmuxCaptureInputWithoutCursor | TmuxCaptureInputWithCursor]):
    root: Annotated[
        TmuxCaptureInputWithoutCursor | TmuxCaptureInputWithCursor, Field(title="TmuxCaptureInput")
    ]


class Interval(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    clock: Literal["monotonic_seconds"]
    finished: float
    started: float


class Scope(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    history_lines: Annotated[int, Field(ge=0, le=1000)]
    max_bytes: Annotated[int, Field(ge=1, le=262144)]
    max_lines: Annotated[int, Field(ge=1, le=1000)]


class DataSnapshot(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    bytes: Annotated[int, Field(ge=0, le=262144)]
    capture_id: str
    encoding: Literal["utf-8", "base64"]
    history_continuity: Literal["unknown"]
    interval: Interval
    mode: Literal["snapshot"]
    next_cursor: str | None = None
    process_generation: str | None
    row_count: Annotated[int, Field(ge=0, le=1000)]
    rows: Annotated[list[str], Field(max_length=1000)]
    scope: Scope
    target: Target
    truncated: bool


class Splice(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    delete: Annotated[int, Field(ge=0)]
    rows: Annotated[list[str], Field(max_length=1000)]
    start: Annotated[int, Field(ge=0)]


class DataDelta(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    base_capture_id: str
    bytes: Annotated[int, Field(ge=0, le=262144)]
    capture_id: str
    encoding: Literal["utf-8", "base64"]
    history_continuity: Literal["unknown"]
    interval: Interval
    mode: Literal["delta"]
    next_cursor: str
    process_generation: str | None
    reset: bool
    row_count: Annotated[int, Field(ge=0, le=1000)]
    scope: Scope
    splice: Splice
    target: Target
    truncated: bool


class TmuxCaptureOutputOk(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    data: Annotated[DataSnapshot | DataDelta, Field(discriminator="mode")]
    ok: Literal[True]


class CreatedSession(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    generation: Annotated[str, Field(max_length=128, min_length=1)]
    id: Annotated[str, Field(max_length=32)]
    kind: Literal["session"]


class CreatedWindow(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    generation: Annotated[str, Field(max_length=128, min_length=1)]
    id: Annotated[str, Field(max_length=32)]
    kind: Literal["window"]


class CreatedPane(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    generation: Annotated[str, Field(max_length=128, min_length=1)]
    id: Annotated[str, Field(max_length=32)]
    kind: Literal["pane"]


class CreatedWindowLink(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    generation: Annotated[str, Field(max_length=128, min_length=1)]
    id: Annotated[str, Field(max_length=32)]
    index: Annotated[int, Field(ge=0)]
    kind: Literal["window_link"]
    session_id: Annotated[str, Field(max_length=32)]


class Effects(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    created: Annotated[
        list[
            Annotated[
                CreatedSession | CreatedWindow | CreatedPane | CreatedWindowLink,
                Field(discriminator="kind"),
            ]
        ],
        Field(max_length=3),
    ]
    state: Literal["none", "known", "unknown"]


class Error(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    code: str
    delivery: Literal["not_sent", "possibly_sent", "observed"]
    effects: Effects | None = None
    message: str


class TmuxCaptureOutputNotOk(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    error: Error
    ok: Literal[False]


class TmuxCaptureOutput(RootModel[TmuxCaptureOutputOk | TmuxCaptureOutputNotOk]):
    root: Annotated[
        TmuxCaptureOutputOk | TmuxCaptureOutputNotOk,
        Field(discriminator="ok", title="TmuxCaptureOutput"),
    ]
