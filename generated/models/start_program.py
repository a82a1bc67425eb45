"""Models of the start_program tool, generated from schemas/tools/start_program.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel


class InheritShell(RootModel[list[str]]):
    root: Annotated[
        list[str],
        Field(
            description='With fromPaneId, first read the variables that pane\'s idle shell exported, by typing one env command into it, and run the program with them: true for all, or a list of names, such as ["PATH", "VIRTUAL_ENV"], for only those. The shell must be a POSIX one at its prompt, as run_shell_command requires. argv[0] is then found on the shell\'s PATH, and one missing exits 127.',
            max_length=256,
            min_length=1,
        ),
    ]


class StartProgramInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    argv: Annotated[
        list[str],
        Field(
            description='The program and its arguments, as given: ["git", "status", "--short"]. Put variables first with env: ["env", "CI=1", "make", "test"].',
            max_length=256,
            min_length=1,
        ),
    ]
    from_pane_id: Annotated[
        str | None,
        Field(
            alias="fromPaneId",
            description="Run beside this pane, in its directory and session, with that session's tmux environment. Variables the pane's shell exported come only with inheritShell.",
        ),
    ] = None
    height: Annotated[
        int | None,
        Field(
            description="Rows of the program's terminal. Defaults to tmux's default-size.",
            gt=0,
            le=10000,
        ),
    ] = None
    inherit_shell: Annotated[
        bool | InheritShell | None,
        Field(
            alias="inheritShell",
            description='With fromPaneId, first read the variables that pane\'s idle shell exported, by typing one env command into it, and run the program with them: true for all, or a list of names, such as ["PATH", "VIRTUAL_ENV"], for only those. The shell must be a POSIX one at its prompt, as run_shell_command requires. argv[0] is then found on the shell\'s PATH, and one missing exits 127.',
        ),
    ] = None
    input: Annotated[
        str | None,
        Field(
            description="Text the program reads as its stdin, from a private file, so no shell quotes it and the pane never shows it. Needs the tmux server on this machine."
        ),
    ] = None
    lifetime_ms: Annotated[
        int | None,
        Field(
            alias="lifetimeMs",
            description="How long it may run before it is ended (outcome expired); 10 minutes by default and clamped by the server's lifetime ceiling. The result says what was used.",
            gt=0,
            le=9007199254740991,
        ),
    ] = None
    placement: Annotated[
        Literal["window", "split"] | None,
        Field(
            description='With fromPaneId: "window", the default, is a background window of its session; "split" splits that pane, so a person watching it sees the run. Focus stays put.'
        ),
    ] = None
    start_directory: Annotated[
        str | None,
        Field(
            alias="startDirectory",
            description="Directory the program starts in, taken literally. Defaults to the directory this MCP server was started in, or the fromPaneId pane's. One that cannot be entered fails the call, with the reason, before the program starts.",
        ),
    ] = None
    width: Annotated[
        int | None,
        Field(
            description="Columns of the program's terminal. A program that formats to its width — ls, ps, git log --graph — lays out to this at the source.",
            gt=0,
            le=10000,
        ),
    ] = None


class StartProgramOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    effective_lifetime_ms: Annotated[
        int,
        Field(
            alias="effectiveLifetimeMs",
            description="The lifetime enforced.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    pane_id: Annotated[
        str,
        Field(
            alias="paneId",
            description="The pane it runs in, for capture_pane, or for a person to watch.",
        ),
    ]
    program_id: Annotated[
        str,
        Field(
            alias="programId",
            description="Pass to read_program and stop_program.",
            max_length=64,
            min_length=1,
        ),
    ]
