"""The URIs of schemux's resources: written, parsed strictly, and their templates (pure).

One scheme, ``tmux://HOST/KIND/ID/VIEW``, six resources:

* ``tmux://local/pane/%2512/screen``: pane ``%12``'s visible screen;
* ``tmux://local/pane/%2512/scrollback``: its history and screen;
* ``tmux://local/pane/%2512/picture``: its screen as it looks, a PNG (``picture_pane``'s);
* ``tmux://local/program/p0123456789ab/output``: what program ``p0123456789ab`` printed;
* ``tmux://local/program/p0123456789ab/recording``: its asciicast recording;
* ``tmux://local/call/c0123456789ab/recording``: the recording of a call that drove a
  pane (its id as the audit log links it).

``HOST`` is the host's name: ``local``, or over ssh the destination schemux was given, or
with hosts configured by name (``--host``, ``--hosts``) that name; percent-encoded
(``alice%40build``). Ids are percent-encoded as RFC 6570 expands a template variable: a
pane id's ``%`` is ``%25``. A URI is accepted only in exactly the form this module writes
(no other encoding, case, query, fragment, dot segment or trailing slash), so each
resource has one URI and a subscription to it is found by plain string comparison. What
does not parse is refused by a :class:`ResourceUriError` that says what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

SCHEME = "tmux"
LOCAL_HOST = "local"
MAX_URI_LENGTH = 512

View = Literal["screen", "scrollback", "picture", "output", "recording"]
Kind = Literal["pane", "program", "call"]
PANE_VIEWS: tuple[View, ...] = ("screen", "scrollback", "picture")

_PANE_ID = re.compile(r"%[0-9]{1,9}")
_ESCAPED_PANE_ID = re.compile(r"%25[0-9]{1,9}")
_PROGRAM_ID = re.compile(r"p[0-9a-f]{12}")
_CALL_ID = re.compile(r"c[0-9a-f]{12}")
# an authority of unreserved characters and percent-escapes: what quote(safe="") writes
_HOST = r"(?:[A-Za-z0-9._~-]|%[0-9A-F]{2})+"
_URI = re.compile(
    rf"{SCHEME}://(?P<host>{_HOST})/(?:"
    r"pane/%25(?P<pane>[0-9]{1,9})/(?P<pane_view>screen|scrollback|picture)"
    r"|program/(?P<program>p[0-9a-f]{12})/(?P<program_view>output|recording)"
    r"|call/(?P<call>c[0-9a-f]{12})/recording)"
)


_HOSTS_SHOWN = 5  # a refusal names this many of the server's hosts at most
_HOST_NOT_ENCODED = "has a host written otherwise than percent-encoded (alice@h is alice%40h)"


class ResourceUriError(ValueError):
    """A URI that names no resource of this server; the message says why."""


@dataclass(frozen=True)
class ResourceAddress:
    """What one URI names: a pane's screen or scrollback, a program's output or
    recording, or a call's recording, on a host."""

    kind: Kind
    id: str  # "%12", "p0123456789ab" or "c0123456789ab", as the tools and audit name them
    view: View
    host: str  # the host's name, as the fleet knows it

    def uri(self) -> str:
        return resource_uri(self.host, self.kind, self.id, self.view)


def host_authority(host: str) -> str:
    """``host`` as the URI's authority: every character but the unreserved ones escaped."""
    return quote(host, safe="")


def resource_uri(host: str, kind: Kind, id_: str, view: View) -> str:
    return f"{SCHEME}://{host_authority(host)}/{kind}/{quote(id_, safe='')}/{view}"


def pane_uri(host: str, pane_id: str, view: View = "screen") -> str:
    return resource_uri(host, "pane", pane_id, view)


def program_uri(host: str, program_id: str, view: View = "output") -> str:
    return resource_uri(host, "program", program_id, view)


def call_recording_uri(host: str, recording_id: str) -> str:
    return resource_uri(host, "call", recording_id, "recording")


def template(host: str, kind: Kind, view: View) -> str:
    """The RFC 6570 template of one kind of resource on ``host``."""
    variable = {"pane": "pane_id", "program": "program_id", "call": "call_id"}[kind]
    return f"{SCHEME}://{host_authority(host)}/{kind}/{{{variable}}}/{view}"


