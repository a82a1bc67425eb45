"""The format query helper: encoding and decoding (pure, any text) and tmux agreeing."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemux.errors import SchemuxError
from schemux.tmux.format import (
    SEPARATOR,
    Query,
    check_field,
    decode,
    encode,
    field,
    option,
    parse_row,
    query,
    readable,
    row_format,
    tmux_row,
    unquoted,
    unsanitized,
)
from schemux.tmux.server import ServerAddress, TmuxServer
from tests.support import private_tmux_server

# any text, including the lone surrogates that stand for bytes that were not UTF-8
TEXT = st.text() | st.binary().map(lambda data: data.decode("utf-8", "surrogateescape"))
HOSTILE = ["", "!", "!21", "!!09", "%", "%25", "a\tb\nc\x1fd", "\t\n\x1f!", "#{pane_id}", "é😀"]
HOSTILE += ["\\", "\\001", "\\$HOME", "$HOME", "\x01\x7f\udcff", "!5C", "\\\\n"]


@given(TEXT)
def test_any_text_round_trips(value: str) -> None:
    encoded = encode(value)
    assert decode(encoded) == value
    assert not set(encoded) & {"\t", "\n", "\x1f", "\\"}


@given(st.lists(TEXT, min_size=1, max_size=6))
def test_a_row_of_any_fields_parses_back(values: list[str]) -> None:
    names = [f"f{index}" for index in range(len(values))]
    row = Query(names).values(SEPARATOR.join(encode(value) for value in values))
    assert row == values


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_round_trip(value: str) -> None:
    assert decode(encode(value)) == value


# What tmux 3.4 and 3.5a print for a field of each value (measured: ``display -p`` of
# ``field("@v")``); 3.3a and 3.6 and later print ``encode(value)`` itself.
PRINTED_BY_3_4_AND_3_5 = [
    ("a\x01b", "a\\001b", "a\\001b"),
    ("\x1e", "\\036", "\\036"),
    ("\x7f\udcff", "\\177\\377", "\\177\\377"),  # DEL, a byte that is not UTF-8
    ("\x07\x08\x0b\x0c\r", "\\a\\b\\v\\f\\r", "\\a\\b\\v\\f\\r"),
    ("$HOME ${x} $_ $1", "\\$HOME \\${x} \\$_ $1", "$HOME ${x} $_ $1"),
    ("\\001", "!5C001", "!5C001"),  # a backslash of the value is never taken for tmux's
    ("\\$HOME!5C", "!5C\\$HOME!215C", "!5C$HOME!215C"),
    ("é\udcc3(", "é\\303(", "é\\303("),  # a lone lead byte, then ASCII
]


@pytest.mark.parametrize(("value", "by_3_4", "by_3_5"), PRINTED_BY_3_4_AND_3_5)
def test_what_tmux_3_4_and_3_5_print_decodes_exactly(value: str, by_3_4: str, by_3_5: str) -> None:
    assert decode(by_3_4) == value
    assert decode(by_3_5) == value
    assert decode(encode(value)) == value


@pytest.mark.parametrize("printed", ["a\\q", "\\01", "x\\", "\\\\"])
def test_an_escape_tmux_never_prints_is_an_error_not_a_guess(printed: str) -> None:
    with pytest.raises(SchemuxError, match="escape schemux cannot read"):
        decode(printed)


# what tmux 3.7c prints (decoded) as pane_current_command for a process of each name
# (measured; a name holding a control byte or DEL, or not UTF-8, it prints as empty)
SANITIZED_BY_3_7 = [
    ("sleep", "sleep"),
    ("x\\y\\012é$HOME", "x\\\\y\\\\012é$HOME"),
]


@pytest.mark.parametrize(("name", "printed"), SANITIZED_BY_3_7)
def test_a_process_name_sanitized_by_tmux_3_7_is_undone_there_only(name: str, printed: str) -> None:
    assert unsanitized(printed, (3, 7)) == name
    assert unsanitized(printed, (4, 0)) == name
    assert unsanitized(name, (3, 6)) == name  # before 3.7 a backslash is the name's
    assert unsanitized(printed, (3, 5)) == printed


def test_a_row_with_the_wrong_number_of_fields_is_a_tool_error() -> None:
    with pytest.raises(SchemuxError, match="2 fields where 3 were asked for"):
        Query(["a", "b", "c"]).values("x\ty")


@tmux_row
class Numbers:
    history_size: int
    pane_dead_status: int | None
    pane_dead: bool
    window_name: str
    mark: bool = option("@mark")


def test_typed_fields() -> None:
    row = parse_row(Numbers, "12\t\t1\ta!09b\t0")
    assert row == Numbers(12, None, True, "a\tb", False)
    with pytest.raises(SchemuxError, match="nothing for history_size"):
        parse_row(Numbers, "\t\t1\tw\t1")
    with pytest.raises(SchemuxError, match="not a number"):
        parse_row(Numbers, "x\t\t1\tw\t1")


def test_rows_name_only_fields_every_served_tmux_has() -> None:
    """libtmux's knowledge of tmux's formats: a name tmux does not have, or has only
    since a newer tmux than schemux serves (pane_flags: 3.7), is refused when the row is
    defined; user options are the user's."""
    check_field("pane_dead_signal")  # since 3.3
    check_field("@anything")
    check_field("alternate_on")  # tmux's since before 3.3; libtmux 0.62's Obj lacks it
    with pytest.raises(TypeError, match="not a tmux format name"):
        check_field("pane_nonsense")
    with pytest.raises(TypeError, match=r"needs tmux 3\.7"):

        @tmux_row
        class Newer:
            pane_flags: str

    with pytest.raises(TypeError, match="only str, int"):

        @tmux_row
        class Floating:
            pane_width: float

    with pytest.raises(TypeError, match="not a user option"):
        option("pane_id")


