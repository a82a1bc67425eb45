"""The jsonschema validators of the tool contracts.

``contract_validator``: the validator of a tool's schema, of the dialect its own
``$schema`` names (2020-12 when it names none, as the MCP specification and the SDK's
client read it; codegen refuses a ``$schema`` jsonschema does not know), checking
formats, with the two extensions below.

``ecma_patterns``: JSON Schema patterns are ECMA-262 regular expressions, but jsonschema
matches them with Python's ``re``, which differs where it matters for identifiers: ``$``
also matches before a final newline (so ``^%\\d+$`` took ``"%0\\n"``), and ``\\d``, ``\\w``
and ``\\b`` take any Unicode digit or letter (so ``"%٣"`` passed as a pane id). The
validators match ``pattern``, ``patternProperties`` (and the property names
``additionalProperties`` leaves to it) with an ECMA-262 engine (regress, Unicode mode,
as ajv and the JSON Schema test suite read patterns). ``unevaluatedProperties`` still
matches patternProperties names with ``re``; no served schema combines the two.

``fast_arrays``: jsonschema checks ``items`` one element at a time through its whole
machinery (about 4 µs an element), which made checking a 1,000-row screen capture cost
more than taking it. Result validators first check an array whose items must be strings
in one pass; only when one is not a string does jsonschema's own ``items`` run, so the
errors reported are exactly its own.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import regress
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

_STRINGS = MappingProxyType({"type": "string"})


@functools.cache
def ecma_regex(pattern: str) -> regress.Regex:
    """``pattern`` compiled as an ECMA-262 regular expression with the ``u`` flag."""
    return regress.Regex(pattern, "u")


def ecma_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text``, as ECMA-262's ``RegExp.test``.

    A lone surrogate (which JSON's ``\\ud800`` escape can produce) is no Unicode scalar
    value and cannot reach the engine; it is matched as U+FFFD, a character no pattern
    meant for text names.
    """
    try:
        return ecma_regex(pattern).find(text) is not None
    except UnicodeEncodeError:
        scalar = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return ecma_regex(pattern).find(scalar) is not None


def _pattern(
    validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not ecma_search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Validator, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if ecma_search(pattern, name):
                # descend is on every jsonschema validator class, not on its Protocol
                descend = validator.descend  # type: ignore[attr-defined]
                yield from descend(value, subschema, path=name, schema_path=pattern)


@functools.cache
def ecma_patterns(cls: type[Validator]) -> type[Validator]:
    """``cls`` matching patterns as ECMA-262 does; everything else is ``cls``'s own."""
    original_additional = cls.VALIDATORS["additionalProperties"]

    def additional_properties(
        validator: Validator, allowed: Any, instance: Any, schema: Mapping[str, Any]
    ) -> Iterator[ValidationError]:
        if "patternProperties" not in schema or not validator.is_type(instance, "object"):
            yield from original_additional(validator, allowed, instance, schema)
            return
        # jsonschema would find the names patternProperties covers with ``re``; hand it
        # only the properties no ECMA-262 pattern matches, and no patterns to match.
        patterns = list(schema["patternProperties"])
        uncovered = {
            name: value
            for name, value in instance.items()
            if not any(ecma_search(pattern, name) for pattern in patterns)
        }
        plain = {key: value for key, value in schema.items() if key != "patternProperties"}
        yield from original_additional(validator, allowed, uncovered, plain)

    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": additional_properties,
    }
    extended: type[Validator] = validators.extend(cls, keywords)  # type: ignore[no-untyped-call]
    extended.__name__ = extended.__qualname__ = cls.__name__  # the same dialect's validator
    return extended


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


def contract_validator(schema: Mapping[str, Any], *, results: bool = False) -> Validator:
    """A validator of ``schema`` by its own ``$schema``; ``results`` adds the fast path
    for arrays of strings (results carry screens of rows; arguments are small)."""
    cls = ecma_patterns(validators.validator_for(schema, default=Draft202012Validator))
    if results:
        cls = fast_arrays(cls)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)
