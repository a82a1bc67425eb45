"""The server's ``instructions``: which served tool to use for what, in a few lines.

One line per family (``schemas/families.toml``, in its order): the family's job, then
each served tool of it with its use (from its overlay). A line names only served tools,
and is left out when none of its tools is served.
"""

from __future__ import annotations

from collections.abc import Collection

from schemux.generated.tool_facts import FAMILIES, JOBS, USES

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
    for family, job in JOBS.items():
        named = [f"{tool} ({USES[tool]})" for tool in FAMILIES[family] if tool in served]
        if named:
            lines.append(f"{job}: {', '.join(named)}.")
    recipes = [text for tools, text in _RECIPES if all(tool in served for tool in tools)]
    if recipes:
        lines += ["Recipes:", *(f"- {text}" for text in recipes)]
    return "\n".join(lines)
