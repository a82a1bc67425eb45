"""read_program: what a started program printed after a cursor, and how it stands."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.generated.models.read_program import ReadProgramInput, ReadProgramOutput


async def handle(call: Call, request: ReadProgramInput) -> ReadProgramOutput:
    program = call.programs.get(request.program_id, call.caller)
    timeout = call.settings.clamp_wait(request.timeout_ms / 1000)
    call.progress.expect(timeout, "waiting for the program's output")
    page = await call.programs.read(program, request.cursor or 0, request.max_lines, timeout)
    ending = program.ending
    return ReadProgramOutput(
        text=page.text,
        cursor=page.cursor,
        ended=page.ended,
        outcome="running" if ending is None else ending.outcome,
        exit_status=None if ending is None else ending.exit_status,
        signal=None if ending is None else ending.signal,
        output_cut=program.output_cut,
        lost_end=program.lost_end,
        output_complete=page.ended and program.output_complete,
        effective_timeout_ms=round(timeout * 1000),
    )
