"""start_program: a program in a pane of its own, left running; read it with read_program."""

from __future__ import annotations

from schemux.domain.context import ToolContext
from schemux.generated.models.start_program import StartProgramInput, StartProgramOutput
from schemux.programs.launch import program_spec


async def handle(ctx: ToolContext, request: StartProgramInput) -> StartProgramOutput:
    limits = ctx.settings.program_limits
    lifetime = min(
        (request.lifetime_ms or limits.default_lifetime * 1000) / 1000, limits.max_lifetime
    )
    server = ctx.tmux()
    # one beside fromPaneId keeps its pane after the end, for a person to read
    keep = request.from_pane_id is not None
    spec = await program_spec(server, request, host=ctx.programs.host, lifetime=lifetime, keep=keep)
    program = await ctx.programs.start(server, spec)
    return StartProgramOutput(
        program_id=program.id,
        pane_id=program.pane_id,
        effective_lifetime_ms=round(lifetime * 1000),
    )
