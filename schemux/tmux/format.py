r"""Reading named tmux format fields back exactly, whatever bytes they hold.

A name, title, command or path can hold a tab, a newline or 0x1f (a process started as
``exec -a $'a\\tb\\nc' sleep 300``, a directory with a newline): split on any of them,
a row of fields falls apart. So tmux encodes every field before printing it, with its
own ``s`` modifier (a chain of regular expression substitutions, on tmux 3.3 and later):
``!`` becomes ``!21`` first, then tab ``!09``, newline ``!0A``, 0x1f ``!1F`` and backslash
``!5C``. A row is then one line of fields separated by tabs, and decoding is exact.

tmux 3.4 and 3.5 escape what they print (``strvis``, reverted in 3.6): a control byte,
DEL or a byte that is not UTF-8 comes out as octal text (``\001``) or C style (``\a``,
``\b``, ``\v``, ``\f``, ``\r``), and 3.4 prints ``$`` before a letter, ``_`` or ``{`` as
``\$``; a backslash itself is left as it is. So a backslash of the value is encoded
too: then every backslash in a printed field is tmux's own escape, which ``decode``
undoes first, byte for byte. On a tmux that prints values raw no backslash is left to
undo, so the same decoding is exact on every version, whichever one the server is
(a client of one version may talk to a server of another), without asking it.

The escape is ``!``, not ``%``: ``display-message`` passes its template through
strftime before expanding it (tmux 3.3a printed ``%25`` in a modifier as 25 columns of
padding), and ``!`` means nothing to strftime, to tmux formats or to a regular
expression.

Rows are typed (``tmux_row``): a frozen dataclass whose fields bear tmux's format names
(``pane_id``, ``history_size``; a user option through ``option``), typed
``str``, ``int``, ``int | None`` (tmux may print nothing) or ``bool`` (tmux's ``1``).
Which names exist, and since which tmux version, is libtmux's knowledge
(``libtmux.neo``), which codegen copies into ``schemux.generated.tmux_fields`` (so that
schemux does not import libtmux at run time): a row naming a field that the oldest tmux
schemux serves lacks is refused when it is defined, so every row is readable on every
tmux schemux runs on.
``query`` runs one command printing such rows, over schemux's engine (libtmux is not
the transport); a command line that reads a row besides other output uses
``row_format`` and ``parse_row``.

A row's fields that only tmux makes, from digits and its id prefixes (a tmux format
name typed ``int``, ``int | None`` or ``bool``, and ``pane_id``, ``window_id``,
``session_id``), are printed as they are: nothing in them needs the encoding, which
cost tmux 5 regular expressions a field (a ``list-panes -a`` row of 15 fields took it
0.1 ms more; schemux reads such rows in most calls). A user option is always encoded,
whatever its row types it as: anyone can set one to anything.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from schemux.errors import SchemuxError
from schemux.generated.tmux_fields import FIELD_VERSION, FORMAT_NAMES
from schemux.versions import MINIMUM_VERSION, parse_version

# the order matters: "!" first, so that the codes the others leave are not encoded again
_ESCAPES = (("!", "!21"), ("\t", "!09"), ("\n", "!0A"), ("\x1f", "!1F"), ("\\", "!5C"))
_DECODE = MappingProxyType({code: raw for raw, code in _ESCAPES})
_CODE = re.compile("!(?:21|09|0A|1F|5C)")
# how each character is written as a regular expression in tmux's ``s/`` modifier: a
# backslash alone would escape what follows it, in a bracket expression it is itself
_PATTERNS = MappingProxyType({"\\": "[\\]"})
# the substitutions as one chain of tmux ``s/PATTERN/REPLACEMENT/`` modifiers (the tab,
# newline and 0x1f are literal bytes here; schemux.tmux.command quotes them on the way out)
_MODIFIERS = ";".join(f"s/{_PATTERNS.get(raw, raw)}/{code}/" for raw, code in _ESCAPES)
SEPARATOR = "\t"
# tmux 3.4/3.5's escapes of what they print (vis(3) with VIS_OCTAL|VIS_CSTYLE|VIS_NOSLASH;
# tab and newline are left alone) and 3.4's ``\$``
_PRINTED_ESCAPE = re.compile(rb"\\(?:([0-7]{3})|([abvfr$]))")
_C_STYLE = MappingProxyType(
    {b"a": b"\a", b"b": b"\b", b"v": b"\v", b"f": b"\f", b"r": b"\r", b"$": b"$"}
)


def format_literal(text: str) -> str:
    """``text`` as a tmux format that expands to itself. Many tmux commands expand an
    argument as a format (``new-session -s``/``-c``, ``rename-window``, ``show-options``'s
    name, ``run-shell``'s and ``pipe-pane``'s command, a ``set-option -F`` value), where
    ``#{...}`` would be replaced and ``#(...)`` run as a shell command."""
    return text.replace("#", "##")


