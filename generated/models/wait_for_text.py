"""Models of the wait_for_text tool, generated from schemas/tools/wait_for_text.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class WaitForTextInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    patterns: Annotated[
        list[str] | None,
        Field(
            description="Success patterns; the first one to match ends the wait.\nLiteral text unless ``regex=True``. Omit or pass ``null`` to\nwait for any new output."
        ),
    ] = None
    stop: Annotated[
        list[str] | None,
        Field(
            description='Failure patterns. A hit ends the wait immediately with\n``outcome="stopped"`` and ``found=false``; ``matched_index``\nsays which entry fired.'
        ),
    ] = None
    regex: Annotated[
        bool,
        Field(
            description="Interpret ``patterns`` and ``stop`` as regular expressions.\nDefault False (literal text)."
        ),
    ] = False
    pane_id: Annotated[str | None, Field(description="Pane ID (e.g. '%1').")] = None
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    session_id: Annotated[
        str | None, Field(description="Session ID (e.g. '$1') for pane resolution.")
    ] = None
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    timeout: Annotated[
        float,
        Field(
            description="Requested seconds to wait. Default 8.0. Clamped by server\npolicy; see ``effective_timeout`` in the result."
        ),
    ] = 8.0
    interval: Annotated[
        float, Field(description="Seconds between polls. Default 0.05 (50ms). Minimum 0.01.")
    ] = 0.05
    match_case: Annotated[
        bool, Field(description="Whether to match case. Default False (case-insensitive).")
    ] = False
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class WaitForTextOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    found: Annotated[
        bool,
        Field(
            description="True when a ``patterns`` entry matched new output, or, with ``patterns=null``, when any new output appeared."
        ),
    ]
    outcome: Annotated[
        Literal["matched", "any_output", "stopped", "alternate_screen", "timeout"],
        Field(
            description="How the wait ended. ``matched``: a ``patterns`` entry hit. ``any_output``: ``patterns`` was omitted and something — possibly just a prompt repaint — was written; read it as 'the pane moved', never as 'the command finished'. ``stopped``: a ``stop`` failure marker hit. ``alternate_screen``: the pane was under a pager, editor, or full-screen TUI, which repaints the whole grid, so matching was suppressed — read the screen with snapshot_pane instead of retrying. ``timeout``: nothing matched in the budget."
        ),
    ]
    matched_index: Annotated[
        int | None,
        Field(
            description="Zero-based index into ``patterns``, or into ``stop`` when ``outcome`` is ``stopped``. Null otherwise."
        ),
    ] = None
    matched_lines: Annotated[
        list[str] | None, Field(description="Newly-written lines that matched (empty on timeout).")
    ] = None
    tail: Annotated[
        list[str] | None,
        Field(
            description="Rows from the entry cursor row down at the final poll, tail-limited by lines and bytes. Includes stale rows excluded from matching, so it shows what the pane looks like, not what matched. On a timeout this usually already contains the answer — read it before retrying with a different pattern."
        ),
    ] = None
    saw_new_output: Annotated[
        bool,
        Field(
            description="True when content was written on or below the entry cursor row. Read it with ``found=false``: true means output arrived and did not match — read ``tail`` and fix the pattern; false means the pane was quiet — suspect the command never ran, or check ``alternate_screen``."
        ),
    ] = False
    matched_at_entry: Annotated[
        bool,
        Field(
            description="True when ``patterns`` already matched on-screen text before the wait began and nothing new matched after. The wait holds out for a FRESH occurrence, so re-running a command whose output looks identical still works. Read it as: the text is there, but it predates your call."
        ),
    ] = False
    alternate_screen: Annotated[
        bool,
        Field(
            description="True when the pane was on the terminal's alternate screen at any point during the wait."
        ),
    ] = False
    pane_id: Annotated[str, Field(description="Pane ID that was polled")]
    elapsed_seconds: Annotated[float, Field(description="Time spent waiting in seconds")]
    effective_timeout: Annotated[
        float,
        Field(
            description="Seconds actually enforced. Server policy caps the requested ``timeout``; compare against what you passed to see a clamp."
        ),
    ]
