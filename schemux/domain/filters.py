"""The ``filters`` of the list tools (list_sessions, list_windows, list_panes), in the
manner of libtmux's QueryList: ``{"FIELD__OPERATOR": "text"}``, or the same object as a
JSON string (some clients send objects so).

A field is one of the listed items' fields; its text is what the result shows (``true``
or ``false`` for a boolean, a number in decimal), and a field that is null matches
nothing. A key without an operator compares exactly. Every condition must hold.
Nothing of a filter reaches tmux: the items are listed, then filtered here.

A caller's regular expression is held to Python's syntax and matched by the ``regex``
module in a worker thread, within ``MATCH_SECONDS`` for the whole listing (as
``schemux.domain.text_wait`` matches pane rows): one that backtracks catastrophically
is refused, naming its key, and never stalls the server's other calls.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

import regex as _regex

from schemux.errors import SchemuxError, preview

MATCH_SECONDS = 1.0
MAX_CONDITIONS = 100
MAX_VALUE_CHARACTERS = 10_000

_OPERATORS: Mapping[str, Callable[[str, str], bool]] = MappingProxyType(
    {
        "exact": lambda text, value: text == value,
        "eq": lambda text, value: text == value,
        "iexact": lambda text, value: text.casefold() == value.casefold(),
        "contains": lambda text, value: value in text,
        "icontains": lambda text, value: value.casefold() in text.casefold(),
        "startswith": lambda text, value: text.startswith(value),
        "istartswith": lambda text, value: text.casefold().startswith(value.casefold()),
        "endswith": lambda text, value: text.endswith(value),
        "iendswith": lambda text, value: text.casefold().endswith(value.casefold()),
        "in": lambda text, value: text in value.split(","),
        "nin": lambda text, value: text not in value.split(","),
    }
)
_REGEX_OPERATORS = ("regex", "iregex")
OPERATORS = (*_OPERATORS, *_REGEX_OPERATORS)
Item = TypeVar("Item")


@dataclass(frozen=True)
class Condition:
    """One key of the filters: the field, how it is compared, with what."""

    key: str
    field: str
    operator: str
    value: str
    pattern: _regex.Pattern[str] | None = None

    def holds(self, text: str | None, until: float | None = None) -> bool:
        """Whether the field's ``text`` meets the condition; a regular expression past
        ``until`` (``time.monotonic``) raises TimeoutError."""
        if text is None:
            return False
        if self.pattern is None:
            return _OPERATORS[self.operator](text, self.value)
        limit = None if until is None else max(0.001, until - time.monotonic())
        return self.pattern.search(text, timeout=limit) is not None


def parse_filters(raw: Mapping[str, str] | str | None, fields: Sequence[str]) -> list[Condition]:
    """The conditions ``raw`` asks for over items with ``fields``; SchemuxError naming
    the key (or the argument) when one cannot be read."""
    if raw is None or raw == "":
        return []
    given = _as_object(raw) if isinstance(raw, str) else raw
    if len(given) > MAX_CONDITIONS:
        raise SchemuxError(
            f"filters has {len(given)} keys: at most {MAX_CONDITIONS} are taken",
            suggestion="pass fewer conditions",
        )
    return [_condition(key, value, fields) for key, value in given.items()]


def _as_object(raw: str) -> dict[str, str]:
    try:
        given = json.loads(raw)
    except ValueError as error:
        raise SchemuxError(
            f"filters {preview(raw)} is not JSON: {error}",
            suggestion='pass an object, such as {"session_name__contains": "dev"}',
        ) from None
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise SchemuxError(
            f"filters {preview(raw)} is not a JSON object of strings",
            suggestion='pass an object, such as {"session_name__contains": "dev"}',
        )
    return given


def _condition(key: str, value: str, fields: Sequence[str]) -> Condition:
    field, separator, operator = key.rpartition("__")
    if not separator:
        field, operator = key, "exact"
    where = f"filters[{preview(key)}]"
    if field not in fields:
        raise SchemuxError(
            f"{where}: {preview(field)} is not a field of the listed items",
            suggestion=f"filter on one of {', '.join(fields)}",
        )
    if operator not in OPERATORS:
        raise SchemuxError(
            f"{where}: {preview(operator)} is not an operator",
            suggestion=f"use one of {', '.join(OPERATORS)} (none: exact)",
        )
    if len(value) > MAX_VALUE_CHARACTERS:
        raise SchemuxError(
            f"{where} is {len(value)} characters long: at most {MAX_VALUE_CHARACTERS} are taken",
            suggestion="compare with a shorter text",
        )
    if operator not in _REGEX_OPERATORS:
        return Condition(key, field, operator, value)
    try:
        re.compile(value)  # Python's syntax, and its messages
        pattern = _regex.compile(value, _regex.IGNORECASE if operator == "iregex" else 0)
    except (re.error, _regex.error) as error:
        raise SchemuxError(
            f"{where}: {preview(value)} is not a valid regular expression: {error}",
            suggestion="fix the expression, or compare with contains or exact",
        ) from None
    return Condition(key, field, operator, value, pattern)


def field_text(value: Any) -> str | None:
    """A field's value as a filter reads it (see the module's docstring)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _matching(
    items: Sequence[Item], conditions: Sequence[Condition], until: float | None
) -> list[Item]:
    return [
        item
        for item in items
        if all(
            condition.holds(field_text(getattr(item, condition.field)), until)
            for condition in conditions
        )
    ]


def conditions_for(kind: type, raw: Mapping[str, str] | str | None) -> list[Condition]:
    """The conditions ``raw`` asks for over items of the dataclass ``kind``: checked
    before anything is listed."""
    return parse_filters(raw, [field.name for field in dataclasses.fields(kind)])


async def meeting(items: Sequence[Item], conditions: Sequence[Condition]) -> list[Item]:
    """The ``items`` that meet every one of ``conditions``."""
    if not any(condition.pattern is not None for condition in conditions):
        return _matching(items, conditions, None)
    until = time.monotonic() + MATCH_SECONDS
    try:
        return await asyncio.to_thread(_matching, items, conditions, until)
    except TimeoutError:
        slow = [condition.key for condition in conditions if condition.pattern is not None]
        raise SchemuxError(
            f"filters {', '.join(map(preview, slow))} took more than {MATCH_SECONDS:g} s to "
            "match: an expression backtracks catastrophically",
            suggestion="simplify it (no nested or overlapping repetition such as (a|aa)+)",
        ) from None