# tmux's ids of its objects: a prefix and digits, made by tmux alone
TMUX_IDS = frozenset({"pane_id", "window_id", "session_id"})


def field(name: str) -> str:
    """The format that prints the value of ``name`` (``pane_id``, ``@option``) encoded."""
    return f"#{{{_MODIFIERS}:{name}}}"


def encode(value: str) -> str:
    """What ``field`` makes tmux print for ``value`` (for tests and documentation)."""
    for raw, code in _ESCAPES:
        value = value.replace(raw, code)
    return value


def _printed_byte(match: re.Match[bytes]) -> bytes:
    octal, letter = match.groups()
    return bytes([int(octal, 8)]) if octal is not None else _C_STYLE[letter]


def unprinted(text: str) -> str:
    """``text`` as it was before tmux 3.4/3.5 escaped it for printing, given that every
    backslash in it is such an escape (as in an encoded field). Bytes that are not UTF-8
    stand for themselves as the engine's surrogateescape decoding gives them."""
    if "\\" not in text:
        return text
    raw = text.encode("utf-8", "surrogateescape")
    rest = _PRINTED_ESCAPE.sub(b"", raw)
    if b"\\" in rest:
        seen = rest[rest.index(b"\\") :][:8].decode("utf-8", "replace")
        raise SchemuxError(f"tmux printed an escape schemux cannot read: {seen!r}")
    return _PRINTED_ESCAPE.sub(_printed_byte, raw).decode("utf-8", "surrogateescape")


def decode(text: str) -> str:
    """The value an encoded field stands for, as tmux printed it (escaped or not)."""
    return _CODE.sub(lambda match: _DECODE[match.group(0)], unprinted(text))


# tmux 3.7 and later sanitize a name as they make it (clean_name: vis(3) with VIS_OCTAL,
# VIS_CSTYLE, VIS_TAB and VIS_NL, a backslash doubled); pane_current_command, derived from
# the pane's process each time it is printed, is made so too. A name holding a control
# byte or DEL, or bytes that are not UTF-8, becomes empty: tmux keeps nothing of it.
SANITIZED_SINCE = (3, 7)
_SANITIZED_ESCAPE = re.compile(rb"\\(?:([0-7]{3})|([abtnvfr\\]))")
_SANITIZED_C_STYLE = MappingProxyType({**_C_STYLE, b"t": b"\t", b"n": b"\n", b"\\": b"\\"})


def unsanitized(name: str, version: tuple[int, int]) -> str:
    """A process's name as it is, from ``pane_current_command`` as a tmux of ``version``
    made it (decoded already): the same text before 3.7, its sanitizing undone since."""
    if version < SANITIZED_SINCE or "\\" not in name:
        return name

    def byte(match: re.Match[bytes]) -> bytes:
        octal, letter = match.groups()
        return bytes([int(octal, 8)]) if octal is not None else _SANITIZED_C_STYLE[letter]

    raw = _SANITIZED_ESCAPE.sub(byte, name.encode("utf-8", "surrogateescape"))
    return raw.decode("utf-8", "surrogateescape")


