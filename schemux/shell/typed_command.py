"""How a command's text is typed into a shell: as written, or as one line that ``eval``s
it.

A command of one line is typed as written. One of several lines is typed as written into
a shell that schemux's typed wrapper serves (its lines continue the wrapper's group until
the wrapper's own last line), but as one line in two cases:

* **A shell with schemux's hooks** gets the command as one paste, and pasted line breaks
  stay in the edit only while the line editor has asked for bracketed paste, which it
  does anew at each prompt: a paste that came a moment early (seen with zsh's plugins)
  had each line break accepted as Enter, and the lines after the first whole command
  were typed while it ran, and lost.
* **bash keeping it out of history** (``suppress_history``): the leading space keeps a
  command of several lines out whole in zsh and fish, but bash (5.2) still saves the
  body of a here-document typed after it.

The line is ``eval`` of the text, written as a ``printf`` format in which only quotes,
backslashes, percent signs and control characters are escaped, so that a person
watching the pane still reads it. ``eval`` runs it in the shell itself, as typing would,
and returns its status; a trailing comment keeps the command substitution from dropping
the last line break (a here-document's delimiter needs one) and changes no status.
"""

from __future__ import annotations

import re

_ESCAPED = re.compile(r"[\\%'\x00-\x1f\x7f]")


def typed_command(command: str, shell: str, *, hooked: bool, suppress_history: bool) -> str:
    """``command`` as it is typed (after the leading space that ``suppress_history``
    adds) into ``shell`` (its name), ``hooked`` or served by the typed wrapper."""
    if "\n" not in command:
        return command
    if hooked or (suppress_history and shell == "bash" and "<<" in command):
        return evaluated(command, shell)
    return command


def evaluated(command: str, shell: str) -> str:
    """One line that runs ``command`` in ``shell`` (fish, or a POSIX shell)."""
    text = _printf_format(command)
    if shell == "fish":
        # fish's single quotes take a backslash before a backslash (or a quote) as an
        # escape: each of the format's is doubled
        fish_text = text.replace("\\", "\\\\")
        return f"eval (printf '{fish_text}' | string collect)"
    return f"eval \"$(printf '{text}')\""


def _printf_format(text: str) -> str:
    """A ``printf`` format that prints ``text``, a line break and ``#``; it holds no
    single quote."""
    return _ESCAPED.sub(_escape, text) + "\\n#"


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    if character == "\\":
        return "\\\\"
    if character == "%":
        return "%%"
    if character == "\n":
        return "\\n"
    return f"\\{ord(character):03o}"
