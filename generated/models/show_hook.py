"""Models of the show_hook tool, generated from schemas/tools/show_hook.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class ShowHookInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    hook_name: Annotated[str, Field(description='Hook to look up (e.g. ``"pane-exited"``).')]
    scope: Annotated[
        Literal["server", "session", "window", "pane"] | None,
        Field(description=":func:`~libtmux_mcp.tools.hook_tools.show_hooks`."),
    ] = None
    target: Annotated[
        str | None, Field(description=":func:`~libtmux_mcp.tools.hook_tools.show_hooks`.")
    ] = None
    global_: Annotated[
        bool, Field(description=":func:`~libtmux_mcp.tools.hook_tools.show_hooks`.")
    ] = False
    socket_name: Annotated[
        str | None, Field(description=":func:`~libtmux_mcp.tools.hook_tools.show_hooks`.")
    ] = None


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


class ShowHookOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    entries: list[Entry] | None = None
