"""``schemux replay``: a recording (``schemux.audit.recordings``) played in the terminal as
it was recorded: its output events written at their times, faster with ``speed``, pauses
cut to ``idle_limit``. Like any terminal player it writes what the program wrote: the
screen shows it as it did then."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from schemux.audit.recordings import file_name, read_cast
from schemux.errors import ConfigError

_ID = re.compile(r"[cp][0-9a-f]{12}")
_URI = re.compile(r"tmux://[^/]+/(?:call|program)/(?P<id>[cp][0-9a-f]{12})/recording")


def find(ref: str, directory: Path) -> Path:
    """The file ``ref`` names: a recording's id, its resource URI (the id in it), or a
    file; ConfigError when there is none."""
    uri = _URI.fullmatch(ref)
    if uri is not None or _ID.fullmatch(ref):
        recording = uri["id"] if uri is not None else ref
        path = directory / file_name(recording)
        if not path.is_file():
            raise ConfigError(
                f"no recording {recording} in {directory}: it was never made there, or "
                "the oldest recordings were removed to keep within their bounds"
            )
        return path
    path = Path(ref)
    if not path.is_file():
        raise ConfigError(
            f"{ref[:80]!r} is no recording: give its id (schemux audit shows it), its "
            "tmux://HOST/.../recording URI, or a .cast file"
        )
    return path


def play(
    path: Path,
    out: TextIO,
    *,
    speed: float = 1.0,
    idle_limit: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Write the recording's output to ``out`` in time (``sleep`` waits); ConfigError
    when it is no asciicast v3 recording."""
    try:
        _, events = read_cast(path.read_text("utf-8", "replace"))
    except (ValueError, OSError) as error:
        raise ConfigError(f"{path} is not an asciicast v3 recording: {error}") from None
    for interval, code, data in events:
        wait = interval if idle_limit is None else min(interval, idle_limit)
        if wait > 0:
            sleep(wait / speed)
        if code == "o":
            out.write(data)
            out.flush()
    return 0
