"""Models of the call_read_tools_batch tool, generated from schemas/tools/call_read_tools_batch.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Operation(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    tool: Annotated[str, Field(description="Registered MCP tool name to call.")]
    arguments: Annotated[
        dict[str, Any] | None, Field(description="Arguments for the nested tool call.")
    ] = None


class CallReadToolsBatchInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    operations: list[Operation]
    on_error: Literal["stop", "continue"] = "stop"


class Result(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    index: Annotated[int, Field(description="Zero-based index in the submitted operation list.")]
    tool: Annotated[str, Field(description="Nested tool name that was attempted.")]
    success: Annotated[bool, Field(description="True when this nested tool call succeeded.")]
    error: Annotated[
        str | None, Field(description="Error message for this operation, if it failed.")
    ] = None
    content: Annotated[
        list[dict[str, Any]] | None,
        Field(description="MCP content blocks returned by the nested tool."),
    ] = None
    structured_content: Annotated[
        dict[str, Any] | None,
        Field(description="Structured content returned by the nested tool, if any."),
    ] = None
    meta: Annotated[
        dict[str, Any] | None,
        Field(description="Runtime metadata returned by the nested tool, if any."),
    ] = None
    elapsed_seconds: Annotated[float, Field(description="Time spent on this operation.")]


class CallReadToolsBatchOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    results: Annotated[
        list[Result] | None, Field(description="Per-operation results in attempted order.")
    ] = None
    succeeded: Annotated[int, Field(description="Number of nested tool calls that succeeded.")]
    failed: Annotated[int, Field(description="Number of nested tool calls that failed.")]
    stopped_at: Annotated[
        int | None,
        Field(
            description="Index where processing stopped because on_error='stop', or None when all operations were attempted."
        ),
    ] = None
    response_truncated: Annotated[
        bool,
        Field(
            description="True when nested result payloads were elided to keep the batch response under the server response cap."
        ),
    ] = False
    response_truncated_bytes: Annotated[
        int, Field(description="Approximate serialized bytes removed from nested result payloads.")
    ] = 0
