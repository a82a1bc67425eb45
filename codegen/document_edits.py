"""A served document as edits over its contract, so ``generated/`` holds each document once.

What tools/list says of a tool (its overlay merged, no ``_meta``) differs from the
contract in a few texts and hints. ``generated/serving.json`` keeps only those
differences, as JSON Patch operations (RFC 6902): ``add`` of an object member the
contract lacks, ``replace`` of a member or array item, ``remove`` of a member. The
runtime (``schemux.serving.binding``) makes them over the contract read from
``generated/contracts.json``.
"""

from __future__ import annotations

from typing import Any


def document_edits(contract: Any, served: Any, path: str = "") -> list[dict[str, Any]]:
    """The operations that turn ``contract`` into ``served``, members in ``served``'s
    order (a member the contract lacks is added after the others)."""
    if isinstance(contract, dict) and isinstance(served, dict):
        edits: list[dict[str, Any]] = [
            {"op": "remove", "path": _member(path, key)} for key in contract if key not in served
        ]
        for key, value in served.items():
            if key in contract:
                edits += document_edits(contract[key], value, _member(path, key))
            else:
                edits.append({"op": "add", "path": _member(path, key), "value": value})
        return edits
    if isinstance(contract, list) and isinstance(served, list) and len(contract) == len(served):
        return [
            edit
            for index, (before, after) in enumerate(zip(contract, served, strict=True))
            for edit in document_edits(before, after, f"{path}/{index}")
        ]
    if contract == served and type(contract) is type(served):
        return []
    return [{"op": "replace", "path": path, "value": served}]


def _member(path: str, key: str) -> str:
    """The JSON Pointer (RFC 6901) of member ``key`` of the value at ``path``."""
    return f"{path}/{key.replace('~', '~0').replace('/', '~1')}"
