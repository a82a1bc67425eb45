"""Models of the set_option tool, generated from schemas/tools/set_option.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class SetOptionInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    option: Annotated[str, Field(description="The tmux option name to set.")]
    value: Annotated[str, Field(description="The value to set.")]
    scope: Annotated[
        Literal["server", "session", "window", "pane"] | None, Field(description="Option scope.")
    ] = None
    target: Annotated[
        str | None,
        Field(
            description="Target identifier. For session scope: session name\n(e.g. 'mysession'). For window scope: window ID (e.g. '@1').\nFor pane scope: pane ID (e.g. '%1'). Requires scope."
        ),
    ] = None
    global_: Annotated[bool, Field(description="Whether to set the global option.")] = False
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class SetOptionOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    option: Annotated[str, Field(description="Option name")]
    value: Annotated[str, Field(description="Value that was set")]
    status: Annotated[str, Field(description="Operation status")]