def parse(uri: str, hosts: Sequence[str]) -> ResourceAddress:
    """The resource ``uri`` names on one of ``hosts`` (the first is the one messages
    show); ``ResourceUriError`` when it names none."""
    host = hosts[0]
    if len(uri) > MAX_URI_LENGTH:
        raise ResourceUriError(
            f"uri: {len(uri)} characters, more than the {MAX_URI_LENGTH} any resource's has"
        )
    prefix = f"{SCHEME}://"
    if not uri.startswith(prefix):
        raise ResourceUriError(
            f"uri: {_shown(uri)} is not a {SCHEME}:// URI; resources are "
            f"{template(host, 'pane', 'screen')}, .../scrollback, .../picture, "
            f"{template(host, 'program', 'output')}, .../recording and "
            f"{template(host, 'call', 'recording')}"
        )
    found = _URI.fullmatch(uri)
    if found is None:
        raise ResourceUriError(f"uri: {_shown(uri)} {_why_not(uri[len(prefix) :])}")
    named = {host_authority(name): name for name in hosts}.get(found["host"])
    if named is None:
        shown = ", ".join(f"{prefix}{host_authority(name)}/" for name in hosts[:_HOSTS_SHOWN])
        more = f" and {len(hosts) - _HOSTS_SHOWN} more hosts" if len(hosts) > _HOSTS_SHOWN else ""
        raise ResourceUriError(
            f"uri: host {_shown(found['host'])} is not this server's: its resources are on "
            f"{shown}{more}"
        )
    if found["pane"] is not None:
        view = next(view for view in PANE_VIEWS if view == found["pane_view"])
        return ResourceAddress("pane", f"%{found['pane']}", view, named)
    if found["call"] is not None:
        return ResourceAddress("call", found["call"], "recording", named)
    program_view: View = "output" if found["program_view"] == "output" else "recording"
    return ResourceAddress("program", found["program"], program_view, named)


def _why_not(rest: str) -> str:
    """What is wrong with a ``tmux://`` URI that does not match (the part after ``//``)."""
    _, _, path = rest.partition("/")
    segments = path.split("/")
    if any(ord(char) < 0x20 or char == "\x7f" for char in rest):
        return "contains a control character"
    if "?" in rest or "#" in rest:
        return "has a query or fragment; resource URIs have neither"
    if any(segment in (".", "..") or segment.lower() in ("%2e", "%2e%2e") for segment in segments):
        return "has a dot segment; resource URIs have none"
    if len(segments) != 3 or segments[0] not in ("pane", "program", "call"):
        return (
            "is not a pane's, a program's or a call's: its path is pane/ID/screen, "
            "pane/ID/scrollback, pane/ID/picture, program/ID/output, program/ID/recording "
            "or call/ID/recording"
        )
    kind, id_, view = segments
    if kind == "call":
        if view != "recording":
            return f"names no view of a call ({_shown(view)}): a call has a recording"
        if not _CALL_ID.fullmatch(id_):
            return f"has {_shown(id_)} for a call's recording id: c and 12 hex digits"
        return _HOST_NOT_ENCODED
    if kind == "pane":
        if _ESCAPED_PANE_ID.fullmatch(id_) and view not in PANE_VIEWS:
            return (
                f"names no view of a pane ({_shown(view)}): a pane has screen, scrollback "
                "and picture"
            )
        if _ESCAPED_PANE_ID.fullmatch(id_):
            return _HOST_NOT_ENCODED
        if _PANE_ID.fullmatch(id_):
            return f"writes the pane id unescaped: {id_} is written %25{id_[1:]}"
        return f"has {_shown(id_)} for a pane id: a pane id is %25 and digits (%2512 is %12)"
    if view not in ("output", "recording"):
        return f"names no view of a program ({_shown(view)}): a program has output and recording"
    if not _PROGRAM_ID.fullmatch(id_):
        return f"has {_shown(id_)} for a program id: p and 12 hex digits, as start_program gives"
    return _HOST_NOT_ENCODED


def _shown(text: str) -> str:
    """``text`` quoted for an error message, cut short, control characters escaped."""
    return repr(text if len(text) <= 80 else text[:77] + "...")
