"""The server's ``instructions``: which served tool to use for what, in a few lines."""

from __future__ import annotations

from collections.abc import Collection

# One line per job: how it starts, then each tool with what it is for. A line names only
# the served tools, and is left out when none of its tools is served.
_GUIDE: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Authored shell commands, with exit status and exactly their output",
        (
            ("run_command", "a pane found by id, session or window"),
            ("run_shell_command", "a paneId"),
        ),
    ),
    (
        "Programs in a pane of their own",
        (
            ("run_program", "run to the end"),
            ("start_program", "start"),
            ("read_program", "read as it goes"),
            ("stop_program", "stop"),
        ),
    ),
    (
        "Interactive input (REPLs, prompts, TUIs, C-c) and output you did not author",
        (
            ("send_keys", "type text or keys"),
            ("wait_for_text", "wait for new output"),
        ),
    ),
    (
        "Screens",
        (
            ("tmux_snapshot", "list panes and their references"),
            ("tmux_capture", "a pane's exact rows, with cursors for what changed"),
            ("capture_pane", "a pane's screen as text, such as a program's"),
        ),
    ),
)


def instructions(served: Collection[str]) -> str:
    lines = ["Run commands and programs in tmux panes and read what they print."]
    for job, tools in _GUIDE:
        named = [f"{tool} ({use})" for tool, use in tools if tool in served]
        if named:
            lines.append(f"{job}: {', '.join(named)}.")
    return "\n".join(lines)
