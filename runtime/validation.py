"""Result validators that stay fast on long arrays of strings.

jsonschema checks ``items`` one element at a time through its whole machinery (about
4 µs an element), which made checking a 1,000-row screen capture cost more than taking
it. The validators the generated bindings use (``fast_arrays``) first check an array
whose items must be strings in one pass; only when one is not a string does jsonschema's
own ``items`` run, so the errors reported are exactly its own.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

_STRINGS = {"type": "string"}


@functools.cache
def fast_arrays(cls: type[Validator]) -> type[Validator]:
    """``cls`` with the fast path for arrays of strings."""
    original = cls.VALIDATORS["items"]

    def items(
        validator: Validator, subschema: Any, instance: Any, schema: Mapping[str, Any]
    ) -> Iterator[ValidationError]:
        strings = subschema == _STRINGS and isinstance(instance, list)
        if strings and all(isinstance(item, str) for item in instance):
            return
        yield from original(validator, subschema, instance, schema)

    extended: type[Validator] = validators.extend(cls, {"items": items})  # type: ignore[no-untyped-call]
    # the same dialect's validator, and named so
    extended.__name__ = extended.__qualname__ = cls.__name__
    return extended
