"""Models of the tmux_snapshot tool, generated from schemas/tools/tmux_snapshot.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel


class TmuxSnapshotInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    socket_name: Annotated[
        str | None,
        Field(
            description="List the tmux server on this socket name (tmux -L) instead of the configured one.",
            max_length=256,
            min_length=1,
        ),
    ] = None


class Server(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    socket_path: str
    pid: Annotated[int, Field(ge=1)]
    version: str


class TargetSession(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    generation: Annotated[str, Field(max_length=128, min_length=1)]
    id: Annotated[str, Field(max_length=32)]
    kind: Literal["session"]


class TargetWindow(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    generation: Annotated[str, Field(max_length=128, min_length=1)]
    id: Annotated[str, Field(max_length=32)]
    kind: Literal["window"]


class TargetPane(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    generation: Annotated[str, Field(max_length=128, min_length=1)]
    id: Annotated[str, Field(max_length=32)]
    kind: Literal["pane"]


class Pane(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    target: Annotated[
        TargetPane, Field(description="The reference tmux_capture takes.", title="TargetPane")
    ]
    index: Annotated[int, Field(ge=0)]
    active: Annotated[bool, Field(description="The active pane of its window.")]
    width: Annotated[int, Field(ge=1)]
    height: Annotated[int, Field(ge=1)]
    current_command: Annotated[
        str,
        Field(
            description="The command running in the pane's foreground, as tmux sees it (pane_current_command)."
        ),
    ]
    dead: Annotated[
        bool, Field(description="Its program ended and the pane was kept (remain-on-exit).")
    ]
    dead_status: Annotated[
        int | None,
        Field(
            description="The exit status of a dead pane's program; null while it runs, or when tmux has not told it (yet) or the program was ended by a signal."
        ),
    ]
    in_mode: Annotated[
        bool,
        Field(description="The pane shows a mode, such as copy mode, over its program's screen."),
    ]
    program_id: Annotated[
        str | None,
        Field(
            description="The programId of the schemux program running in the pane (start_program, run_program), null when it runs none."
        ),
    ]


class Window(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    target: Annotated[TargetWindow, Field(title="TargetWindow")]
    index: Annotated[int, Field(ge=0)]
    name: str
    active: Annotated[bool, Field(description="The current window of its session.")]
    panes: list[Pane]


class Session(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    target: Annotated[TargetSession, Field(title="TargetSession")]
    name: str
    attached: Annotated[int, Field(description="How many clients are attached to it.", ge=0)]
    windows: list[Window]


class Data(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    server: Server
    sessions: list[Session]


class TmuxSnapshotOutputOk(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    data: Data
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


class TmuxSnapshotOutputNotOk(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    error: Error
    ok: Literal[False]


class TmuxSnapshotOutput(RootModel[TmuxSnapshotOutputOk | TmuxSnapshotOutputNotOk]):
    root: Annotated[
        TmuxSnapshotOutputOk | TmuxSnapshotOutputNotOk,
        Field(discriminator="ok", title="TmuxSnapshotOutput"),
    ]
