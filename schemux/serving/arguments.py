"""Argument text tmux cannot be given, refused before any tmux work, naming the field.

Two kinds, each reported as a schema violation is (``field: ... (rule: ...)``):

* A lone surrogate (``"\\udcff"``): JSON can spell one, but it is no Unicode text, and no
  byte string stands behind it; refused in every field.
* A NUL character: tmux's command parser ends a string at one, so a command holding it
  cannot be sent as given (the engine refuses it too, as a last line of defence: see
  ``schemux.tmux.command.encode_command``). Only fields that never reach tmux may hold one
  (a tool's overlay lists them as ``never_sent``): a program's ``input`` is written to a
  private file that becomes its stdin.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from schemux.generated.tool_facts import NEVER_SENT

_SURROGATE = re.compile("[\ud800-\udfff]")


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def text_violation(
    tool: str, arguments: Mapping[str, Any], declared: Collection[str]
) -> str | None:
    """``field: ...`` for the first argument that is not text tmux can be given; None
    when every one is. Only ``declared`` fields count: an argument the contract does not
    name (where it allows more) is ignored, and so never reaches tmux."""
    exempt = NEVER_SENT.get(tool, ())
    for key, value in arguments.items():
        if key not in declared:
            continue
        for path, text in _strings(value, str(key)):
            surrogate = _SURROGATE.search(text)
            if surrogate is not None:
                return (
                    f"{path}: contains U+{ord(surrogate.group()):04X} at index "
                    f"{surrogate.start()}, a lone surrogate, which is not Unicode text "
                    "(rule: unicode)"
                )
            if key not in exempt and "\x00" in text:
                return (
                    f"{path}: contains a NUL character (at index {text.index(chr(0))}), "
                    "which tmux cannot be given (rule: no NUL)"
                )
    return None
