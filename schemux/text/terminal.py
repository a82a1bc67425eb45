"""The text a program wrote to its terminal, from the raw bytes ``pipe-pane`` copies.

The text is the byte stream with escape sequences and control characters removed, in write
order, with ``"\\n"`` as the only line break:

* **Line breaks.** A run of CRs, with the LF that may follow it, is one line break: the
  pane's terminal turns each LF a program writes into CR LF (and its CR LF into CR CR LF),
  and a CR without an LF (a progress line redrawn in place) ends that state of the line, so
  each state is a line: ``b"10%\\r20%\\r30%\\n"`` is ``"10%\\n20%\\n30%\\n"``. A run of
  lone CRs is one break, not several (a second CR redraws nothing). An LF on its own is a
  break, and so are VT and FF, which a terminal moves down a line for, as it does for LF.
  Escape sequences and controls are removed first, so ``b"50%\\r\\x1b[K60%"`` is
  ``"50%\\n60%"`` and ``b"a\\r\\x1b[0m\\n"`` is ``"a\\n"``.
* **Escape sequences** are removed whole, with the grammar of a VT500 parser (tmux's):

  - CSI: ``ESC [``, parameter and intermediate bytes (0x20-0x3F), a final byte
    (0x40-0x7E);
  - OSC: ``ESC ]`` and a payload ended by BEL, by ``ESC \\`` (ST) or by any other ESC, CAN
    or SUB;
  - DCS, SOS, PM and APC (``ESC P``, ``ESC X``, ``ESC ^``, ``ESC _``): a payload ended by
    ST or by any other ESC, CAN or SUB (BEL is payload here, as in xterm);
  - any other escape: ``ESC``, intermediates (0x20-0x2F), one final byte (0x30-0x7E):
    ``ESC 7``, ``ESC =``, ``ESC ( B`` (a charset designation), ``ESC \\``.

  A byte that cannot continue a sequence where it stands ends it early: what came before
  is dropped, the byte is taken as if no sequence were open (``ESC`` then a control,
  ``ESC [ 3`` then a CR; tmux would act on a C0 control inside a CSI and go on with the
  CSI: those two bytes become text here, a case no real program writes).
* **Long strings.** An OSC, DCS, SOS, PM or APC payload ends after ``STRING_LIMIT`` bytes
  (1 MiB, the size tmux buffers) even without its terminator: its bytes so far are dropped
  and what follows is text again, so a stray ``ESC ]`` (``cat`` of a binary file) cannot
  swallow the rest of a program's output. Nothing is held in memory meanwhile: an open
  sequence is kept as a state, never as bytes, so memory stays constant whatever arrives.
* **Controls.** The other C0 controls (NUL, BEL, BS, ...) and DEL are removed; TAB stays.
  BS is not applied: ``b"a\\bb"`` is ``"ab"`` (overstrike and erasing are screen effects,
  not text). C1 controls (U+0080-U+009F) are removed too.
* **8-bit C1 is not interpreted**, as tmux does not in UTF-8 mode: a raw byte 0x9B is no
  CSI but an invalid UTF-8 byte, and becomes U+FFFD like any other; UTF-8 continuation
  bytes 0x80-0xBF are never taken for controls.
* **UTF-8.** The bytes left are decoded incrementally (a character split across reads stays
  whole); each invalid byte sequence becomes U+FFFD (Python's ``errors="replace"``), and
  nothing raises. Decoding comes after removal, so a control or escape written inside a
  multibyte character (broken output anyway) does not split it.

``TextFilter`` is incremental: ``feed`` the raw bytes in order, in chunks of any size, and
it returns the text that is final so far, holding back only an open escape sequence (as a
state) and a trailing CR (whose line break may yet take the LF of the next read). The
total text does not depend on where the stream was cut. The work per chunk is a handful of
passes of ``re``, ``bytes.translate`` and the UTF-8 codec over the whole chunk: no Python
loop runs per byte, per line or per sequence.
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache
from types import MappingProxyType
from typing import Final

__all__ = ("STRING_LIMIT", "TextFilter", "terminal_text")

STRING_LIMIT: Final = 1 << 20
"""Payload bytes after which an unterminated OSC, DCS, SOS, PM or APC string ends."""

# Where the stream stands between two chunks.
_GROUND: Final = 0  # no sequence open
_ESC: Final = 1  # ESC
_ESC_INTER: Final = 2  # ESC and intermediates
_CSI: Final = 3  # ESC [ and parameters
_OSC: Final = 4  # ESC ] and part of its payload
_STR: Final = 5  # ESC P/X/^/_ and part of its payload

# Bytes that recreate a short open sequence in front of the next chunk.
_REOPEN: Final = MappingProxyType({_ESC: b"\x1b", _ESC_INTER: b"\x1b ", _CSI: b"\x1b["})

# An escape sequence still open at the end of the bytes (matched from the last ESC).
_OPEN: Final = re.compile(
    rb"\x1b(?:\[[\x20-\x3f]*|\][^\x07\x18\x1a\x1b]*|[PX^_][^\x18\x1a\x1b]*|[\x20-\x2f]*)\Z"
)
_OSC_END: Final = re.compile(rb"[\x07\x18\x1a\x1b]")
_STR_END: Final = re.compile(rb"[\x18\x1a\x1b]")
_STRING_INTROS: Final = frozenset(b"PX^_")

# VT and FF are line feeds; the other C0 controls but TAB, LF and CR, and DEL, go.
_C0_TABLE: Final = bytes.maketrans(b"\x0b\x0c", b"\n\n")
_C0_DELETE: Final = bytes(b for b in (*range(0x20), 0x7F) if b not in b"\t\n\r\x0b\x0c")
_C1: Final = re.compile("[\x80-\x9f]+")
_C1_BYTES: Final = re.compile(rb"\xc2[\x80-\x9f]")


@lru_cache(maxsize=8)
def _sequences(string_limit: int) -> re.Pattern[bytes]:
    """Every escape sequence, each ended as its grammar says (open ones included).

    Keep the plain ``\\x1b`` in front: ``re`` then finds each next ESC with a fast scan.
    """
    return re.compile(
        rb"\x1b(?:\[[\x20-\x3f]*[\x40-\x7e]?"
        rb"|\][^\x07\x18\x1a\x1b]{0,%d}"
        rb"|[PX^_][^\x18\x1a\x1b]{0,%d}"
        rb"|[\x20-\x2f]*[\x30-\x7e]?)" % (string_limit, string_limit)
    )


def _new_decoder() -> codecs.IncrementalDecoder:
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def _line_breaks(raw: bytes) -> bytes:
    """``raw`` with each CR+ LF? made an LF, by ``replace`` alone: each run of CRs
    collapsed to one CR (halving the runs, so a run of n takes log2(n) passes), then
    CR LF and the CRs left made LFs. ``re.sub`` on every CR run cost three times as
    much where progress lines (CR CR runs) are common."""
    while b"\r\r" in raw:
        raw = raw.replace(b"\r\r", b"\r")
    return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


class TextFilter:
    """The text of a terminal byte stream, incrementally: ``feed`` chunks in order.

    ``"".join(map(f.feed, chunks)) + f.finish()`` is the same text however the stream is
    cut into chunks. After ``finish`` the filter starts over, as new.
    """

    __slots__ = ("_after_c2", "_count", "_cr", "_decoder", "_limit", "_sequences", "_state")

    def __init__(self, *, string_limit: int = STRING_LIMIT) -> None:
        if string_limit < 1:
            raise ValueError("string_limit must be at least 1")
        self._limit = string_limit
        self._sequences = _sequences(string_limit)
        self._state: int = _GROUND
        self._count = 0  # payload bytes of the open string (_OSC, _STR)
        self._cr = False  # a CR ended the text so far
        self._decoder = _new_decoder()
        self._after_c2 = False  # the last bytes decoded ended with C2

    def feed(self, chunk: bytes) -> str:
        """The text that is final once ``chunk``, the next bytes of the stream, is read."""
        data = self._resume(bytes(chunk))
        if not data:
            return ""
        cut = len(data)
        last = data.rfind(b"\x1b")
        if last >= 0 and _OPEN.match(data, last) is not None and self._hold(data, last):
            cut = last
        raw = data if cut == len(data) else data[:cut]
        if b"\x1b" in raw:
            # the pattern has no groups, so the pieces between the sequences are the
            # text; joining them costs a fifth less than ``sub`` with no replacement
            raw = b"".join(self._sequences.split(raw))
        raw = raw.translate(_C0_TABLE, _C0_DELETE)
        if self._cr:
            raw = b"\r" + raw
            self._cr = False
        if raw.endswith(b"\r"):
            raw = raw.rstrip(b"\r")
            self._cr = True
        if b"\r" in raw:
            raw = _line_breaks(raw)
        text = self._decoder.decode(raw)
        if raw:
            # A C1 character is C2 and a byte 0x80-0x9F, maybe split across two chunks.
            c1 = _C1_BYTES.search(raw) is not None or (self._after_c2 and 0x80 <= raw[0] < 0xA0)
            self._after_c2 = raw[-1] == 0xC2
            if c1:
                text = _C1.sub("", text)
        return text

    def finish(self) -> str:
        """The text held back at the end of the stream; an open sequence is dropped."""
        tail = b"\n" if self._cr else b""
        text = self._decoder.decode(tail, final=True)
        self._state, self._count, self._cr, self._after_c2 = _GROUND, 0, False, False
        self._decoder = _new_decoder()
        return text  # an LF or U+FFFD, no C1 character

    def _resume(self, chunk: bytes) -> bytes:
        """``chunk`` as the continuation of the sequence open at the end of the last one."""
        state = self._state
        if state == _GROUND:
            return chunk
        if state in (_OSC, _STR):
            room = self._limit - self._count
            end = (_OSC_END if state == _OSC else _STR_END).search(chunk, 0, room)
            if end is not None:
                self._state = _GROUND
                return chunk[end.start() :]
            if len(chunk) >= room:
                self._state = _GROUND
                return chunk[room:]
            self._count += len(chunk)
            return b""
        self._state = _GROUND
        return _REOPEN[state] + chunk

    def _hold(self, data: bytes, last: int) -> bool:
        """Keep the sequence open at ``last``, the end of ``data``, for the next chunk.

        False when it is a string already as long as the limit, which ends it here.
        """
        if last + 1 == len(data):
            self._state = _ESC
            return True
        intro = data[last + 1]
        if intro == 0x5B:  # [
            self._state = _CSI
        elif intro == 0x5D or intro in _STRING_INTROS:  # ] P X ^ _
            payload = len(data) - last - 2
            if payload >= self._limit:
                return False
            self._state = _OSC if intro == 0x5D else _STR
            self._count = payload
        else:
            self._state = _ESC_INTER
        return True


def terminal_text(data: bytes) -> str:
    """The text of a whole terminal byte stream (``TextFilter`` fed once, then finished)."""
    text_filter = TextFilter()
    return text_filter.feed(data) + text_filter.finish()
