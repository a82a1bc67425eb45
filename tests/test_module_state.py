"""No module of schemux holds mutable state at module level (issue 19, item 3).

What lives as long as a tmux server belongs to its ``TmuxServer`` (``TmuxServer.shared``),
what lives as long as a host to its host, and the ``ServingState`` owns those: two
contexts in one process share nothing. A module keeps constants only: strings, numbers,
tuples, frozensets, ``MappingProxyType`` tables, frozen dataclasses of those, compiled
patterns; never a dict, list or set, a weak registry, an object with attributes that
change, or a cache, unless it is listed below with why.

Each module's names bound at its top level (and in the bodies of its classes) are read
from its source; their values, from the imported module.
"""

from __future__ import annotations

import ast
import contextvars
import dataclasses
import enum
import importlib
import inspect
import logging
import pkgutil
import types
from collections.abc import Iterator, MutableMapping, MutableSequence, MutableSet
from pathlib import Path
from typing import Any, TypeVar

import pytest

import schemux
from schemux.tmux import format as tmux_format

# Caches of what is the same for every context of the process, whatever the server:
# pure functions of their arguments, and this process's own identity.
PROCESS_WIDE_CACHES = frozenset(
    {
        "schemux.system.processes._owner",  # this process's pid, start time and machine
        "schemux.system.processes.machine_tag",  # this machine and boot
        "schemux.text.terminal._sequences",  # a pattern per string limit
        "schemux.serving.validation.ecma_regex",  # a compiled pattern per pattern text
        "schemux.serving.validation.ecma_patterns",
        "schemux.serving.validation.fast_arrays",
        "schemux.policy.commands._parser",  # the bash grammar, loaded once (read-only)
        "schemux.text.secrets._detectors",  # detect-secrets' compiled patterns, made once
    }
)

# Code generated from the schemas (``schemux.generated``, codegen's output) is data that
# codegen writes; helper "data" reworks it (issue 19, item 5).
NOT_SCANNED = ("schemux.generated",)

# Module constants that are objects of the standard library whose state is not a
# context's: the logging tree is the process's by design.
PROCESS_OBJECTS: tuple[type, ...] = (logging.Logger,)


def schemux_modules() -> Iterator[types.ModuleType]:
    for info in pkgutil.walk_packages(schemux.__path__, "schemux."):
        if info.name.startswith(NOT_SCANNED) or info.name == "schemux.__main__":
            continue
        yield importlib.import_module(info.name)


def top_level_names(module: types.ModuleType) -> Iterator[tuple[str, Any]]:
    """(qualified name, value) of each name the module's source binds at its top level,
    and of each class attribute its classes' bodies assign."""
    path = module.__file__
    assert path is not None
    tree = ast.parse(Path(path).read_text())
    for node in tree.body:
        for name in _bound(node):
            if name in vars(module):
                yield f"{module.__name__}.{name}", vars(module)[name]
        if isinstance(node, ast.ClassDef) and isinstance(vars(module).get(node.name), type):
            cls = vars(module)[node.name]
            for statement in node.body:
                for name in _bound(statement):
                    if name in vars(cls) and not isinstance(statement, ast.FunctionDef):
                        yield f"{module.__name__}.{node.name}.{name}", vars(cls)[name]


def _bound(node: ast.stmt) -> Iterator[str]:
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield from (n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        yield from (n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        yield node.name


def mutable(value: Any, seen: frozenset[int] = frozenset()) -> str | None:
    """Why ``value`` is state that can change, or None for a constant."""
    if id(value) in seen:
        return None
    seen = seen | {id(value)}
    if isinstance(value, MutableMapping | MutableSequence | MutableSet | bytearray):
        return f"a {type(value).__name__}"
    if callable(value) and hasattr(value, "cache_info"):
        return "a cache"
    if isinstance(value, type | types.ModuleType | types.FunctionType | types.BuiltinFunctionType):
        return None
    if isinstance(value, tuple | frozenset):
        return next((why for item in value if (why := mutable(item, seen))), None)
    if isinstance(value, types.MappingProxyType):
        return next((why for item in value.values() if (why := mutable(item, seen))), None)
    if isinstance(value, (enum.Enum, *PROCESS_OBJECTS)):
        return None
    if dataclasses.is_dataclass(value):
        parameters = getattr(type(value), "__dataclass_params__", None)
        if parameters is None or not parameters.frozen:
            return f"a {type(value).__name__} whose fields can be set"
        fields = (getattr(value, field.name) for field in dataclasses.fields(value))
        return next((why for item in fields if (why := mutable(item, seen))), None)
    if isinstance(value, TypeVar | types.GenericAlias) or type(value).__module__ == "typing":
        return None  # a type annotation's alias
    if hasattr(value, "__dict__") and vars(value) and not inspect.isroutine(value):
        return f"a {type(value).__name__} with attributes ({', '.join(vars(value))})"
    return None


def test_no_module_holds_mutable_state() -> None:
    found = []
    for module in schemux_modules():
        for name, value in top_level_names(module):
            why = mutable(value)
            if why is not None and name not in PROCESS_WIDE_CACHES:
                found.append(f"{name}: {why}")
    assert not found, "module-level state:\n" + "\n".join(sorted(set(found)))


def test_no_call_state_rides_a_context_variable() -> None:
    """What one call carries (its host, progress, result links, audit notes, MCP session,
    whether it may start the server, the connects that failed in it) travels on its
    ``Call`` and is given to the code that needs it (issue 33, item 2): no module of
    schemux or of its handlers holds a ``ContextVar``, nor names one anywhere."""
    held = [
        name
        for module in schemux_modules()
        for name, value in top_level_names(module)
        if isinstance(value, contextvars.ContextVar)
    ]
    assert not held, f"context variables: {held}"
    naming = [
        module.__name__
        for module in schemux_modules()
        if module.__file__ is not None and "ContextVar" in Path(module.__file__).read_text()
    ]
    assert not naming, f"modules that name ContextVar: {naming}"


def test_the_exemptions_name_what_is_there() -> None:
    """An exemption whose name is gone (moved, renamed) is dropped from the lists, not
    kept: each must still name mutable state."""
    values = {name: value for m in schemux_modules() for name, value in top_level_names(m)}
    for name in PROCESS_WIDE_CACHES:
        assert name in values, name
        assert mutable(values[name]) is not None, name


def test_each_row_class_holds_its_own_constant_spec() -> None:
    """A tmux row's query and converters are the class's own (no registry of a module
    holds them), and a constant: the scan above reads class bodies' source, which the
    decorator's attribute is not in."""
    rows = {
        value
        for module in schemux_modules()
        for value in vars(module).values()
        if isinstance(value, type) and tmux_format.ROW_SPEC in vars(value)
    }
    assert {"PaneRow", "CreatedSessionRow", "AgentSessionMade"} <= {row.__name__ for row in rows}
    for row in rows:
        assert mutable(vars(row)[tmux_format.ROW_SPEC]) is None, row


@pytest.mark.parametrize(
    ("value", "constant"),
    [
        ({}, False),
        ([1], False),
        ({1}, False),
        ((1, [2]), False),
        (types.MappingProxyType({"a": []}), False),
        ((1, "a", frozenset({2})), True),
        (types.MappingProxyType({"a": (1,)}), True),
    ],
)
def test_the_scan_tells_constants_from_state(value: Any, constant: bool) -> None:
    assert (mutable(value) is None) is constant
