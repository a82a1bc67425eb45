"""A policy file read and checked (``--policy FILE``, ``SCHEMUX_POLICY``): TOML, every
key known, every value of its kind, every pattern a regular expression; a file that is
not refuses schemux's start with a ``ConfigError`` naming the file, the line and the key.

    write_scope = "owned"        # "agent", "owned" or "all" (the default)
    watched = "ask"              # typing into a pane a person watches: allow, deny or ask
    mask_secrets = true

    [[rules]]
    pattern = '^rm\\s+-[a-zA-Z]*r'
    action = "deny"              # allow, deny or ask
    tools = ["run_command"]      # optional: only these tools
    hosts = ["web1"]             # optional: only these hosts
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection
from typing import Any, NoReturn

from schemux.errors import ConfigError
from schemux.generated.argument_facts import TOOL_NAMES
from schemux.policy.rules import ACTIONS, WRITE_SCOPES, Action, Policy, Rule, WriteScope

ENV_POLICY = "SCHEMUX_POLICY"
_TOP_KEYS = ("write_scope", "watched", "mask_secrets", "rules")
_RULE_KEYS = ("pattern", "action", "tools", "hosts")
_RULES_HEADER = re.compile(r"\s*\[\[\s*rules\s*\]\]")
_TABLE_HEADER = re.compile(r"\s*\[")


def load_policy(path: str, tools: Collection[str] | None = None) -> Policy:
    """The policy of the file at ``path``; a rule's ``tools`` must be among ``tools``
    (None: the tools the contracts name, ``generated.tool_names``)."""
    try:
        with open(path, "rb") as file:
            raw = file.read()
    except OSError as error:
        raise ConfigError(
            f"the policy file (--policy, {ENV_POLICY}) cannot be read: {error}"
        ) from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as error:
        raise ConfigError(f"the policy file {path} is not UTF-8: {error}") from None
    except tomllib.TOMLDecodeError as error:  # its message says the line and column
        raise ConfigError(f"the policy file {path} is not TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"the policy file {path} nests arrays or tables too deep") from None
    known = frozenset(TOOL_NAMES if tools is None else tools)
    return _Reading(path, text.splitlines()).policy(data, known)


class _Reading:
    """One file's checks, each refusal naming the line of what it refuses (tomllib
    gives none of its values' lines: they are found by key in the text)."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.rule_lines = [
            number for number, line in enumerate(lines, 1) if _RULES_HEADER.match(line)
        ]

    def policy(self, data: dict[str, Any], tools: frozenset[str]) -> Policy:
        for key in data:
            if key not in _TOP_KEYS:
                self.refuse(
                    self.key_line(key), f"unknown key {key!r} (expected {', '.join(_TOP_KEYS)})"
                )
        mask = data.get("mask_secrets", False)
        if not isinstance(mask, bool):
            self.refuse(self.key_line("mask_secrets"), "mask_secrets must be true or false")
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            self.refuse(self.key_line("rules"), "rules must be [[rules]] tables")
        return Policy(
            path=self.path,
            write_scope=self.write_scope(data.get("write_scope", "all")),
            watched=self.action(data.get("watched", "ask"), self.key_line("watched"), "watched"),
            rules=tuple(self.rule(index, table, tools) for index, table in enumerate(rules)),
            mask_secrets=mask,
        )

    def write_scope(self, value: object) -> WriteScope:
        for scope in WRITE_SCOPES:
            if value == scope:
                return scope
        self.refuse(
            self.key_line("write_scope"),
            f"write_scope {value!r}: expected {', '.join(repr(s) for s in WRITE_SCOPES)}",
        )

    def action(self, value: object, line: int, key: str) -> Action:
        for action in ACTIONS:
            if value == action:
                return action
        self.refuse(line, f"{key} {value!r}: expected {', '.join(repr(a) for a in ACTIONS)}")

    def rule(self, index: int, table: object, tools: frozenset[str]) -> Rule:
        start = self.rule_lines[index] if index < len(self.rule_lines) else 0
        if not isinstance(table, dict):
            self.refuse(start, "each rule must be a [[rules]] table")

        def line(key: str) -> int:
            return self.key_line(key, start) if start else 0

        for key in table:
            if key not in _RULE_KEYS:
                self.refuse(
                    line(key), f"unknown key {key!r} in a rule (expected {', '.join(_RULE_KEYS)})"
                )
        source = table.get("pattern")
        if not isinstance(source, str) or not source:
            self.refuse(line("pattern") or start, "a rule needs a pattern (a regular expression)")
        try:
            pattern = re.compile(source)
        except (re.error, RecursionError, OverflowError) as error:
            self.refuse(
                line("pattern"), f"the pattern {source!r} is not a regular expression: {error}"
            )
        if "action" not in table:
            self.refuse(start, "a rule needs an action (allow, deny or ask)")
        action = self.action(table["action"], line("action"), "action")
        named = self.names(table, "tools", line("tools"))
        unknown = sorted(named - tools)
        if unknown:
            self.refuse(line("tools"), f"no tool is named {unknown[0]!r}")
        return Rule(pattern, action, named, self.names(table, "hosts", line("hosts")), start)

    def names(self, table: dict[str, Any], key: str, line: int) -> frozenset[str]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
            self.refuse(line, f"{key} must be a list of names")
        return frozenset(value)

    def key_line(self, key: str, start: int = 0) -> int:
        """The line that sets ``key``: at the top (``start`` 0) or in the table that
        starts at line ``start``; 0 when it is not found (a dotted or quoted key)."""
        pattern = re.compile(rf"\s*{re.escape(key)}\s*=")
        for number in range(start + 1, len(self.lines) + 1):
            line = self.lines[number - 1]
            if _TABLE_HEADER.match(line):
                break
            if pattern.match(line):
                return number
        return start

    def refuse(self, line: int, problem: str) -> NoReturn:
        where = f"line {line}" if line else "a line"
        raise ConfigError(f"the policy file {self.path}, {where}: {problem}")
