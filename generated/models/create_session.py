"""Models of the create_session tool, generated from schemas/tools/create_session.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class CreateSessionInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    session_name: Annotated[str | None, Field(description="Name for the new session.")] = None
    window_name: Annotated[str | None, Field(description="Name for the initial window.")] = None
    start_directory: Annotated[
        str | None,
        Field(
            description="Existing directory to start in. ``~`` expands; a relative path\nresolves against the MCP server process's directory."
        ),
    ] = None
    x: Annotated[int | None, Field(description="Width of the initial window.")] = None
    y: Annotated[int | None, Field(description="Height of the initial window.")] = None
    environment: Annotated[
        dict[str, str] | str | None,
        Field(
            description="Environment variables to store in the session environment. Accepts\neither a dict of env vars or a JSON-serialized string of the same —\nthe latter is the cursor-composer-1 workaround described in\n:func:`libtmux_mcp._utils._coerce_dict_arg`. Each item appears in the\ntmux client argv as one ``-eKEY=VALUE`` element and may be visible to\nhost process inspection during launch. tmux retains the values in\ntmux session state, where ``show-environment`` can reveal them. They reach\nthe initial and future child environments unless a later spawn\noverrides them. MCP audit redaction does not hide these surfaces. Pass\ncredential references, not literal credentials."
        ),
    ] = None
    socket_name: Annotated[
        str | None, Field(description="tmux socket name. Defaults to LIBTMUX_SOCKET env var.")
    ] = None
    suppress_persistent_history: Annotated[
        bool,
        Field(
            description="Whether to suppress persistent history for the spawned shell. Defaults\nto False for MCP and direct Python calls. This per-call option does not\ninherit LIBTMUX_SUPPRESS_HISTORY. Startup files may override these\ncontrols."
        ),
    ] = False


class CreateSessionOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    session_id: Annotated[str, Field(description="Session ID (e.g. '$1')")]
    session_name: Annotated[str | None, Field(description="Session name")] = None
    window_count: Annotated[int, Field(description="Number of windows")]
    session_attached: Annotated[str | None, Field(description="Attached client count")] = None
    session_created: Annotated[str | None, Field(description="Creation timestamp")] = None
    active_pane_id: Annotated[
        str | None,
        Field(
            description="Pane id (``%N``) of the session's active pane. Guaranteed non-None on ``create_session`` return (libtmux creates the session with one initial pane). May be None from ``list_sessions`` rows for sessions in transient teardown states where ``active_pane`` is unavailable."
        ),
    ] = None