@dataclass(frozen=True, init=False)
class Query:
    """A format for named fields, each printed encoded but those named in ``plain``
    (tmux's own digits and ids, never a user option), and the parser of its lines."""

    names: tuple[str, ...]
    format: str
    plain: frozenset[str]

    def __init__(self, names: Sequence[str], plain: frozenset[str] = frozenset()) -> None:
        kept = frozenset(name for name in plain if not name.startswith("@"))
        # frozen: set once, here
        object.__setattr__(self, "names", tuple(names))
        object.__setattr__(self, "plain", kept)
        object.__setattr__(
            self,
            "format",
            SEPARATOR.join(f"#{{{name}}}" if name in kept else field(name) for name in names),
        )

    def values(self, line: str) -> list[str]:
        """The decoded fields of one line, in the order of ``names``."""
        parts = line.split(SEPARATOR)
        if len(parts) != len(self.names):
            raise SchemuxError(
                f"tmux printed {len(parts)} fields where {len(self.names)} were asked for "
                f"({', '.join(self.names)})"
            )
        plain = self.plain
        return [
            part if name in plain else decode(part)
            for name, part in zip(self.names, parts, strict=True)
        ]


# The one exception to libtmux's table: format names that tmux has had since before 3.3
# and libtmux 0.62's Obj lacks (the generated table holds only what libtmux knows).
_ALSO_KNOWN = frozenset({"alternate_on"})
_KNOWN = FORMAT_NAMES | _ALSO_KNOWN
_TMUX_NAME = "tmux_name"


def option(name: str) -> Any:
    """A row field read from the user option ``name`` (``@...``)."""
    if not name.startswith("@"):
        raise TypeError(f"{name!r} is not a user option (those begin with '@')")
    return dataclasses.field(metadata={_TMUX_NAME: name})


def check_field(name: str) -> None:
    """Refuse a format name that the oldest tmux schemux serves cannot print: one that
    libtmux does not know as tmux's, or knows as newer (user options are the user's)."""
    if name.startswith("@"):
        return
    if name not in _KNOWN:
        raise TypeError(f"{name!r} is not a tmux format name libtmux knows")
    since = FIELD_VERSION.get(name)
    if since is not None and parse_version(since) > MINIMUM_VERSION:
        oldest = ".".join(map(str, MINIMUM_VERSION))
        raise TypeError(f"{name!r} needs tmux {since}; schemux serves tmux {oldest} and newer")


def _number(name: str, value: str) -> int | None:
    if value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise SchemuxError(f"tmux printed {value[:40]!r} for {name}, not a number") from None


def _integer(name: str, value: str) -> int:
    number = _number(name, value)
    if number is None:
        raise SchemuxError(f"tmux printed nothing for {name}, where a number was expected")
    return number


def _converter(name: str, kind: object) -> Callable[[str], object]:
    if kind is str:
        return lambda value: value
    if kind is bool:
        return lambda value: value == "1"
    if kind is int:
        return lambda value: _integer(name, value)
    if isinstance(kind, types.UnionType) and set(typing.get_args(kind)) == {int, type(None)}:
        return lambda value: _number(name, value)
    raise TypeError(f"row field {name} is of type {kind!r}: only str, int, int | None, bool")


@dataclass(frozen=True)
class _RowSpec:
    query: Query
    converters: tuple[Callable[[str], object], ...]


# the class attribute where ``tmux_row`` keeps a row class's own _RowSpec
ROW_SPEC = "_tmux_row_spec"
R = TypeVar("R")


@typing.dataclass_transform(frozen_default=True, field_specifiers=(option,))
def tmux_row(cls: type[R]) -> type[R]:
    """Make ``cls`` a frozen dataclass read from tmux (see the module's docstring), which
    holds its query and converters itself, made once here."""
    made = dataclass(frozen=True)(cls)
    hints = typing.get_type_hints(made)
    names, converters, plain = [], [], set()
    for item in dataclasses.fields(made):  # type: ignore[arg-type]
        name = item.metadata.get(_TMUX_NAME, item.name)
        check_field(name)
        names.append(name)
        kind = hints[item.name]
        converters.append(_converter(name, kind))
        if name in TMUX_IDS or kind is not str:  # digits (or nothing) and tmux's ids
            plain.add(name)
    setattr(made, ROW_SPEC, _RowSpec(Query(names, frozenset(plain)), tuple(converters)))
    return made


