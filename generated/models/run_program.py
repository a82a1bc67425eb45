"""Models of the run_program tool, generated from schemas/tools/run_program.json.

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


class RunProgramInput(BaseModel):
    model_config = ConfigDict(
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
    keep: Annotated[
        bool | None,
        Field(
            description="Leave the pane, dead and showing the output, for a person to read and close. Set it only when a person asked to see the run."
        ),
    ] = None
    max_lines: Annotated[
        int | None,
        Field(
            alias="maxLines",
            description="Keep at most this many lines, from the end. Defaults to the server limit.",
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
    separate_stderr: Annotated[
        bool | None,
        Field(
            alias="separateStderr",
            description="Return what the program writes to stderr apart, as stderr, so output holds stdout alone. Its stderr is then no terminal. Needs the tmux server on this machine, as input does.",
        ),
    ] = None
    start_directory: Annotated[
        str | None,
        Field(
            alias="startDirectory",
            description="Directory the program starts in, taken literally. Defaults to the directory this MCP server was started in, or the fromPaneId pane's. One that cannot be entered fails the call, with the reason, before the program starts.",
        ),
    ] = None
    timeout_ms: Annotated[
        int,
        Field(
            alias="timeoutMs",
            description="How long to let it run; 30 s by default and clamped by the server ceiling. The result says what was used.",
            gt=0,
            le=9007199254740991,
        ),
    ] = 30000
    width: Annotated[
        int | None,
        Field(
            description="Columns of the program's terminal. A program that formats to its width — ls, ps, git log --graph — lays out to this at the source.",
            gt=0,
            le=10000,
        ),
    ] = None


class RunProgramOutput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    dropped_lines: Annotated[
        int,
        Field(
            alias="droppedLines",
            description="Lines of output withheld by maxLines.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    effective_timeout_ms: Annotated[
        int,
        Field(
            alias="effectiveTimeoutMs",
            description="The timeout enforced.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    exit_status: Annotated[
        int | None,
        Field(
            alias="exitStatus",
            description="The exit status; null when a signal ended the program (see signal) or the timeout ended it (outcome timed_out).",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    lost_end: Annotated[
        bool,
        Field(
            alias="lostEnd",
            description='True when the end may be missing: tmux closed the pane before reading it. Running it again repeats what it did; for one with effects, have it write its output to a file with ["sh", "-c", "... > file"] and read the file.',
        ),
    ]
    lost_start: Annotated[
        bool,
        Field(
            alias="lostStart",
            description="True when the start scrolled past the scrollback limit; pipe a long output into a file, or read it with start_program.",
        ),
    ]
    omitted_bytes: Annotated[
        int,
        Field(
            alias="omittedBytes",
            description="Output bytes omitted by the result ceiling.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    outcome: Annotated[
        Literal["completed", "timed_out"],
        Field(
            description="completed: it ended on its own, or by the signal reported, whatever exitStatus says. timed_out: it was ended at the timeout, possibly part way through its work; running it again repeats what it did, so use start_program for one that needs longer."
        ),
    ]
    output: Annotated[
        str,
        Field(
            description="The bounded tail of what the program printed, as its terminal shows it; stderr and stdout share it."
        ),
    ]
    output_complete: Annotated[
        bool,
        Field(
            alias="outputComplete",
            description="False when outcome is timed_out, lostStart or lostEnd is true, or maxLines or the result limit cut the output or stderr.",
        ),
    ]
    returned_bytes: Annotated[
        int,
        Field(
            alias="returnedBytes",
            description="UTF-8 output bytes returned.",
            ge=-9007199254740991,
            le=9007199254740991,
        ),
    ]
    signal: Annotated[
        str | None,
        Field(
            description='The signal that ended the program, such as "SIGTERM"; otherwise null. A program that exits 130 on its own reads as SIGINT, as that status means.'
        ),
    ]
    stderr: Annotated[
        str | None,
        Field(
            description="The bounded tail of what the program wrote to stderr, with separateStderr; otherwise null, and stderr is in output."
        ),
    ]
