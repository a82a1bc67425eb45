"""Each schema checked against its metaschema once per test process.

The SDK's client checks a tool's outputSchema against its metaschema (``check_schema``)
the first time a session calls that tool, before it validates the result: 11 ms for
one of schemux's output schemas, paid again by every new session, and the suite opens
thousands (``test_boundary`` alone spent 2.9 s of its 34 there). The check is a function
of the schema's text alone, so a text that passed once passes again: it is remembered,
and only a schema that passes is. Every result is still validated against its schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
)


def remember_passed_checks() -> None:
    """Put the remembering check in place on every draft's validator class."""
    for cls in (
        Draft4Validator,
        Draft6Validator,
        Draft7Validator,
        Draft201909Validator,
        Draft202012Validator,
    ):
        if not getattr(cls.check_schema, "remembers", False):
            cls.check_schema = staticmethod(remembering(cls.check_schema))  # type: ignore[method-assign]


def remembering(check: Callable[..., None]) -> Callable[..., None]:
    """``check`` (a class's bound ``check_schema``), skipped for a schema text it passed."""
    passed: set[str] = set()

    def check_schema(schema: Any, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:  # a format checker of the caller's own: its own verdict
            check(schema, *args, **kwargs)
            return
        try:
            text = json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError):  # not JSON: nothing to remember it by
            check(schema)
            return
        if text not in passed:
            check(schema)  # raises SchemaError for a schema that fails, every time
            passed.add(text)

    check_schema.remembers = True  # type: ignore[attr-defined]
    return check_schema
