"""start_program: a program in a pane of its own, left running; read it with read_program."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.generated.models.start_program import StartProgramInput, StartProgramOutput
from schemux.programs.launch import program_spec


async def handle(call: Call, request: StartProgramInput) -> StartProgramOutput:
    limits = call.settings.program_limits
    lifetime = min(
        (request.lifetime_ms or limits.default_lifetime * 1000) / 1000, limits.max_lifetime
    )
    server = call.tmux()
    # one beside fromPaneId keeps its pane after the end, for a person to read
    keep = request.from_pane_id is not None
    spec = await program_spec(
        server, request, call.notes, host=call.programs.host, lifetime=lifetime, keep=keep
    )
    program = await call.programs.start(server, spec, call.caller)
    return StartProgramOutput(
        program_id=program.id,
        pane_id=program.pane_id,
        effective_lifetime_ms=round(lifetime * 1000),
    )
