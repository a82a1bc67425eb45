"""The lint of served text: what tools/list says names only what this server has.

An agent knows schemux only through tools/list, so every text served (a tool's
description, title, and every schema description in any form it is served in, its
advice, the instructions' lines) must hold for schemux:

- another tool is named only in advice (``[[advice]]`` of the overlay) that needs it:
  advice is served only when every tool it needs is served, so a tool ``--tools`` leaves
  out is named nowhere. The tools are those with a contract in ``schemas/tools/``.
- every other identifier in snake_case is an argument, field or value of a contract, an
  error code of ``schemux/errors.py``, or a tmux format name: a name like
  ``capture_since`` without a contract is a tool this server does not have.
- an environment variable named is one schemux reads (``SCHEMUX_*``, as the runtime
  spells them) or one of the user's environment the tools act on (``_USER_ENVIRONMENT``).
- a class named (``RunCommandResult.effective_timeout``) is one of the generated models;
  the wire knows no other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.overlays import Overlays

# Variables of the user's shell, programs and panes that descriptions explain the tools'
# effect on (TMUX_PANE: tmux's, in every pane; TMUX_TMPDIR: where tmux puts its sockets,
# which list_servers scans; BASH_ENV, PROMPT_COMMAND and LD_PRELOAD:
# what set_environment can make later shells run); they are not settings of a server.
_USER_ENVIRONMENT = frozenset(
    {
        "GIT_PAGER", "VIRTUAL_ENV", "HIST_IGNORE_SPACE", "TMUX_PANE", "TMUX_TMPDIR",
        "BASH_ENV", "PROMPT_COMMAND", "LD_PRELOAD",
    }
)  # fmt: skip
# snake_case words; not a path (a/b_c), an attribute (x.b_c) or a $variable
_SNAKE = re.compile(r"(?<![\w$./-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b(?![-/]|\.\w)")
_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_CLASS = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_SCHEMUX_VARIABLE = re.compile(r"[\"'](SCHEMUX_[A-Z0-9_]+)[\"']")
# An error code, as schemux/errors.py fixes one per error class.
_ERROR_CODE = re.compile(r'^\s+code(?::\s*str)?\s*=\s*"([a-z_]+)"', re.MULTILINE)


@dataclass(frozen=True)
class Vocabulary:
    """What served text may name."""

    tools: frozenset[str]
    names: frozenset[str]  # arguments, fields, values, error codes, tmux format names
    variables: frozenset[str]
    classes: frozenset[str]


def vocabulary(
    root: Path, documents: Mapping[str, Mapping[str, Any]], tmux_formats: Iterable[str]
) -> Vocabulary:
    names: set[str] = set(tmux_formats)
    for document in documents.values():
        for key in ("inputSchema", "outputSchema"):
            names.update(_schema_words(document.get(key)))
    errors = (root / "schemux" / "errors.py").read_text(encoding="utf-8")
    names.update(_ERROR_CODE.findall(errors))
    variables = {
        match.group(1)
        for path in sorted((root / "schemux").rglob("*.py"))
        for match in _SCHEMUX_VARIABLE.finditer(path.read_text(encoding="utf-8"))
    }
    classes = {
        "".join(part.capitalize() for part in name.split("_")) + role
        for name in documents
        for role in ("Input", "Output")
    }
    return Vocabulary(
        tools=frozenset(documents),
        names=frozenset(names),
        variables=frozenset(variables) | _USER_ENVIRONMENT,
        classes=frozenset(classes),
    )


def _schema_words(schema: Any) -> Iterator[str]:
    """Property names and string enum/const values anywhere in ``schema``."""
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key in ("properties", "patternProperties") and isinstance(value, Mapping):
                yield from (str(name) for name in value)
            if key == "enum" and isinstance(value, list):
                yield from (item for item in value if isinstance(item, str))
            if key == "const" and isinstance(value, str):
                yield value
            yield from _schema_words(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _schema_words(item)


def schema_texts(schema: Any, where: str) -> Iterator[tuple[str, str]]:
    """``(where, text)`` for every description and title in ``schema``."""
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key in ("description", "title") and isinstance(value, str):
                yield f"{where}/{key}", value
            else:
                yield from schema_texts(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from schema_texts(item, f"{where}/{index}")


def text_problems(
    tool: str, where: str, text: str, vocab: Vocabulary, allowed_tools: Iterable[str] = ()
) -> list[str]:
    """What ``text`` (served for ``tool`` at ``where``) names that it may not."""
    allowed = {tool, *allowed_tools}
    problems = []
    for word in dict.fromkeys(_SNAKE.findall(text)):
        if word in vocab.tools:
            if word not in allowed:
                problems.append(
                    f"names the tool {word!r} outside advice that needs it (a --tools "
                    "selection without it would still name it)"
                )
        elif word not in vocab.names:
            problems.append(
                f"names {word!r}, which is no tool, argument, field or value this server has"
            )
    problems += [
        f"names the environment variable {name!r}, which schemux does not read"
        for name in dict.fromkeys(_VARIABLE.findall(text))
        if name not in vocab.variables
    ]
    problems += [
        f"names {name!r}, which is no class of this server's contracts"
        for name in dict.fromkeys(_CLASS.findall(text))
        if name not in vocab.classes
    ]
    return [f"{tool}: {where}: {problem}" for problem in problems]


def served_text_problems(
    served: Mapping[str, Iterable[tuple[str, str]]], overlays: Overlays, vocab: Vocabulary
) -> list[str]:
    """The lint over each tool's served texts (``where, text`` pairs), its advice and the
    instructions' lines."""
    problems: list[str] = []
    for tool, texts in served.items():
        for where, text in texts:
            problems += text_problems(tool, where, text, vocab)
        overlay = overlays.by_tool.get(tool)
        for index, advice in enumerate(overlay.advice if overlay else ()):
            problems += text_problems(tool, f"advice[{index}]", advice.text, vocab, advice.needs)
    for family in overlays.families:
        problems += text_problems(f"family {family.name}", "job", family.job, vocab)
    for tool, overlay in overlays.by_tool.items():
        problems += text_problems(tool, "instructions.use", overlay.use, vocab)
    return problems
