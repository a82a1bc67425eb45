"""A command of several lines typed as one line that evals it: the same output and status
in every shell, its text still readable (no tmux: the shells run it directly)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from schemux.shell.typed_command import evaluated, typed_command

HEREDOC = "cat <<'END'\nhidden $HOME 100% \\n 'q' \"d\"\nEND"
POSIX_COMMANDS = [
    HEREDOC,
    'for word in one two; do\n  echo "$word"\ndone\nfalse',
    "printf '%s|%d\\n' a 5\necho 'it'\"'\"'s'\nexit_status_of_last=3; (exit 3)",
    "x=1\necho $((x + 1))\t# a tab and a comment",
    "echo \x1b[31mred\x1b[0m\ntrue",
]
FISH_COMMANDS = [
    "for word in one two\n  echo $word\nend\nfalse",
    "printf '%s|%d\\n' a 5\necho 'it\\'s' \"100%\"",
    "set x (math 1 + 1)\necho $x",
]


def outcome(shell: str, text: str) -> tuple[bytes, int]:
    done = subprocess.run([shell, "-c", text], capture_output=True, timeout=30, check=False)
    return done.stdout, done.returncode


@pytest.mark.parametrize("shell", ["bash", "zsh", "dash"])
@pytest.mark.parametrize("command", POSIX_COMMANDS)
def test_a_posix_shell_runs_the_line_as_the_lines(shell: str, command: str) -> None:
    if shutil.which(shell) is None:
        pytest.fail(f"{shell} is needed (CI installs it)")
    line = evaluated(command, shell)
    assert "\n" not in line
    assert outcome(shell, line) == outcome(shell, command)


@pytest.mark.parametrize("command", FISH_COMMANDS)
def test_fish_runs_the_line_as_the_lines(command: str) -> None:
    if shutil.which("fish") is None:
        pytest.fail("fish is needed (CI installs it)")
    line = evaluated(command, "fish")
    assert "\n" not in line
    assert outcome("fish", line) == outcome("fish", command)


def test_the_line_stays_readable() -> None:
    shown = 'cat <<\\047END\\047\\nhidden $HOME 100%% \\\\n \\047q\\047 "d"\\nEND\\n#'
    assert evaluated(HEREDOC, "bash") == f"eval \"$(printf '{shown}')\""


@pytest.mark.parametrize(
    ("command", "shell", "hooked", "suppress_history", "evals"),
    [
        ("echo one line", "bash", True, True, False),  # one line: always as written
        ("echo a\necho b", "zsh", True, False, True),  # hooked: one paste, one line
        ("echo a\necho b", "fish", True, True, True),
        ("echo a\necho b", "bash", False, True, False),  # the wrapper's lines continue
        (HEREDOC, "bash", False, True, True),  # bash would save the here-document's body
        (HEREDOC, "bash", False, False, False),  # ... but history is not asked to be kept
        (HEREDOC, "zsh", False, True, False),  # zsh keeps it all out
    ],
)
def test_when_a_command_is_typed_as_one_line(
    command: str, shell: str, hooked: bool, suppress_history: bool, evals: bool
) -> None:
    typed = typed_command(command, shell, hooked=hooked, suppress_history=suppress_history)
    assert typed == (evaluated(command, shell) if evals else command)
