"""Links from a tool's result to the resource that holds all of what the result cut.

A handler whose text is cut (``capture_pane``'s history beyond its lines, ``run_program``'s
tail) names the resource with ``link``; the server collects the links of each call
(``collecting``, around the handler) and sends each as a ``resource_link`` content item
after the result's text. The collection rides the call's context, as the audit record does:
each call has its own, and ``link`` outside a call does nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class ResultLink:
    uri: str
    name: str
    description: str


_current: ContextVar[list[ResultLink] | None] = ContextVar("schemux_result_links", default=None)


def link(uri: str, name: str, description: str) -> None:
    """The call in progress links to ``uri`` (what its result cut is there)."""
    links = _current.get()
    if links is not None:
        links.append(ResultLink(uri, name, description))


@contextmanager
def collecting() -> Iterator[list[ResultLink]]:
    """The links the handlers inside the block make, in their order."""
    links: list[ResultLink] = []
    token = _current.set(links)
    try:
        yield links
    finally:
        _current.reset(token)
