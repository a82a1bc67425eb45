"""The server's own log (Python ``logging``, logger ``schemux``): its level and where it
goes, from ``--log-level``/``--log-file`` or the environment; stderr by default; and
messages that a flood would repeat, summarized (:class:`RepeatedLog`)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping

from schemux.errors import ConfigError
from schemux.system.private_files import open_private

ENV_LOG_LEVEL = "SCHEMUX_LOG_LEVEL"
ENV_LOG_FILE = "SCHEMUX_LOG_FILE"
LEVELS = ("debug", "info", "warning", "error")
DEFAULT_LEVEL = "warning"

_STDERR_FORMAT = "schemux: %(levelname)s %(message)s"
# a file may be shared by several schemux processes and read later: when, and which
_FILE_FORMAT = "%(asctime)s schemux[%(process)d] %(levelname)s %(message)s"
SUMMARY_SECONDS = 10.0  # a repeated message is logged at most once in this time


def configure(env: Mapping[str, str], level: str | None, file: str | None) -> None:
    """Set up the root logger; options win over the environment. A level that is none
    of ``LEVELS`` or a file that cannot be opened is a ``ConfigError``."""
    name = (level if level is not None else env.get(ENV_LOG_LEVEL) or DEFAULT_LEVEL).lower()
    if name not in LEVELS:
        raise ConfigError(
            f"the log level (--log-level, {ENV_LOG_LEVEL}) {name[:40]!r} is none of "
            f"{', '.join(LEVELS)}"
        )
    path = file if file is not None else env.get(ENV_LOG_FILE) or None
    handler: logging.Handler
    if path is None:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(_STDERR_FORMAT))
    else:
        try:
            descriptor = open_private(path, os.O_WRONLY | os.O_APPEND)
        except OSError as error:
            raise ConfigError(
                f"cannot open the log file (--log-file, {ENV_LOG_FILE}) {path!r}: "
                f"{error.strerror or error}"
            ) from None
        handler = logging.StreamHandler(os.fdopen(descriptor, "a", encoding="utf-8"))
        handler.setFormatter(logging.Formatter(_FILE_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    # other libraries (the MCP SDK, uvicorn) log below warning at debug only: at info
    # they would say something about every request
    root.setLevel(logging.DEBUG if name == "debug" else logging.WARNING)
    logging.getLogger("schemux").setLevel(getattr(logging, name.upper()))


class RepeatedLog:
    """Messages that may come many times a second (one per connection of a flood, which
    wrote 2,351 lines in 8 s): each is logged the first time, and then, while it goes on
    coming, once every ``seconds`` as how many more times it came. ``close`` logs the
    counts not yet logged. Used on the event loop: the summaries are a timer of it."""

    def __init__(self, logger: logging.Logger, seconds: float = SUMMARY_SECONDS) -> None:
        self._logger = logger
        self._seconds = seconds
        # the messages logged or summarized in this period, and how many more came since
        self._counts: dict[tuple[int, str], int] = {}
        self._timer: asyncio.TimerHandle | None = None

    def log(self, level: int, message: str) -> None:
        if not self._logger.isEnabledFor(level):
            return
        key = (level, message)
        if key in self._counts:
            self._counts[key] += 1
            return
        self._logger.log(level, "%s", message)
        self._counts[key] = 0
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._seconds, self._summarize)

    def _summarize(self) -> None:
        self._timer = None
        repeated = self._summaries()
        if repeated:  # still coming: the next ones are counted for another period
            self._counts = dict.fromkeys(repeated, 0)
            self._timer = asyncio.get_running_loop().call_later(self._seconds, self._summarize)

    def _summaries(self) -> list[tuple[int, str]]:
        """Log how many more times each message came; forget them all; the repeated ones."""
        repeated = [key for key, count in self._counts.items() if count]
        for level, message in repeated:
            count = self._counts[level, message]
            times = "time" if count == 1 else "times"
            self._logger.log(
                level, "%s (%d more %s within %g s)", message, count, times, self._seconds
            )
        self._counts = {}
        return repeated

    def close(self) -> None:
        """Log the counts not yet logged; the timer is cancelled."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._summaries()
