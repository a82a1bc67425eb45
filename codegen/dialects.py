"""Which JSON Schema dialect a schema is written in, as its own ``$schema`` says."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for


class UnknownDialectError(ValueError):
    """The schema names a ``$schema`` that jsonschema does not know."""


def validator_class(schema: Mapping[str, Any]) -> type[Validator]:
    """The validator class for ``schema``.

    A schema without ``$schema`` is 2020-12, as the MCP specification and the mcp SDK's
    client assume. An unknown ``$schema`` is an error rather than a silent fallback.
    """
    with warnings.catch_warnings():
        # jsonschema only warns (DeprecationWarning) about an unknown $schema, and only
        # when no default is given; turn that warning into our error.
        warnings.simplefilter("error", DeprecationWarning)
        try:
            validator_for(schema)
        except DeprecationWarning:
            raise UnknownDialectError(f"unknown $schema {schema['$schema']!r}") from None
    return validator_for(schema, default=Draft202012Validator)
