"""tests.schema_checks: a schema text that passed its metaschema is not checked again; one
that fails, fails every time."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator, SchemaError

from tests.schema_checks import remembering


def test_a_passed_schema_text_is_checked_once() -> None:
    checked: list[Any] = []
    check = remembering(checked.append)
    check({"type": "object", "required": ["a"]})
    check({"required": ["a"], "type": "object"})  # the same text, keys in another order
    check({"type": "string"})
    assert checked == [{"type": "object", "required": ["a"]}, {"type": "string"}]


def test_a_failing_schema_fails_every_time() -> None:
    # the suite's own validator classes remember (tests/suite_rules.py)
    assert getattr(Draft202012Validator.check_schema, "remembers", False)
    for _ in range(2):
        with pytest.raises(SchemaError):
            Draft202012Validator.check_schema({"type": 5})
    Draft202012Validator.check_schema({"type": "integer"})
    Draft202012Validator.check_schema({"type": "integer"})


def test_a_check_with_a_format_checker_of_its_own_is_never_skipped() -> None:
    checked: list[Any] = []
    check = remembering(lambda schema, *args: checked.append((schema, args)))
    check({"type": "string"}, "checker")
    check({"type": "string"}, "checker")
    assert len(checked) == 2
