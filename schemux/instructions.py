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
            ("send_keys_batch", "several inputs in one call"),
            ("wait_for_text", "wait for new output"),
            ("wait_for_channel", "wait for the signal a line you typed sends"),
            ("signal_channel", "send one"),
        ),
    ),
    (
        "Screens",
        (
            ("tmux_snapshot", "list panes and their references"),
            ("tmux_capture", "a pane's exact rows, with cursors for what changed"),
            ("capture_pane", "a pane's screen as text, such as a program's"),
            ("snapshot_pane", "a pane's text with its cursor, mode and process"),
            ("capture_since", "a pane's rows new since a cursor"),
        ),
    ),
)

# Ways to do common jobs, each with the tools it needs: given only when all are served.
_RECIPES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("capture_since", "send_keys", "wait_for_channel"),
        "Answer a REPL in 4 calls: capture_since (a cursor); send_keys a line that ends by "
        "signalling, in Python `print(6*7); _ = __import__('os').system('tmux wait-for -S "
        "answer-1')`; wait_for_channel answer-1; capture_since with the cursor (the line "
        "and its answer).",
    ),
    (
        ("run_program",),
        'A REPL as a program, in 1 call: run_program argv ["python3", "-i", "-q"] '
        'with input "6*7\\n" and separateStderr (output: 42; the prompts go to stderr).',
    ),
    (
        ("start_program", "read_program"),
        "Follow a build: start_program, then read_program with the cursor each read returns "
        "until ended is true: a read waits for new output (no read comes back empty) and "
        "the last one says how the build ended.",
    ),
    (
        ("run_command",),
        "Why a command failed: run_command's exit_status and output (stderr too, as the "
        "pane shows it).",
    ),
    (
        ("run_program",),
        "Why a program failed: run_program's exitStatus or signal, its output, and with "
        "separateStderr its stderr apart.",
    ),
)


def instructions(served: Collection[str]) -> str:
    lines = ["Run commands and programs in tmux panes and read what they print."]
    for job, tools in _GUIDE:
        named = [f"{tool} ({use})" for tool, use in tools if tool in served]
        if named:
            lines.append(f"{job}: {', '.join(named)}.")
    recipes = [text for tools, text in _RECIPES if all(tool in served for tool in tools)]
    if recipes:
        lines += ["Recipes:", *(f"- {text}" for text in recipes)]
    return "\n".join(lines)
