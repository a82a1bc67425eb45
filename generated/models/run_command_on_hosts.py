"""Models of the run_command_on_hosts tool, generated from schemas/tools/run_command_on_hosts.json.

Do not edit: run ``python -m codegen``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class RunCommandOnHostsInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        validate_by_name=True,
    )
    command: Annotated[str, Field(description="Shell command to run in each host's agent pane.")]
    hosts: Annotated[
        list[str] | None, Field(description="The configured hosts to run it on, by name.")
    ] = None
    group: Annotated[
        str | None, Field(description="A configured group of hosts to run it on, instead of hosts.")
    ] = None
    max_lines: Annotated[
        int | None,
        Field(
            description="Maximum output lines to return per host, from the end. Defaults to all."
        ),
    ] = None
    suppress_history: Annotated[
        bool,
        Field(
            description="Put a space before the command, which keeps it out of the history of a shell that ignores space-prefixed commands (best effort). Needs a single-line command."
        ),
    ] = True
    timeout: Annotated[
        float,
        Field(
            description="Maximum seconds to wait for each host's command, connecting to the host included. Capped by the server's wait ceiling; the result's effective_timeout says the timeout enforced."
        ),
    ] = 30


class HostCommandResult(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    host: Annotated[str, Field(description="The host's configured name.")]
    pane_id: Annotated[
        str | None,
        Field(
            description="The pane of the host that received the command; null when none was reached."
        ),
    ] = None
    exit_status: Annotated[
        int | None,
        Field(
            description="The command's exit status; null when it timed out or the host answered an error."
        ),
    ] = None
    timed_out: Annotated[
        bool,
        Field(
            description="True when the command still ran at the timeout; it keeps running in the pane."
        ),
    ] = False
    output: Annotated[
        list[str],
        Field(
            description="The lines the command printed, as the pane shows them; on a timeout, what it printed so far."
        ),
    ] = []
    output_truncated: Annotated[
        bool,
        Field(
            description="True when the output is a tail: max_lines cut it, or tmux's history limit dropped its head while the command ran."
        ),
    ] = False
    output_truncated_lines: Annotated[
        int,
        Field(
            description="Lines dropped from the head: those max_lines cut, plus a lower bound of those tmux's history limit dropped."
        ),
    ] = 0
    elapsed_seconds: Annotated[
        float, Field(description="Seconds this host took to answer, connecting included.")
    ]
    error: Annotated[
        str | None,
        Field(
            description="Why this host did not run the command or give its result (unreachable, its tmux server or pane gone, its shell busy); null when it answered."
        ),
    ] = None


class RunCommandOnHostsOutput(BaseModel):
    model_config = ConfigDict(
        validate_by_name=True,
    )
    results: Annotated[
        list[HostCommandResult],
        Field(description="One entry per host, in the order the hosts are configured."),
    ]
    exited_zero: Annotated[int, Field(description="How many hosts' commands exited with status 0.")]
    exited_nonzero: Annotated[
        int, Field(description="How many hosts' commands exited with another status.")
    ]
    timed_out: Annotated[
        int, Field(description="How many hosts' commands still ran at the timeout.")
    ]
    errors: Annotated[int, Field(description="How many hosts answered an error.")]
    effective_timeout: Annotated[
        float,
        Field(
            description="Seconds actually enforced for each host. Server policy caps the requested timeout."
        ),
    ]
    elapsed_seconds: Annotated[float, Field(description="Time the whole call took in seconds.")]
