"""Which host a call runs on, when several are configured: the ``host`` argument every
tool's served inputSchema gains (``HostChoice``), and what the references a call gives
say of their host.

The contracts are not changed: ``host`` is taken out of the arguments before they are
checked against the exact contract, and the host a reference was read on travels in what
the contracts leave opaque: a reference's ``generation`` and ``capture_since``'s
``cursor`` are stamped ``NAME:...`` in each result (``stamped``), and the stamp routes the
call that gives them back (``Addressed``); a ``programId`` names its program's host by
being that host's (ids are random and never reused). Which arguments carry a host or
name a program, and which tool's list holds every host's, the tools' overlays say
(``generated.argument_facts``, ``generated.tool_facts``). With one host nothing of this
runs.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemux.errors import INVALID_ARGUMENTS, SchemuxError, preview
from schemux.generated.argument_facts import HOST_STAMPED_ARGUMENTS, TARGET_ARGUMENTS
from schemux.generated.tool_facts import EVERY_HOST_LISTS

HOST = "host"
STAMP = ":"  # between a host's name and what it stamps (no name or digest holds one)
STAMPED_KEYS = frozenset({"generation"})  # a reference's, wherever it is


@dataclass(frozen=True)
class HostChoice:
    """The configured hosts a call may name, and the one it runs on when it names none."""

    names: tuple[str, ...]
    default: str

    def property(self, *, strict: bool = False) -> dict[str, Any]:
        description = (
            f"The configured host to run on; omitted: {self.default}. A programId or a "
            "target from a result runs on its own host without it; tmux_snapshot without "
            "it lists every host's server, host after host (a generation begins with its "
            "host's name)."
        )
        if strict:  # every property required; null is the argument left out
            return {
                "type": ["string", "null"],
                "enum": [*self.names, None],
                "description": description,
            }
        return {"type": "string", "enum": list(self.names), "description": description}

    def with_host(self, schema: Mapping[str, Any], *, strict: bool = False) -> dict[str, Any]:
        """``schema`` (an inputSchema as served) with the optional ``host`` in its
        properties, and in those of each of its root forms (``oneOf``/``anyOf``) whose
        properties are closed."""
        served = dict(schema)
        forms = [key for key in ("oneOf", "anyOf") if isinstance(served.get(key), list)]
        if "properties" in served or not forms:
            served["properties"] = {
                **served.get("properties", {}),
                HOST: self.property(strict=strict),
            }
            if strict:
                served["required"] = [*served.get("required", []), HOST]
        for key in forms:
            served[key] = [
                self.with_host(form) if isinstance(form, dict) and "properties" in form else form
                for form in served[key]
            ]
        return served


@dataclass(frozen=True)
class Addressed:
    """A call's host (None: every host) and its arguments as the contract reads them (no
    ``host``, no stamps)."""

    host: str | None
    arguments: dict[str, Any]


def addressed(
    arguments: Mapping[str, Any],
    choice: HostChoice,
    program_host: Callable[[str], str | None],
    every_host: bool = False,
) -> Addressed:
    """The host the call runs on: its ``host``, else the one its references were read on,
    else (``every_host``) every host, else the default. SchemuxError (invalid arguments,
    naming the field) when ``host`` is not a configured host's name, or the references
    are of another host than ``host`` (or of several). ``program_host(id)`` is the host
    holding program ``id``, if any does."""
    given = arguments.get(HOST)
    if given is not None and (not isinstance(given, str) or given not in choice.names):
        raise _invalid(
            f"{HOST}: {preview(str(given))} is not a configured host (one of "
            f"{', '.join(choice.names)})"
        )
    # a copy: the audit records the arguments as the caller gave them
    cleaned = copy.deepcopy({key: value for key, value in arguments.items() if key != HOST})
    found: dict[str, str] = {}  # host -> the field that says it
    for path, text, replace in _stamps(cleaned):
        name, separator, rest = text.partition(STAMP)
        if not separator:
            continue  # not stamped: read on the call's host
        if name not in choice.names:
            raise _invalid(f"{path}: names host {preview(name)}, which is not configured")
        found.setdefault(name, path)
        replace(rest)
    for name in TARGET_ARGUMENTS.get("program", ()):
        program = cleaned.get(name)
        holder = program_host(program) if isinstance(program, str) else None
        if holder is not None:
            found.setdefault(holder, name)
    if len(found) > 1:
        (first, at), (second, other) = list(found.items())[:2]
        raise _invalid(f"{at} is of host {first} and {other} of host {second}: give one host's")
    if given is not None:
        for name, path in found.items():
            if name != given:
                raise _invalid(
                    f"{path} is of host {name}, not of host {given} (the call's {HOST}): "
                    f"leave {HOST} out, or give {name}"
                )
        return Addressed(given, cleaned)
    if found:
        return Addressed(next(iter(found)), cleaned)
    return Addressed(None if every_host else choice.default, cleaned)


def merged(tool: str, results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One result of ``tool`` (an ``EVERY_HOST_LISTS`` tool) of several hosts' (stamped,
    in the hosts' order): the first's, its list holding every host's items in turn."""
    key = EVERY_HOST_LISTS[tool]
    first = results[0]
    items = [item for result in results for item in result["data"][key]]
    return {**first, "data": {**first["data"], key: items}}


def stamped(result: dict[str, Any], host: str) -> dict[str, Any]:
    """``result`` with each reference's generation (and a ``cursor`` string) naming
    ``host``: given back, they route the call there (``addressed``)."""
    for _, text, replace in _stamps(result):
        replace(f"{host}{STAMP}{text}")
    return result


_Stamp = tuple[str, str, Callable[[str], None]]


def _stamps(value: dict[str, Any]) -> Iterator[_Stamp]:
    """Each string that carries a host (see the module), with its path and a way to
    replace it, in ``value`` (changed in place)."""
    for key in HOST_STAMPED_ARGUMENTS:
        if isinstance(value.get(key), str):
            yield key, value[key], _setter(value, key)
    yield from _generations(value, "")


def _generations(value: Any, path: str) -> Iterator[_Stamp]:
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key in STAMPED_KEYS and isinstance(item, str):
                yield where, item, _setter(value, key)
            else:
                yield from _generations(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _generations(item, f"{path}[{index}]")


def _setter(container: dict[str, Any], key: str) -> Callable[[str], None]:
    def replace(text: str) -> None:
        container[key] = text

    return replace


def _invalid(message: str) -> SchemuxError:
    return SchemuxError(message, code=INVALID_ARGUMENTS)
