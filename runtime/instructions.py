"""The server's ``instructions``: which served tool to use for what, in a few lines."""

from __future__ import annotations

from collections.abc import Collection

# (the tools a line is about, how the line introduces them); a line names only served tools.
_GUIDE = (
    (
        ("run_command", "run_shell_command"),
        "Authored shell commands (exit status and exactly their output): {tools}.",
    ),
    (
        ("run_program", "start_program", "read_program", "stop_program"),
        "Programs in a pane of their own, run to the end or started, read and stopped: {tools}.",
    ),
    (
        ("send_keys", "wait_for_text"),
        "Interactive input (REPLs, prompts, TUIs, C-c) and waiting for output you did "
        "not author: {tools}.",
    ),
    (
        ("tmux_snapshot", "tmux_capture", "capture_pane"),
        "Screens: list panes, then read a pane's rows, or a program's screen: {tools}.",
    ),
)


def instructions(served: Collection[str]) -> str:
    lines = ["Run commands and programs in tmux panes and read what they print."]
    for tools, line in _GUIDE:
        present = [tool for tool in tools if tool in served]
        if present:
            lines.append(line.format(tools=", ".join(present)))
    return "\n".join(lines)
