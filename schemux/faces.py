"""A package's face: the names its ``__init__`` exports, imported when first asked for.

A package's ``__init__`` does not import its modules itself: importing any module of a
package runs its ``__init__`` first, so an eager face would load the whole package (the
MCP SDK under ``schemux tools``, say) and tie its modules into import cycles. Each
``__init__`` lists its face for readers and type checkers (``__all__``, and the imports
under ``TYPE_CHECKING``) and gets its ``__getattr__`` here (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any


def face(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name of ``modules`` (name -> the module of
    the package that defines it) from its module, imported on first use."""
    table = MappingProxyType(dict(modules))

    def exported(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return exported
