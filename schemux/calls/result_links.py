"""Links from a tool's result to the resource that holds all of what the result cut.

A handler whose text is cut (``capture_pane``'s history beyond its lines, ``run_program``'s
tail) names the resource with ``call.links.link``; the server sends each link the call
made as a ``resource_link`` content item after the result's text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ResultLink:
    uri: str
    name: str
    description: str


@dataclass
class ResultLinks:
    """The links one call made (``Call.links``), in their order."""

    made: list[ResultLink] = field(default_factory=list)

    def link(self, uri: str, name: str, description: str) -> None:
        """The call links to ``uri`` (what its result cut is there)."""
        self.made.append(ResultLink(uri, name, description))

    def __iter__(self) -> Iterator[ResultLink]:
        return iter(self.made)
