"""The policy a person gives schemux (``--policy FILE``): where the agent may type, the
rules that allow, deny or ask about the commands it runs, and whether secrets are masked;
and the rules matched against one call's commands. Pure: reading the file is
``policy.file``'s, what a shell will run of a text ``policy.commands``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from schemux.policy.commands import read_commands

WriteScope = Literal["all", "owned", "agent"]
WRITE_SCOPES: tuple[WriteScope, ...] = get_args(WriteScope)
Action = Literal["allow", "deny", "ask"]
ACTIONS: tuple[Action, ...] = get_args(Action)

# the tools whose arguments carry a command a shell runs, and the programs' argv
SHELL_TOOLS = frozenset({"run_command", "run_shell_command", "run_command_on_hosts"})
KEY_TOOLS = frozenset({"send_keys", "send_keys_batch"})
PROGRAM_TOOLS = frozenset({"start_program", "run_program"})
# the tools that type into or run in a pane a call names: write_scope and a person
# watching are checked for them (domain.write_policy), and each takes ``force``
TYPING_TOOLS = frozenset(
    {"run_command", "run_shell_command", "send_keys", "send_keys_batch", "paste_text",
     "paste_buffer", "adopt_pane"}
)  # fmt: skip


@dataclass(frozen=True)
class Rule:
    """One ``[[rules]]`` table: its ``pattern`` searched in each command a call runs,
    narrowed to ``tools`` and ``hosts`` when given (empty: every one); ``line`` is where
    the table starts in the file, which a decision names."""

    pattern: re.Pattern[str]
    action: Action
    tools: frozenset[str] = frozenset()
    hosts: frozenset[str] = frozenset()
    line: int = 0

    def applies(self, tool: str, host: str) -> bool:
        return (not self.tools or tool in self.tools) and (not self.hosts or host in self.hosts)

    def describe(self) -> str:
        return f"the rule at line {self.line} ({self.action} {self.pattern.pattern!r})"


@dataclass(frozen=True)
class Verdict:
    """What the rules say of a call: the ``action`` of the first ``rule`` that matched
    ``command`` (one of the commands it runs)."""

    action: Action
    rule: Rule
    command: str


@dataclass(frozen=True)
class Policy:
    """A policy file's settings. ``write_scope``: the panes the agent may type into or
    run in ("agent": the agent's session and schemux's programs' panes; "owned": those
    and the sessions a call made; "all": any). ``watched``: what typing into a pane a
    person is watching needs (``ask`` by default). ``rules``: first match wins.
    ``mask_secrets``: results, resources and the audit log masked (``text.secrets``)."""

    path: str = ""
    write_scope: WriteScope = "all"
    watched: Action = "ask"
    rules: tuple[Rule, ...] = ()
    mask_secrets: bool = False

    def verdict(self, tool: str, host: str, texts: Iterable[str]) -> Verdict | None:
        """The first rule that applies to ``tool`` on ``host`` and whose pattern is
        found in one of ``texts`` as written or in a command a shell runs of it; a deny
        or ask rule also in that command's flag form (``policy.commands``), which can
        make a call refused or asked about, never allowed. The verdict names the command
        as run (None: no rule matched)."""
        rules = [rule for rule in self.rules if rule.applies(tool, host)]
        if not rules:
            return None
        written: list[tuple[str, str]] = []  # (what is matched, the command it shows)
        flag_forms: list[tuple[str, str]] = []
        for text in texts:
            written.append((text, text))
            for run in read_commands(text):
                written.append((run.text, run.text))
                flag_forms.append((run.flag_form, run.text))
        for rule in rules:
            candidates = written if rule.action == "allow" else [*written, *flag_forms]
            for candidate, shown in candidates:
                if rule.pattern.search(candidate):
                    return Verdict(rule.action, rule, shown)
        return None


def command_texts(tool: str, arguments: dict[str, object]) -> tuple[str, ...]:
    """The command texts a call of ``tool`` carries that the rules match: the shell
    tools' ``command``, keys sent with Enter (the default), a program's argv joined by
    spaces; none for other tools."""
    if tool in SHELL_TOOLS:
        command = arguments.get("command")
        return (command,) if isinstance(command, str) else ()
    if tool == "send_keys":
        return _entered(arguments)
    if tool == "send_keys_batch":
        operations = arguments.get("operations")
        if not isinstance(operations, list):
            return ()
        return tuple(
            text for operation in operations if isinstance(operation, dict)
            for text in _entered(operation)
        )  # fmt: skip
    if tool in PROGRAM_TOOLS:
        argv = arguments.get("argv")
        if isinstance(argv, list) and all(isinstance(word, str) for word in argv):
            return (" ".join(str(word) for word in argv),)
    return ()


def _entered(arguments: dict[str, object]) -> tuple[str, ...]:
    keys = arguments.get("keys")
    if isinstance(keys, str) and arguments.get("enter", True) is not False:
        return (keys,)
    return ()
