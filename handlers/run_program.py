"""run_program: start a program, wait for it, and return its last screen and status."""

from __future__ import annotations

from schemux.domain.call import Call
from schemux.domain.resource_uris import program_uri
from schemux.generated.models.run_program import RunProgramInput, RunProgramOutput
from schemux.programs.launch import program_spec
from schemux.programs.run import run


async def handle(call: Call, request: RunProgramInput) -> RunProgramOutput:
    timeout = call.settings.clamp_wait(request.timeout_ms / 1000)
    call.progress.expect(timeout, "waiting for the program to end")
    server = call.tmux()
    spec = await program_spec(
        server,
        request,
        call.notes,
        host=call.programs.host,
        lifetime=call.settings.program_limits.max_lifetime,
        separate_stderr=bool(request.separate_stderr),
        keep=bool(request.keep),
        hold=True,
    )
    result = await run(call.programs, server, spec, call.caller, timeout, request.max_lines)
    if result.kept_output is not None:
        call.links.link(
            program_uri(call.host_name, result.kept_output),
            f"output of {result.kept_output}",
            "all the program printed; read_program reads it too, "
            f"with program_id {result.kept_output}",
        )
    return RunProgramOutput(
        outcome="timed_out" if result.timed_out else "completed",
        exit_status=None if result.timed_out else result.ending.exit_status,
        signal=result.ending.signal,
        output=result.output,
        stderr=result.stderr,
        dropped_lines=result.dropped_lines,
        omitted_bytes=result.omitted_bytes,
        returned_bytes=len(result.output.encode()),
        lost_start=result.lost_start,
        lost_end=result.lost_end,
        output_complete=result.output_complete,
        effective_timeout_ms=round(timeout * 1000),
    )
