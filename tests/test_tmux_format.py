"""The format query helper: encoding and decoding (pure, any text) and tmux agreeing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemux.errors import SchemuxError
from schemux.tmux import ServerAddress, TmuxServer
from schemux.tmux_format import SEPARATOR, Query, decode, encode, field, readable
from tests.support import private_tmux_server

# any text, including the lone surrogates that stand for bytes that were not UTF-8
TEXT = st.text() | st.binary().map(lambda data: data.decode("utf-8", "surrogateescape"))
HOSTILE = ["", "!", "!21", "!!09", "%", "%25", "a\tb\nc\x1fd", "\t\n\x1f!", "#{pane_id}", "é😀"]


@given(TEXT)
def test_any_text_round_trips(value: str) -> None:
    encoded = encode(value)
    assert decode(encoded) == value
    assert not set(encoded) & {"\t", "\n", "\x1f"}


@given(st.lists(TEXT, min_size=1, max_size=6))
def test_a_row_of_any_fields_parses_back(values: list[str]) -> None:
    names = [f"f{index}" for index in range(len(values))]
    row = Query(names).parse(SEPARATOR.join(encode(value) for value in values))
    assert [row[name] for name in names] == values


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_round_trip(value: str) -> None:
    assert decode(encode(value)) == value


def test_a_row_with_the_wrong_number_of_fields_is_a_tool_error() -> None:
    with pytest.raises(SchemuxError, match="2 fields where 3 were asked for"):
        Query(["a", "b", "c"]).parse("x\ty")


def test_numbers_and_flags() -> None:
    row = Query(["n", "empty", "flag"]).parse("12\t\t1")
    assert row.number("n") == 12
    assert row.number("empty") is None
    assert row.flag("flag")
    with pytest.raises(SchemuxError, match="nothing for empty"):
        row.integer("empty")
    with pytest.raises(SchemuxError, match="not a number"):
        Query(["n"]).parse("x").integer("n")


def test_readable_replaces_undecodable_bytes() -> None:
    assert readable("a\udcffb") == "a\ufffdb"
    assert readable("é") == "é"


@pytest.fixture(scope="module")
def socket() -> Iterator[str]:
    with private_tmux_server("format") as socket_name:
        yield socket_name


@settings(max_examples=40, deadline=None)
@given(st.lists(TEXT.filter(lambda value: "\x00" not in value), min_size=1, max_size=3))
def test_tmux_encodes_as_encode_does(socket: str, values: list[str]) -> None:
    """Through the engine: user options set to any text come back exactly, from
    display-message (whose template tmux passes through strftime) and list-panes."""

    async def read() -> tuple[list[str], list[str]]:
        server = TmuxServer(ServerAddress(socket_name=socket))
        try:
            for index, value in enumerate(values):
                await server.run("set-option", "-g", f"@v{index}", value)
            query = Query([f"@v{index}" for index in range(len(values))])
            shown = await server.run("display-message", "-p", query.format)
            listed = await server.run("list-panes", "-t", "=keepalive:", "-F", query.format)
        finally:
            await server.close()
        row, listed_row = query.parse(shown[0]), query.parse(listed[0])
        return [row[name] for name in query.names], [listed_row[name] for name in query.names]

    shown, listed = asyncio.run(read())
    assert shown == values
    assert listed == values


def test_field_names_the_modifier_chain() -> None:
    assert field("pane_id") == "#{s/!/!21/;s/\t/!09/;s/\n/!0A/;s/\x1f/!1F/:pane_id}"