def test_readable_replaces_undecodable_bytes() -> None:
    assert readable("a\udcffb") == "a\ufffdb"
    assert readable("é") == "é"


@pytest.fixture(scope="module")
def socket() -> Iterator[str]:
    with private_tmux_server("format") as socket_name:
        yield socket_name


@pytest.mark.long
@settings(max_examples=40, deadline=None)
@given(st.lists(TEXT.filter(lambda value: "\x00" not in value), min_size=1, max_size=3))
def test_tmux_encodes_as_encode_does(socket: str, values: list[str]) -> None:
    """Through the engine: user options set to any text come back exactly, from
    display-message (whose template tmux passes through strftime) and list-panes, on
    every tmux version (run it against each with .ci/against-tmux)."""

    async def read() -> tuple[list[str], list[str]]:
        server = TmuxServer(ServerAddress(socket_name=socket))
        try:
            for index, value in enumerate(values):
                await server.run("set-option", "-g", f"@v{index}", value)
            fields = Query([f"@v{index}" for index in range(len(values))])
            shown = await server.run("display-message", "-p", fields.format)
            listed = await server.run("list-panes", "-t", "=keepalive:", "-F", fields.format)
        finally:
            await server.close()
        return fields.values(shown[0]), fields.values(listed[0])

    shown, listed = asyncio.run(read())
    assert shown == values
    assert listed == values


def test_field_names_the_modifier_chain() -> None:
    assert field("pane_id") == "#{s/!/!21/;s/\t/!09/;s/\n/!0A/;s/\x1f/!1F/;s/[\\]/!5C/:pane_id}"


@tmux_row
class Listed:
    session_name: str
    pane_id: str
    pane_pid: int | None


