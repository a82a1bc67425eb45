"""hypothesis-jsonschema on current hypothesis.

hypothesis-jsonschema 0.23.1 (its latest release) builds objects with hypothesis's
private ``many`` helper through ``while elements.more(): ...``; hypothesis 6.150-era
releases replaced that with ``with many(...) as elements: for _ in elements: ...``. The
adapter below gives hypothesis-jsonschema the old interface on top of the new one, and
is only put in place where the installed hypothesis lacks ``more``.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from hypothesis.internal.conjecture import utils
from hypothesis_jsonschema import _from_schema


class LegacyMany:
    """``many`` as hypothesis-jsonschema drives it: ``more()`` and ``reject()``."""

    def __init__(self, data: Any, min_size: int, max_size: float, average_size: float) -> None:
        self._many = utils.many(
            data, min_size=min_size, max_size=max_size, average_size=average_size
        )
        self._many.__enter__()
        self._elements: Iterator[None] = iter(self._many)

    def more(self) -> bool:
        if next(self._elements, StopIteration) is StopIteration:
            self._many.__exit__(None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


def install() -> None:
    if not hasattr(utils.many, "more"):
        _from_schema.cu = SimpleNamespace(many=LegacyMany)  # type: ignore[assignment,attr-defined]
