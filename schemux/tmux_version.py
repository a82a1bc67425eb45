"""Which tmux versions schemux serves, and how a version string reads."""

from __future__ import annotations

import re

from schemux.errors import TmuxUnavailable

MINIMUM_VERSION = (3, 3)


def parse_version(text: str) -> tuple[int, int]:
    """``tmux 3.3a`` -> (3, 3); ``tmux next-3.6`` -> (3, 6); ``tmux master`` -> newest."""
    if text.strip().endswith("master"):
        return (999, 0)
    match = re.search(r"(\d+)\.(\d+)", text)
    if match is None:
        raise TmuxUnavailable(f"cannot read the tmux version from {text.strip()!r}")
    return int(match.group(1)), int(match.group(2))
