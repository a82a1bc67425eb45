"""The server's own log (Python ``logging``, logger ``schemux``): its level and where it
goes, from ``--log-level``/``--log-file`` or the environment; stderr by default."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from schemux.errors import ConfigError

ENV_LOG_LEVEL = "SCHEMUX_LOG_LEVEL"
ENV_LOG_FILE = "SCHEMUX_LOG_FILE"
LEVELS = ("debug", "info", "warning", "error")
DEFAULT_LEVEL = "warning"

_STDERR_FORMAT = "schemux: %(levelname)s %(message)s"
# a file may be shared by several schemux processes and read later: when, and which
_FILE_FORMAT = "%(asctime)s schemux[%(process)d] %(levelname)s %(message)s"


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
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
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
