"""What a tool's result shows beside its text: pictures (or other media) as bytes.

A handler whose answer is a picture (``picture_pane``) attaches it with
``call.media.attach``; the server sends each as the MCP content block its MIME type
calls for, before the result's text. The structured result describes the picture
(its size, what it shows) and is checked against the outputSchema as every result is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Media:
    mime_type: str
    data: bytes


@dataclass
class ResultMedia:
    """The media one call attached (``Call.media``), in their order."""

    attached: list[Media] = field(default_factory=list)

    def attach(self, mime_type: str, data: bytes) -> None:
        """The call's result shows ``data``, of type ``mime_type`` (``image/png``)."""
        self.attached.append(Media(mime_type, data))

    def __iter__(self) -> Iterator[Media]:
        return iter(self.attached)
