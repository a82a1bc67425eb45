"""The text of a terminal byte stream: examples of each rule, and properties.

``reference_text`` is the rules written plainly, a byte at a time; the fast filter must
agree with it, and with itself however the stream is cut into chunks.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemux.text.terminal import STRING_LIMIT, TextFilter, terminal_text

ESC, CAN, SUB, BEL = 0x1B, 0x18, 0x1A, 0x07


def reference_text(data: bytes, string_limit: int = STRING_LIMIT) -> str:
    """The rules of ``schemux.text.terminal``, one byte at a time (slow, plain)."""
    # 1. Escape sequences and controls out; VT and FF are LFs.
    kept = bytearray()
    state, count = "ground", 0
    i = 0
    while i < len(data):
        b = data[i]
        if state == "ground":
            if b == ESC:
                state = "esc"
            elif b in (0x0B, 0x0C):
                kept.append(0x0A)
            elif (b >= 0x20 and b != 0x7F) or b in (0x09, 0x0A, 0x0D):
                kept.append(b)
            i += 1
            continue
        if state == "esc":
            if b == ord("["):
                state = "csi"
            elif b == ord("]"):
                state, count = "osc", 0
            elif b in b"PX^_":
                state, count = "string", 0
            elif 0x20 <= b <= 0x2F:
                state = "intermediates"
            elif 0x30 <= b <= 0x7E:
                state = "ground"
            else:
                state = "ground"
                continue  # the byte again, outside any sequence
        elif state == "intermediates":
            if 0x30 <= b <= 0x7E:
                state = "ground"
            elif not 0x20 <= b <= 0x2F:
                state = "ground"
                continue
        elif state == "csi":
            if 0x40 <= b <= 0x7E:
                state = "ground"
            elif not 0x20 <= b <= 0x3F:
                state = "ground"
                continue
        else:  # osc, string
            ends = (BEL, CAN, SUB, ESC) if state == "osc" else (CAN, SUB, ESC)
            if count == string_limit or b in ends:
                state = "ground"
                continue
            count += 1
        i += 1
    # 2. Line breaks: CR+ LF?, and LF.
    lines = bytearray()
    i = 0
    while i < len(kept):
        if kept[i] == 0x0D:
            while i < len(kept) and kept[i] == 0x0D:
                i += 1
            if i < len(kept) and kept[i] == 0x0A:
                i += 1
            lines.append(0x0A)
        else:
            lines.append(kept[i])
            i += 1
    # 3. UTF-8, then C1 controls out.
    text = lines.decode("utf-8", errors="replace")
    return "".join(c for c in text if not "\x80" <= c <= "\x9f")


def chunked(data: bytes, cuts: list[int], string_limit: int = STRING_LIMIT) -> str:
    """The text of ``data`` fed to one filter in pieces, cut at ``cuts``."""
    text_filter = TextFilter(string_limit=string_limit)
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    pieces = [text_filter.feed(data[a:b]) for a, b in itertools.pairwise(bounds)]
    return "".join(pieces) + text_filter.finish()


def every_split(data: bytes, string_limit: int = STRING_LIMIT) -> set[str]:
    """The texts of ``data`` cut once at every position, and a byte at a time."""
    texts = {chunked(data, [cut], string_limit) for cut in range(len(data) + 1)}
    texts.add(chunked(data, list(range(len(data))), string_limit))
    return texts


EXAMPLES = [
    # colours and attributes
    (b"\x1b[31mred\x1b[0m plain", "red plain"),
    (b"\x1b[1;38;5;208mbold\x1b[m", "bold"),
    (b"\x1b[38:2::255:0:0mrgb\x1b[39m", "rgb"),
    # cursor moves, erasing, private modes
    (b"a\x1b[2;5Hb\x1b[Kc\x1b[2Jd\x1b[?25l\x1b[?1049he\x1b[>0q", "abcde"),
    (b"\x1b[ qcursor shape", "cursor shape"),
    # OSC: title ended by BEL and by ST, hyperlink
    (b"\x1b]0;my title\x07after", "after"),
    (b"\x1b]2;my title\x1b\\after", "after"),
    (b"\x1b]8;;https://x.org\x1b\\link\x1b]8;;\x1b\\ text", "link text"),
    (b"\x1b]0;ti\r\ntle\x07x", "x"),  # controls inside a string are payload
    (b"\x1b]0;title\x1b[1mbold", "bold"),  # another ESC ends the string
    (b"\x1b]0;title\x18x", "x"),  # CAN ends it
    # DCS, APC, PM, SOS: BEL is payload there
    (b"\x1bPq#0;2;0;0;0#0~~@@\x07vv\x1b\\after", "after"),
    (b"\x1b_Gf=100;AAAA\x1b\\x\x1b^pm\x1b\\y\x1bXsos\x1b\\z", "xyz"),
    # other escapes: charset designations, keypad, save/restore, index
    (b"\x1b(Babc\x1b)0\x1b(0lqk\x1b(B", "abclqk"),
    (b"\x1b([x\x1b ]y\x1b#Pz\x1b(_w", "xyzw"),  # [ ] P _ as final bytes
    (b"\x1b=\x1b>\x1b7x\x1b8\x1bM\x1bcy\x1b#8", "xy"),
    # broken sequences end early
    (b"\x1b\x1b[31mx", "x"),
    (b"a\x1b\rb", "a\nb"),
    (b"\x1b[3\x071mx", "1mx"),
    (b"\x1b(\x01B", "B"),
    (b"\x1b\x80", "\ufffd"),
    # line endings
    (b"a\r\nb\r\n", "a\nb\n"),
    (b"a\r\r\nb\r\r\n", "a\nb\n"),
    (b"a\nb\n", "a\nb\n"),
    (b"a\n\nb", "a\n\nb"),
    (b"a\r\n\r\nb", "a\n\nb"),
    (b"10%\r20%\r30%\r\n", "10%\n20%\n30%\n"),
    (b"a\r\rb", "a\nb"),
    (b"a\r", "a\n"),
    # a run of CRs of any length, with or without its LF, is one break
    (b"a\r\r\rb\r\r\r\r\r\nc", "a\nb\nc"),
    (b"a" + b"\r" * 1000 + b"\nb" + b"\r" * 777 + b"c", "a\nb\nc"),
    (b"a\r\r\n\r\r\r\nb", "a\n\nb"),
    (b"a\x0bb\x0cc", "a\nb\nc"),
    # progress bars redrawn with CR and erase-line
    (b"\r[##    ] 20%\x1b[K\r[####  ] 40%\x1b[K\r[######] 100%\x1b[K\r\n", None),
    (b"50%\r\x1b[K60%", "50%\n60%"),
    (b"a\r\x1b[0m\nb", "a\nb"),
    (b"a\r\x07\nb", "a\nb"),
    # other controls
    (b"a\tb", "a\tb"),
    (b"a\x07b\x00c\x7fd\x0ee\x0ff", "abcdef"),
    (b"ab\x08\x08cd", "abcd"),  # backspace removed, not applied
    # 8-bit C1: not interpreted (tmux in UTF-8 mode); raw bytes are invalid UTF-8
    (b"\x9b31mx", "\ufffd31mx"),
    (b"\x9d0;t\x9cx", "\ufffd0;t\ufffdx"),
    (b"\xc2\x9b31mx", "31mx"),  # U+009B, a C1 control character: removed, no CSI
    (b"a\xc2\x85b", "ab"),  # U+0085 NEL
    # UTF-8 whose continuation bytes lie in 0x80-0x9F stays whole
    ("— ā € 日本 ✓ é 😀".encode(), "— ā € 日本 ✓ é 😀"),
    ("\x1b[32m✓\x1b[0m 日本語\r\n".encode(), "✓ 日本語\n"),
    # invalid UTF-8
    (b"a\xffb\xc3(c", "a\ufffdb\ufffd(c"),
    (b"\xe2\x82", "\ufffd"),
    (b"\xed\xa0\x80x", "\ufffd\ufffd\ufffdx"),  # a surrogate
]


@pytest.mark.parametrize(("data", "text"), EXAMPLES)
def test_examples(data: bytes, text: str | None) -> None:
    if text is None:
        text = "\n[##    ] 20%\n[####  ] 40%\n[######] 100%\n"
    assert terminal_text(data) == text
    assert reference_text(data) == text
    assert every_split(data) == {text}


@pytest.mark.parametrize(
    ("chunks", "text"),
    [
        # a CR at the end of a read, its LF at the start of the next
        ([b"a\r", b"\nb"], "a\nb"),
        ([b"a\r", b"\r", b"\nb"], "a\nb"),
        ([b"a\r", b"b"], "a\nb"),
        ([b"a\r", b"\x1b[K", b"\nb"], "a\nb"),
        # colour codes split across reads
        ([b"x\x1b", b"[31mred"], "xred"),
        ([b"x\x1b[3", b"1mred\x1b[", b"0m"], "xred"),
        ([b"\x1b]0;ti", b"tle", b"\x07x"], "x"),
        ([b"\x1b]0;title\x1b", b"\\x"], "x"),
        ([b"\x1b(", b"Bx"], "x"),
        # UTF-8 split across reads
        ([b"\xe2", b"\x82", b"\xacx"], "€x"),
        ([b"\xf0\x9f", b"\x98\x80"], "😀"),
        ([b"a\xe2\x82", b""], "a\ufffd"),
        ([b"\xc2", b"\x9bx"], "x"),
    ],
)
def test_split_reads(chunks: list[bytes], text: str) -> None:
    text_filter = TextFilter()
    assert "".join(map(text_filter.feed, chunks)) + text_filter.finish() == text


def test_text_is_given_as_soon_as_it_is_final() -> None:
    text_filter = TextFilter()
    assert text_filter.feed(b"one\r\ntw") == "one\ntw"
    assert text_filter.feed(b"o\x1b[3") == "o"
    assert text_filter.feed(b"1m\r") == ""  # the CR waits: its LF may come next
    assert text_filter.feed(b"\n") == "\n"
    assert text_filter.feed(b"\xe2\x82") == ""
    assert text_filter.feed(b"\xac") == "€"
    assert text_filter.finish() == ""


def test_finish_flushes_and_starts_over() -> None:
    text_filter = TextFilter()
    assert text_filter.feed(b"a\r") == "a"
    assert text_filter.finish() == "\n"
    assert text_filter.feed(b"\x1b]0;open") == ""
    assert text_filter.finish() == ""  # an open sequence is dropped
    assert text_filter.feed(b"\xe2") == ""
    assert text_filter.finish() == "\ufffd"
    assert text_filter.feed(b"fresh\n") == "fresh\n"


def test_a_one_megabyte_line() -> None:
    line = b"0123456789\x1b[1mabcdef\x1b[0m" * 50_000 + b"\r\n"
    text = "0123456789abcdef" * 50_000 + "\n"
    assert len(line) > 1_000_000
    assert terminal_text(line) == text
    assert chunked(line, list(range(0, len(line), 4096))) == text
    progress = b"".join(b"\r%7d" % n for n in range(130_000))
    assert len(progress) > 1_000_000
    assert terminal_text(progress) == "".join(f"\n{n:7d}" for n in range(130_000))


def test_an_unterminated_string_ends_at_the_limit() -> None:
    data = b"a\x1b]0;" + b"x" * 10 + b"\r\ntext\x07"
    assert terminal_text(data) == "a"  # 1 MiB of room: the string swallows it all
    assert every_split(data, string_limit=6) == {"axxxxxx\ntext"}
    assert reference_text(data, string_limit=6) == "axxxxxx\ntext"
    dcs = b"\x1bP" + b"y" * 8 + b"z"
    assert every_split(dcs, string_limit=8) == {"z"}
    assert every_split(dcs, string_limit=4) == {"yyyyz"}


def test_an_unterminated_string_holds_no_bytes() -> None:
    text_filter = TextFilter()
    assert text_filter.feed(b"before\x1b]52;c;") == "before"
    for _ in range(14):
        assert text_filter.feed(b"A" * 65536) == ""
    assert text_filter.feed(b"A" * 65536 + b"\x07after") == "after"
    assert text_filter.feed(b"\x1b]0;") == ""
    rest = STRING_LIMIT - 4
    assert text_filter.feed(b"B" * rest) == ""
    assert text_filter.feed(b"BCD") == "D"  # the limit ended the string after C
    assert text_filter.finish() == ""


def test_a_long_csi_holds_no_bytes() -> None:
    text_filter = TextFilter()
    assert text_filter.feed(b"x\x1b[" + b"1;" * 50_000) == "x"
    assert text_filter.feed(b"1;" * 50_000) == ""
    assert text_filter.feed(b"my") == "y"


def test_string_limit_is_checked() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        TextFilter(string_limit=0)


PIECES = [
    b"\x1b",
    b"\x1b[",
    b"\x1b]",
    b"\x1bP",
    b"\x1b\\",
    b"[",
    b"]",
    b"P",
    b"_",
    b"\\",
    b"(",
    b" ",
    b"B",
    b"0",
    b"3",
    b"1",
    b";",
    b"?",
    b"m",
    b"K",
    b"a",
    b"\r",
    b"\r",
    b"\n",
    b"\r\n",
    b"\r\r\n",
    b"\x07",
    b"\x18",
    b"\x1a",
    b"\t",
    b"\x08",
    b"\x0c",
    b"\x00",
    b"\x7f",
    "é".encode(),
    "€".encode(),
    "€".encode()[:2],
    "😀".encode(),
    "😀".encode()[1:],
    b"\x80",
    b"\x9b",
    b"\x9d",
    b"\xc2",
    b"\xc2\x85",
    b"\xed\xa0",
    b"\xff",
]

streams = st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join)
cuts = st.lists(st.integers(min_value=0, max_value=1000), max_size=12)
limits = st.sampled_from([1, 2, 3, 5, 8, STRING_LIMIT])


@settings(max_examples=1500, deadline=None)
@given(data=streams, string_limit=limits)
def test_agrees_with_the_reference(data: bytes, string_limit: int) -> None:
    expected = reference_text(data, string_limit)
    text_filter = TextFilter(string_limit=string_limit)
    assert text_filter.feed(data) + text_filter.finish() == expected


@settings(max_examples=1500, deadline=None)
@given(data=streams, cuts=cuts, string_limit=limits)
def test_chunking_does_not_matter(data: bytes, cuts: list[int], string_limit: int) -> None:
    text_filter = TextFilter(string_limit=string_limit)
    whole = text_filter.feed(data) + text_filter.finish()
    assert chunked(data, cuts, string_limit) == whole


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200), cuts=cuts)
def test_any_bytes(data: bytes, cuts: list[int]) -> None:
    assert chunked(data, cuts) == reference_text(data)
