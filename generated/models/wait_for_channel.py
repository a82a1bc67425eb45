"""Models of the wait_for_channel tool, generated from schemas/tools/wait_for_channel.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class WaitForChannelInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    channel: Annotated[
        str, Field(description="Channel name. Must match ``^[A-Za-z0-9_.:-]{1,128}$``.")
    ]
    timeout: Annotated[
        float,
        Field(
            description="Maximum seconds to wait. The underlying ``tmux wait-for`` has\nno built-in timeout — this wrapper enforces it by killing the\ntmux child, which also happens if the call is cancelled.\nDefaults to 30 seconds. Capped by the same server wait ceiling\nas ``wait_for_text``; an over-large value is not an error, the\nwait returns at the ceiling and the confirmation message names\nthe timeout that was actually enforced."
        ),
    ] = 30.0
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class WaitForChannelOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
