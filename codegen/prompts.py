"""Prompts: upstream's ``prompts/list`` file and schemux's overlay of each prompt ->
``generated/prompts.json``, what ``prompts/list`` and ``prompts/get`` serve.

An upstream prompt list (a JSON object with ``prompts``, as a ``prompts/list`` result
gives them) is kept as received in ``schemas/upstream/``; its prompts' names and
arguments (name, required) are the contract. What schemux says is its overlay,
``schemas/prompts/<prompt>.toml``:

- ``description``: the prompt's description (replacing upstream's, which speaks of
  upstream's tools);
- ``[arguments.<name>]``: each argument's ``description``; an optional one's
  ``default`` (the text used when it is not given); ``number = true`` for an argument
  whose value is a number in the rendered text;
- ``needs``: the tools the text sends the agent to;
- ``text``: the message ``prompts/get`` renders, where ``{{argument}}`` stands for the
  argument's value as a JSON literal (a string quoted, a number as it is), so a value
  never breaks out of the JSON call the text shows.

A prompt of upstream's list without an overlay is not served (like a tool without a
handler), and listed as such. The texts are linted as the tools' served text is
(``codegen.served_text``): a description names no tool, and the text names no tool
outside ``needs``, no name no contract has, no variable or class schemux lacks. The
server names in a rendered prompt only tools it serves: a prompt whose ``needs`` are not
all served says instead which ones, and how to serve them.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from codegen.served_text import Vocabulary, text_problems

PROMPTS_DIR = Path("schemas/prompts")
PROMPTS_FILE = Path("generated/prompts.json")
PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")
_ARGUMENT_KEYS = frozenset({"description", "default", "number"})
_OVERLAY_KEYS = frozenset({"description", "arguments", "needs", "text"})


@dataclass(frozen=True)
class UpstreamPrompt:
    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...]  # (name, required), upstream's order
    upstream_file: str


def is_prompt_list(text: str) -> bool:
    """Whether an upstream file is a ``prompts/list`` (not a tool's contract)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(data, dict) and isinstance(data.get("prompts"), list)


def upstream_prompts(root: Path, upstream_dir: Path) -> tuple[dict[str, UpstreamPrompt], list[str]]:
    """Every prompt of the prompt lists in ``upstream_dir``, and the problems found."""
    prompts: dict[str, UpstreamPrompt] = {}
    problems: list[str] = []
    for path in sorted((root / upstream_dir).glob("*")):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if not is_prompt_list(text):
            continue
        relative = path.relative_to(root).as_posix()
        for entry in json.loads(text)["prompts"]:
            prompt = _upstream_prompt(entry, relative)
            if prompt is None:
                problems.append(f"{relative}: a prompt without a name, description or arguments")
            elif prompt.name in prompts:
                problems.append(f"{relative}: prompt {prompt.name!r} is listed twice")
            else:
                prompts[prompt.name] = prompt
    return prompts, problems


def _upstream_prompt(entry: Any, upstream_file: str) -> UpstreamPrompt | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return None
    arguments = entry.get("arguments", [])
    if not isinstance(arguments, list) or not all(
        isinstance(argument, dict) and isinstance(argument.get("name"), str)
        for argument in arguments
    ):
        return None
    return UpstreamPrompt(
        name=entry["name"],
        description=str(entry.get("description", "")),
        arguments=tuple((a["name"], bool(a.get("required", False))) for a in arguments),
        upstream_file=upstream_file,
    )


def served_prompts(
    root: Path,
    upstream: Mapping[str, UpstreamPrompt],
    tools: frozenset[str],
    vocab: Vocabulary,
) -> tuple[dict[str, Any], list[str]]:
    """``generated/prompts.json``'s content (the prompts served, in upstream's order, and
    those not served), and every problem of the overlays and their texts."""
    problems: list[str] = []
    served: list[dict[str, Any]] = []
    overlays = {path.stem: path for path in sorted((root / PROMPTS_DIR).glob("*.toml"))}
    problems += [
        f"{PROMPTS_DIR}/{name}.toml: no upstream prompt {name!r} for this overlay"
        for name in overlays
        if name not in upstream
    ]
    for name, prompt in upstream.items():
        path = overlays.get(name)
        if path is None:
            continue
        where = f"{PROMPTS_DIR}/{name}.toml"
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            problems.append(f"{where}: invalid TOML: {error}")
            continue
        found = _overlay_problems(prompt, data, tools)
        if not found:
            found = _text_problems(prompt, data, vocab)
        problems += [f"{where}: {problem}" for problem in found]
        if not found:
            served.append(_entry(prompt, data))
    unserved = [name for name in upstream if name not in overlays]
    return {"prompts": served, "unserved": unserved}, problems


def _overlay_problems(
    prompt: UpstreamPrompt, data: Mapping[str, Any], tools: frozenset[str]
) -> list[str]:
    """What is wrong with an overlay's shape, against its upstream prompt."""
    problems = [f"unknown key {key!r}" for key in sorted(set(data) - _OVERLAY_KEYS)]
    for key in ("description", "text"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            problems.append(f"{key} is missing or empty")
    needs = data.get("needs")
    if not isinstance(needs, list) or not needs or not all(isinstance(n, str) for n in needs):
        problems.append("needs is missing: the tools the text sends the agent to")
        needs = []
    problems += [
        f"needs: {tool!r} is no tool with a contract" for tool in needs if tool not in tools
    ]
    arguments = data.get("arguments", {})
    names = [name for name, _ in prompt.arguments]
    if not isinstance(arguments, dict) or set(arguments) != set(names):
        return [*problems, f"arguments: describe each of the prompt's arguments: {names}"]
    for name, required in prompt.arguments:
        argument = arguments[name]
        if not isinstance(argument, dict) or set(argument) - _ARGUMENT_KEYS:
            problems.append(f"arguments.{name}: keys are {sorted(_ARGUMENT_KEYS)}")
            continue
        if not isinstance(argument.get("description"), str):
            problems.append(f"arguments.{name}: description is missing")
        if required == ("default" in argument):
            problems.append(
                f"arguments.{name}: "
                + (
                    "a required argument has no default"
                    if required
                    else "an optional one needs a default"
                )
            )
        if "default" in argument and not isinstance(argument["default"], str):
            problems.append(f"arguments.{name}: default is text, as a client gives it")
        if argument.get("number") and "default" in argument and not is_number(argument["default"]):
            problems.append(f"arguments.{name}: default {argument['default']!r} is no number")
    used = set(PLACEHOLDER.findall(str(data.get("text", ""))))
    problems += [f"text: {{{{{name}}}}} is no argument" for name in sorted(used - set(names))]
    problems += [f"text: the argument {name!r} is never used" for name in names if name not in used]
    return problems


def _text_problems(prompt: UpstreamPrompt, data: Mapping[str, Any], vocab: Vocabulary) -> list[str]:
    """The served-text lint over the prompt's texts (its argument names are names it may
    use)."""
    names = frozenset({*vocab.names, *(name for name, _ in prompt.arguments)})
    words = replace(vocab, names=names)
    texts = [("description", data["description"], ())]
    texts += [
        (f"arguments.{name}.description", argument["description"], ())
        for name, argument in data["arguments"].items()
    ]
    texts.append(("text", data["text"], tuple(data["needs"])))
    return [
        problem.removeprefix(f"prompt {prompt.name}: ")
        for where, text, allowed in texts
        for problem in text_problems(f"prompt {prompt.name}", where, text, words, allowed)
    ]


def _entry(prompt: UpstreamPrompt, data: Mapping[str, Any]) -> dict[str, Any]:
    arguments = []
    for name, required in prompt.arguments:
        argument = data["arguments"][name]
        entry: dict[str, Any] = {
            "name": name,
            "description": argument["description"],
            "required": required,
        }
        if "default" in argument:
            entry["default"] = argument["default"]
        if argument.get("number"):
            entry["number"] = True
        arguments.append(entry)
    return {
        "name": prompt.name,
        "description": data["description"],
        "arguments": arguments,
        "needs": list(data["needs"]),
        "text": data["text"],
        "upstreamFile": prompt.upstream_file,
    }


def is_number(text: str) -> bool:
    """Whether ``text`` is a JSON number (what a number argument's value must be)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return False
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value)
