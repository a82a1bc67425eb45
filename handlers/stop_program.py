"""stop_program: end a started program if it runs and remove its pane; its output stays readable."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.generated.models.stop_program import StopProgramInput, StopProgramOutput
from schemux.programs.store import STOP_GRACE_SECONDS


async def handle(call: Call, request: StopProgramInput) -> StopProgramOutput:
    program = call.programs.get(request.program_id, call.caller)
    call.progress.expect(STOP_GRACE_SECONDS, "waiting for the program to stop")
    ending, was_running = await call.programs.stop(program)
    return StopProgramOutput(
        program_id=program.id,
        outcome=ending.outcome,
        exit_status=ending.exit_status,
        signal=ending.signal,
        was_running=was_running,
    )
