"""Models of the send_keys_batch tool, generated from schemas/tools/send_keys_batch.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class Operation(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    keys: Annotated[str, Field(description="Keys or text to send.")]
    pane_id: Annotated[str | None, Field(description="Pane ID (e.g. '%1').")] = None
    session_name: Annotated[str | None, Field(description="Session name for pane resolution.")] = (
        None
    )
    session_id: Annotated[
        str | None, Field(description="Session ID (e.g. '$1') for pane resolution.")
    ] = None
    window_id: Annotated[str | None, Field(description="Window ID for pane resolution.")] = None
    enter: Annotated[bool, Field(description="Whether to press Enter after sending keys.")] = True
    literal: Annotated[
        bool, Field(description="Whether to send keys literally with no tmux key interpretation.")
    ] = False
    suppress_history: Annotated[
        bool,
        Field(
            description="Suppress shell history by prepending a space where the shell ignores space-prefixed commands."
        ),
    ] = False


class SendKeysBatchInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    operations: Annotated[
        list[Operation], Field(description="Ordered raw-input operations to send.")
    ]
    on_error: Annotated[
        Literal["stop", "continue"],
        Field(
            description='Whether to stop at the first failed operation or keep attempting\nlater operations. Default "stop".'
        ),
    ] = "stop"
    timeout: Annotated[
        float | None,
        Field(description="Maximum time in seconds to allow the batch to run before aborting."),
    ] = None
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None
    force: Annotated[
        bool,
        Field(
            description="Type though a person watches the pane (skips only the policy's ask for that)."
        ),
    ] = False


class Result(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    index: Annotated[int, Field(description="Zero-based index in the submitted operation list.")]
    pane_id: Annotated[
        str | None, Field(description="Resolved pane ID, or None if target resolution failed.")
    ] = None
    success: Annotated[bool, Field(description="True when this operation sent successfully.")]
    error: Annotated[
        str | None, Field(description="Error message for this operation, if it failed.")
    ] = None
    elapsed_seconds: Annotated[float, Field(description="Time spent on this operation.")]


class SendKeysBatchOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    results: Annotated[
        list[Result] | None, Field(description="Per-operation results in attempted order.")
    ] = None
    succeeded: Annotated[int, Field(description="Number of operations sent successfully.")]
    failed: Annotated[int, Field(description="Number of operations that failed.")]
    stopped_at: Annotated[
        int | None,
        Field(
            description="Index where processing stopped because on_error='stop', or None when all operations were attempted."
        ),
    ] = None
