"""Models of the show_option tool, generated from schemas/tools/show_option.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ShowOptionInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    option: Annotated[str, Field(description="The tmux option name to query.")]
    scope: Annotated[
        Literal["server", "session", "window", "pane"] | None, Field(description="Option scope.")
    ] = None
    target: Annotated[
        str | None,
        Field(
            description="Target identifier. For session scope: session name\n(e.g. 'mysession'). For window scope: window ID (e.g. '@1').\nFor pane scope: pane ID (e.g. '%1'). Requires scope."
        ),
    ] = None
    global_: Annotated[bool, Field(description="Whether to query the global option.")] = False
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class ShowOptionOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    option: Annotated[str, Field(description="Option name")]
    value: Annotated[Any, Field(description="Option value")]
