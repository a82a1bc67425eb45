"""Arguments refused before any tmux work, naming the field: names a tool does not have,
and text tmux cannot be given.

An argument the tool does not have is refused even where its contract allows more (a
``cwd`` that ``run_program`` would otherwise ignore, running in the wrong directory),
with the tool's argument it most likely meant: the same name in another case or with
other separators (``paneId`` for ``pane_id``), one of its group of synonyms
(``schemas/families.toml``: ``startDirectory`` for ``cwd``), or a near spelling.

Text tmux cannot be given is of two kinds, each reported as a schema violation is
(``field: ... (rule: ...)``):

* A lone surrogate (``"\\udcff"``): JSON can spell one, but it is no Unicode text, and no
  byte string stands behind it; refused in every field.
* A NUL character: tmux's command parser ends a string at one, so a command holding it
  cannot be sent as given (the engine refuses it too, as a last line of defence: see
  ``schemux.tmux.command.encode_command``). Only fields that never reach tmux's command
  parser may hold one (a tool's overlay lists them as ``never_sent``): a program's
  ``input`` is written to a private file that becomes its stdin, a buffer's ``content``
  is a tmux client's stdin.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from schemux.errors import preview
from schemux.generated.argument_facts import ARGUMENT_SYNONYMS
from schemux.generated.tool_facts import NEVER_SENT

_SURROGATE = re.compile("[\ud800-\udfff]")
# how alike (difflib's ratio) a name must be to an argument to be taken for it
_CLOSE = 0.75


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


def unknown_arguments(
    tool: str, arguments: Mapping[str, Any], declared: Collection[str]
) -> str | None:
    """``name: ...`` for each argument that ``declared`` (the tool's argument names) does
    not hold, with the one it most likely meant; None when there is none."""
    unknown = [name for name in arguments if name not in declared]
    if not unknown:
        return None
    problems = []
    for name in unknown:
        meant = likely_meant(name, declared)
        hint = f"; did you mean {meant}?" if meant is not None else ""
        problems.append(f"{preview(name)}: {tool} has no such argument{hint}")
    known = ", ".join(sorted(declared)) or "none"
    return f"{'; '.join(problems)} (its arguments: {known}) (rule: additionalProperties)"


def likely_meant(name: str, declared: Collection[str]) -> str | None:
    """The argument of ``declared`` a caller who wrote ``name`` most likely meant, or None."""
    by_key = {_key(argument): argument for argument in declared}
    key = _key(name)
    if key in by_key:
        return by_key[key]
    for group in ARGUMENT_SYNONYMS:
        keys = [_key(word) for word in group]
        if key in keys:
            for word in keys:
                if word in by_key:
                    return by_key[word]
    # difflib's ratio of two names is at most twice the shorter's length over both
    # lengths, so an argument much shorter or longer than the name cannot be close to it:
    # left out before difflib indexes the name (a name of megabytes took seconds of CPU)
    near = [
        argument
        for argument in by_key
        if 2 * min(len(argument), len(key)) >= _CLOSE * (len(argument) + len(key))
    ]
    close = difflib.get_close_matches(key, near, n=1, cutoff=_CLOSE) if near else []
    return by_key[close[0]] if close else None


def _key(name: str) -> str:
    """A name as its synonyms are matched: its case, ``_`` and ``-`` do not count."""
    return name.replace("_", "").replace("-", "").casefold()
