"""Models of the show_hooks tool, generated from schemas/tools/show_hooks.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class ShowHooksInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    scope: Annotated[
        Literal["server", "session", "window", "pane"] | None,
        Field(
            description="Hook scope (server/session/window/pane). Defaults to the\ncalling object's scope when a ``target`` is given."
        ),
    ] = None
    target: Annotated[
        str | None,
        Field(
            description="Target identifier. For session scope: session name. For window\nscope: window ID. For pane scope: pane ID. Requires ``scope``."
        ),
    ] = None
    global_: Annotated[
        bool, Field(description="Pass ``-g`` to query global hooks. Default False.")
    ] = False
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class Entry(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    hook_name: Annotated[str, Field(description="Hook name (e.g. 'pane-exited').")]
    index: Annotated[
        int | None,
        Field(
            description="Array index for array-style hooks (e.g. session-renamed[3]). ``None`` for scalar hooks."
        ),
    ] = None
    command: Annotated[str, Field(description="tmux command string registered at that index.")]


class ShowHooksOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    entries: list[Entry] | None = None
