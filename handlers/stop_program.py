"""stop_program: end a started program if it runs, and free its pane and its output."""

from __future__ import annotations

from schemux.calls import progress
from schemux.domain.context import ToolContext
from schemux.generated.models.stop_program import StopProgramInput, StopProgramOutput
from schemux.programs.store import STOP_GRACE_SECONDS


async def handle(ctx: ToolContext, request: StopProgramInput) -> StopProgramOutput:
    program = ctx.programs.get(request.program_id)
    progress.expect(STOP_GRACE_SECONDS, "waiting for the program to stop")
    ending, was_running = await ctx.programs.stop(program)
    return StopProgramOutput(
        program_id=program.id,
        outcome=ending.outcome,
        exit_status=ending.exit_status,
        signal=ending.signal,
        was_running=was_running,
    )
