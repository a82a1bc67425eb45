"""Unit tests of the pure pieces of screen reading: limits, encodings, splices,
generations, and the result validators' fast path for arrays of strings."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from schemux.serving.validation import fast_arrays
from schemux.text.screen import encode_rows, limit_rows, splice_between
from schemux.tmux.references import ServerIdentity


def test_limits_keep_whole_rows_from_the_bottom() -> None:
    rows = ["one\n", "two\n", "\u4e2d\n", "\n"]
    assert limit_rows(rows, 200, 65536) == (rows, False)
    assert limit_rows(rows, 2, 65536) == (["\u4e2d\n", "\n"], True)
    assert limit_rows(rows, 200, 5) == (["\u4e2d\n", "\n"], True)  # 4 + 1 bytes
    assert limit_rows(rows, 200, 4) == (["\n"], True)
    assert limit_rows(["long row\n"], 200, 1) == ([], True)


def test_valid_utf8_is_text_and_anything_else_makes_every_row_base64() -> None:
    assert encode_rows(["h\u00e9\n", "\n"]).encoding == "utf-8"
    assert encode_rows(["h\u00e9\n", "\n"]).bytes == 5
    bad = b"\xff\xfeok\n".decode("utf-8", "surrogateescape")
    encoded = encode_rows(["fine\n", bad])
    assert encoded.encoding == "base64"
    assert [base64.b64decode(row) for row in encoded.rows] == [b"fine\n", b"\xff\xfeok\n"]
    assert encoded.bytes == 10


@given(
    old=st.lists(st.sampled_from(["a\n", "b\n", "\n", "c"]), max_size=12),
    new=st.lists(st.sampled_from(["a\n", "b\n", "\n", "c"]), max_size=12),
)
def test_a_splice_turns_the_old_rows_into_the_new(old: list[str], new: list[str]) -> None:
    splice = splice_between(old, new)
    assert old[: splice.start] + splice.rows + old[splice.start + splice.delete :] == new
    assert 0 <= splice.start <= len(old)
    assert splice.start + splice.delete <= len(old)


def test_a_splice_is_as_small_as_one_splice_can_be() -> None:
    assert splice_between(["a", "b", "c"], ["a", "B", "c"]).__dict__ == {
        "start": 1,
        "delete": 1,
        "rows": ["B"],
    }
    assert splice_between(["a", "b"], ["a", "b"]).__dict__ == {"start": 2, "delete": 0, "rows": []}
    assert splice_between(["a", "a"], ["a"]).__dict__ == {"start": 1, "delete": 1, "rows": []}


def test_generations_bind_to_the_server_instance_and_the_id() -> None:
    server = ServerIdentity(100, 1_700_000_000, "/tmp/tmux-1/default")
    generation = server.generation("%0")
    assert len(generation) == 32
    assert generation == ServerIdentity(100, 1_700_000_000, "/tmp/tmux-1/default").generation("%0")
    assert generation != server.generation("%1")
    assert generation != ServerIdentity(101, 1_700_000_000, "/tmp/tmux-1/default").generation("%0")
    assert generation != ServerIdentity(100, 1_700_000_001, "/tmp/tmux-1/default").generation("%0")


def test_fast_arrays_reports_exactly_what_jsonschema_reports() -> None:
    schema = {
        "type": "object",
        "properties": {"rows": {"type": "array", "items": {"type": "string"}}},
    }
    plain, fast = Draft202012Validator(schema), fast_arrays(Draft202012Validator)(schema)
    assert fast.is_valid({"rows": ["a"] * 1000})
    bad_results: list[dict[str, Any]] = [
        {"rows": ["a", 1, "b", None]},
        {"rows": "not a list"},
        {"rows": [["a"]]},
    ]
    for bad in bad_results:
        assert [e.message for e in fast.iter_errors(bad)] == [
            e.message for e in plain.iter_errors(bad)
        ]
        assert not fast.is_valid(bad)