def _spec(row: type) -> _RowSpec:
    """``row``'s own spec: a subclass that is no ``tmux_row`` itself has none, as its
    fields are not its base's."""
    spec = vars(row).get(ROW_SPEC)
    if not isinstance(spec, _RowSpec):
        raise TypeError(f"{row.__name__} is not a @tmux_row class")
    return spec


def row_format(row: type) -> str:
    """The format that prints one ``row``, as ``-F`` and ``display-message -p`` take it."""
    return _spec(row).query.format


def parse_row(row: type[R], line: str) -> R:
    """One line printed by ``row_format(row)``, as a ``row``."""
    spec = _spec(row)
    values = spec.query.values(line)
    return row(*(convert(value) for convert, value in zip(spec.converters, values, strict=True)))


def parse_rows(row: type[R], lines: Sequence[str]) -> list[R]:
    return [parse_row(row, line) for line in lines]


def printed_nothing(row: type, line: str) -> bool:
    """Whether ``line`` is ``row`` with every field empty: what ``display-message``
    prints for a target that does not exist, rather than fail."""
    return line == SEPARATOR * (len(_spec(row).query.names) - 1)


class Runner(Protocol):
    """What runs a tmux command and answers its output lines (a TmuxServer, a Watcher)."""

    async def run(self, *args: str) -> list[str]: ...


async def query(tmux: Runner, row: type[R], command: str, *args: str) -> list[R]:
    """The rows that ``command`` (``list-panes``, ``list-sessions``, ...
    ``display-message``) prints with ``args``: one per object listed; for
    ``display-message``, one, or none when its target does not exist (tmux then prints
    every field empty rather than fail)."""
    if command == "display-message":
        lines = await tmux.run(command, "-p", *args, row_format(row))
        lines = [line for line in lines if not printed_nothing(row, line)]
    else:
        lines = await tmux.run(command, *args, "-F", row_format(row))
    return parse_rows(row, lines)


def readable(value: str) -> str:
    """``value`` for a result: bytes that were not UTF-8 (decoded with surrogateescape,
    as the engine does) become U+FFFD, which JSON can carry."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# an escape of tmux's args_escape (vis(3): VIS_OCTAL, VIS_CSTYLE, VIS_TAB, VIS_NL, and in
# double quotes VIS_DQ), a backslash always doubled: three octal digits, or one character
_QUOTED_ESCAPE = re.compile(rb"\\(?:([0-7]{3})|(.))", re.DOTALL)
_QUOTED_C_STYLE = MappingProxyType(
    {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"a": b"\a", b"b": b"\b", b"f": b"\f",
     b"v": b"\v", b"0": b"\0"}
)  # fmt: skip


def unquoted(text: str) -> str:
    """A value as tmux's ``args_escape`` printed it (a string option in a ``show-options``
    line: in double or single quotes where it needs them, every backslash doubled and
    every control escaped), as it is (pure). That line is the same on tmux 3.3a and on
    3.4+, whose print pass (vis(3) with VIS_NOSLASH) leaves text of printable characters
    alone; ``show-options -v`` prints the value through that pass only, where a backslash
    that was in the value cannot be told from an escape."""
    if text == "''":
        return ""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1]
    return unescaped(text)


def unescaped(text: str) -> str:
    """``text`` with tmux's backslash escapes undone (pure): three octal digits a byte, a
    C-style letter its control (``\\n``, ``\\t``, ...), any other character itself (``\\\\``,
    ``\\"``, ``\\$``). Where tmux doubles every backslash of a value (args_escape, the
    shell form of ``show-environment -s``), these are exact on every version: tmux 3.4+
    escapes controls so as it prints; 3.3a prints them raw."""
    raw = text.encode("utf-8", "surrogateescape")

    def byte(match: re.Match[bytes]) -> bytes:
        octal, character = match.groups()
        if octal is not None:
            return bytes([int(octal, 8)])
        return _QUOTED_C_STYLE.get(character, character)

    return _QUOTED_ESCAPE.sub(byte, raw).decode("utf-8", "surrogateescape")
