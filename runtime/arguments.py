"""Arguments tmux cannot be given, refused before any tmux work, naming the field.

tmux's command parser ends a string at a NUL character: a command holding one cannot be
sent as it was given (the engine refuses it too, as a last line of defence: see
``schemux.engine.encode_command``). A call whose arguments hold one is invalid, and says
which field, as a schema violation does. Only fields that never reach tmux may hold one:
a program's ``input`` is written to a private file that becomes its stdin.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# per tool: the top-level fields whose text never reaches tmux (nor a shell)
NEVER_SENT: Mapping[str, frozenset[str]] = {
    "start_program": frozenset({"input"}),
    "run_program": frozenset({"input"}),
}


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def nul_violation(tool: str, arguments: Mapping[str, Any]) -> str | None:
    """``field: ...`` for the first argument holding a NUL character that would reach
    tmux; None when there is none."""
    exempt = NEVER_SENT.get(tool, frozenset())
    for key, value in arguments.items():
        if key in exempt:
            continue
        for path, text in _strings(value, str(key)):
            if "\x00" in text:
                return (
                    f"{path}: contains a NUL character (at index {text.index(chr(0))}), "
                    "which tmux cannot be given (rule: no NUL)"
                )
    return None
