"""Models of the signal_channel tool, generated from schemas/tools/signal_channel.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class SignalChannelInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    channel: Annotated[
        str, Field(description="Channel name. Must match ``^[A-Za-z0-9_.:-]{1,128}$``.")
    ]
    socket_name: Annotated[str | None, Field(description="tmux socket name.")] = None


class SignalChannelOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    result: str
