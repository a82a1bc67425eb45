"""Reading named tmux format fields back exactly, whatever bytes they hold.

A name, title, command or path can hold a tab, a newline or 0x1f (a process started as
``exec -a $'a\\tb\\nc' sleep 300``, a directory with a newline): split on any of them,
a row of fields falls apart. So tmux encodes every field before printing it, with its
own ``s`` modifier (a chain of regular expression substitutions, on tmux 3.3 and later):
``!`` becomes ``!21`` first, then tab ``!09``, newline ``!0A`` and 0x1f ``!1F``. A row
is then one line of fields separated by tabs, and decoding is exact.

The escape is ``!``, not ``%``: ``display-message`` passes its template through
strftime before expanding it (tmux 3.3a printed ``%25`` in a modifier as 25 columns of
padding), and ``!`` means nothing to strftime, to tmux formats or to a regular
expression.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from schemux.errors import SchemuxError

# the order matters: "!" first, so that the codes the others leave are not encoded again
_ESCAPES = (("!", "!21"), ("\t", "!09"), ("\n", "!0A"), ("\x1f", "!1F"))
_DECODE = {code: raw for raw, code in _ESCAPES}
_CODE = re.compile("!(?:21|09|0A|1F)")
# the substitutions as one chain of tmux ``s/PATTERN/REPLACEMENT/`` modifiers (the tab,
# newline and 0x1f are literal bytes here; schemux.engine quotes them on the way out)
_MODIFIERS = ";".join(f"s/{raw}/{code}/" for raw, code in _ESCAPES)
SEPARATOR = "\t"


def field(name: str) -> str:
    """The format that prints the value of ``name`` (``pane_id``, ``@option``) encoded."""
    return f"#{{{_MODIFIERS}:{name}}}"


def encode(value: str) -> str:
    """What ``field`` makes tmux print for ``value`` (for tests and documentation)."""
    for raw, code in _ESCAPES:
        value = value.replace(raw, code)
    return value


def decode(text: str) -> str:
    """The value an encoded field stands for."""
    return _CODE.sub(lambda match: _DECODE[match.group(0)], text)


@dataclass(frozen=True)
class Row:
    """The named fields of one line of a ``Query``'s output."""

    values: dict[str, str]

    def __getitem__(self, name: str) -> str:
        return self.values[name]

    def number(self, name: str) -> int | None:
        """The field as a whole number; None when tmux printed nothing for it."""
        value = self.values[name]
        if value == "":
            return None
        try:
            return int(value)
        except ValueError:
            raise SchemuxError(f"tmux printed {value[:40]!r} for {name}, not a number") from None

    def integer(self, name: str) -> int:
        """The field as a whole number, which tmux must have printed."""
        value = self.number(name)
        if value is None:
            raise SchemuxError(f"tmux printed nothing for {name}, where a number was expected")
        return value

    def flag(self, name: str) -> bool:
        return self.values[name] == "1"


class Query:
    """A format for named fields, each printed encoded, and the parser of its lines."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.format = SEPARATOR.join(field(name) for name in self.names)

    def parse(self, line: str) -> Row:
        parts = line.split(SEPARATOR)
        if len(parts) != len(self.names):
            raise SchemuxError(
                f"tmux printed {len(parts)} fields where {len(self.names)} were asked for "
                f"({', '.join(self.names)})"
            )
        return Row({name: decode(part) for name, part in zip(self.names, parts, strict=True)})

    def parse_all(self, lines: Sequence[str]) -> list[Row]:
        return [self.parse(line) for line in lines]


def readable(value: str) -> str:
    """``value`` for a result: bytes that were not UTF-8 (decoded with surrogateescape,
    as the engine does) become U+FFFD, which JSON can carry."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