def test_query_lists_rows_and_reads_a_missing_target_as_none(socket: str) -> None:
    """``query`` over the engine: one row per pane listed, and no row (not a row of empty
    fields) for a display-message target that does not exist."""

    async def read() -> tuple[list[Listed], list[Listed], list[Listed]]:
        server = TmuxServer(ServerAddress(socket_name=socket))
        try:
            listed = await query(server, Listed, "list-panes", "-t", "=keepalive:")
            shown = await query(server, Listed, "display-message", "-t", listed[0].pane_id)
            missing = await query(server, Listed, "display-message", "-t", "@999")
        finally:
            await server.close()
        return listed, shown, missing

    listed, shown, missing = asyncio.run(read())
    assert [row.session_name for row in listed] == ["keepalive"]
    assert listed[0].pane_id.startswith("%")
    assert listed[0].pane_pid is not None
    assert shown == listed
    assert missing == []


def test_only_tmux_made_digits_and_ids_are_printed_plain() -> None:
    """Encoding a field costs tmux five regular expressions: a row's numbers, flags and
    tmux's ids come plain (nothing in them needs it); text and user options, whatever a
    row types them as, encoded (failed before: every field was encoded)."""
    numbers = ["#{history_size}", "#{pane_dead_status}", "#{pane_dead}"]
    assert row_format(Numbers) == SEPARATOR.join([*numbers, field("window_name"), field("@mark")])
    listed = [field("session_name"), "#{pane_id}", "#{pane_pid}"]
    assert row_format(Listed) == SEPARATOR.join(listed)
    assert Query(["@n", "pane_id"], plain=frozenset({"@n", "pane_id"})).format == SEPARATOR.join(
        [field("@n"), "#{pane_id}"]
    )


@tmux_row
class Marked:
    pane_id: str
    mark: bool = option("@mark")
    pane_pid: int | None = 0


@pytest.mark.parametrize("forged", ["1\t%9\t42", "1\n%9\t1\t42", "1!09%9"])
def test_a_user_option_typed_as_a_number_cannot_forge_the_fields_after_it(
    socket: str, forged: str
) -> None:
    """A program in a pane can set any user option: one a row reads as a flag is still
    encoded, so a tab or newline in it stays in it."""

    async def read() -> list[Marked]:
        server = TmuxServer(ServerAddress(socket_name=socket))
        try:
            await server.run("set-option", "-p", "-t", "=keepalive:", "@mark", forged)
            return await query(server, Marked, "list-panes", "-t", "=keepalive:")
        finally:
            await server.close()

    (row,) = asyncio.run(read())
    assert row.mark is False  # the whole value, which is not "1"
    assert row.pane_id.startswith("%")
    assert row.pane_id != "%9"
    assert row.pane_pid not in (None, 42)


def test_schemux_starts_without_libtmux() -> None:
    """libtmux's table of formats is generated into schemux (generated/tmux_fields.py):
    importing it at run time cost tens of milliseconds of every cold start."""
    probe = "import sys, schemux.cli.main, schemux.tmux.format; print('libtmux' in sys.modules)"
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert completed.stdout == "False\n"


@pytest.mark.parametrize(
    ("printed", "value"),
    [
        ("''", ""),
        ("plain", "plain"),
        ("\\#", "#"),
        ("\\~/x", "~/x"),
        ('"a\\\\033b \\033[31m \\"q\\" \'s\' \\\\ c\\nd\\t\\$HOME #{x}"',
         "a\\033b \x1b[31m \"q\" 's' \\ c\nd\t$HOME #{x}"),
        ("'say \"hi\"'", 'say "hi"'),
        ('"\\~ x"', "~ x"),
    ],
)  # fmt: skip
def test_a_value_as_tmux_quoted_it_is_read_back_exactly(printed: str, value: str) -> None:
    """The quoting of a string option in a ``show-options`` line (tmux's args_escape, the
    same on 3.3a and 3.5a, measured): a backslash in the value is doubled, so a
    backslash followed by digits is an escape only when tmux made it one."""
    assert unquoted(printed) == value
