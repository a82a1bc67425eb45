"""Models of the list_windows tool, generated from schemas/tools/list_windows.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ListWindowsInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    session_name: Annotated[
        str | None,
        Field(
            description="Session name to look up. If omitted along with session_id,\nreturns windows from all sessions."
        ),
    ] = None
    session_id: Annotated[str | None, Field(description="Session ID (e.g. '$1') to look up.")] = (
        None
    )
    socket_name: Annotated[
        str | None, Field(description="tmux socket name. Defaults to LIBTMUX_SOCKET env var.")
    ] = None
    filters: Annotated[
        dict[str, str] | str | None,
        Field(
            description='Django-style filters as a dict (e.g. ``{"window_name__contains": "dev"}``)\nor as a JSON string. Some MCP clients require the string form.'
        ),
    ] = None


class ResultItem(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    window_id: Annotated[str, Field(description="Window ID (e.g. '@1')")]
    window_name: Annotated[str | None, Field(description="Window name")] = None
    window_index: Annotated[str | None, Field(description="Window index")] = None
    session_id: Annotated[str | None, Field(description="Parent session ID")] = None
    session_name: Annotated[str | None, Field(description="Parent session name")] = None
    pane_count: Annotated[int, Field(description="Number of panes")]
    window_layout: Annotated[str | None, Field(description="Layout string")] = None
    window_active: Annotated[str | None, Field(description="Active flag ('1' or '0')")] = None
    window_width: Annotated[str | None, Field(description="Width in columns")] = None
    window_height: Annotated[str | None, Field(description="Height in rows")] = None
    active_pane_id: Annotated[
        str | None, Field(description="Pane id (``%N``) of the window's active pane.")
    ] = None


class ListWindowsOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: list[ResultItem]
