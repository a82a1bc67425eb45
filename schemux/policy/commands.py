"""What a shell will run of a command's text, for the policy's rules to match: each
simple command's words, unquoted, with the words that only run another command (``sudo``,
``env``, ``nice``, ``xargs``, ...) taken off and the scripts of ``sh -c``/``bash -c``
read in turn. Parsed by tree-sitter's bash grammar (``tree-sitter-bash``), so quotes,
lists (``;``, ``&&``, ``||``, ``|``), subshells and command substitutions are the
shell's, not a regular expression's.

Each command also has a flag form, so that one rule meets every way getopt lets its
flags be spelled: every short option word before ``--`` (``-r``, ``-f``, ``-rf``, also
after an operand, as GNU getopt reads them) joined into one cluster of sorted letters,
each long option (``--recursive``, or GNU's abbreviation ``--rec``) adding its first
letter to that cluster (GNU's usual pairing: ``--force`` is ``-f``) and kept after it,
then the other words in order: ``rm x -r --force`` -> ``rm -fr --force x``. No table of
commands: a letter may be one the command does not have, so the form can only make a
deny or ask rule match more. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# how deep ``sh -c '...'`` inside ``sh -c`` is read; what lies deeper is matched as text
MAX_NESTING = 4

# runners whose first word that is not an option is the command they run; with the
# options that take a value as the next word
_RUNNERS = MappingProxyType(
    {
        "sudo": frozenset({"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-T", "-D"}),
        "doas": frozenset({"-u", "-C"}),
        "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir"}),
        "nice": frozenset({"-n", "--adjustment"}),
        "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
        "nohup": frozenset(),
        "time": frozenset({"-f", "-o"}),
        "command": frozenset(),
        "exec": frozenset({"-a"}),
        "builtin": frozenset(),
        "stdbuf": frozenset({"-i", "-o", "-e"}),
        "setsid": frozenset(),
        "xargs": frozenset(
            {"-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--delimiter"}
        ),
        "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    }
)
# runners that take one positional word before the command (timeout's duration)
_POSITIONAL = MappingProxyType({"timeout": 1})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"})
_SKIPPED = frozenset(
    {"variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect"}
)
_SHORT_OPTIONS = re.compile(r"-[A-Za-z0-9]+")
_LONG_OPTION = re.compile(r"--([A-Za-z0-9])[^=]*(=.*)?", re.DOTALL)


@dataclass(frozen=True)
class Command:
    """One command a shell runs: its words (runners taken off, quotes the shell's)."""

    words: tuple[str, ...]

    @property
    def text(self) -> str:
        """Its words joined by one space: what the rules match."""
        return " ".join(self.words)

    @property
    def flag_form(self) -> str:
        """Its flags in one form (the module's docstring): the name, one cluster of the
        sorted letters of every short option and of each long option's first, the long
        options sorted, then the other words in order (from ``--`` on, as written)."""
        letters: set[str] = set()
        longs: list[str] = []
        others: list[str] = []
        words = self.words[1:]
        for index, word in enumerate(words):
            if word == "--":
                others += words[index:]
                break
            long = _LONG_OPTION.fullmatch(word)
            if long is not None:
                letters.add(long.group(1))
                longs.append(word)
            elif _SHORT_OPTIONS.fullmatch(word):
                letters.update(word[1:])
            else:
                others.append(word)
        cluster = ["-" + "".join(sorted(letters))] if letters else []
        return " ".join([*self.words[:1], *cluster, *sorted(longs), *others])


@cache
def _parser() -> Parser:
    """The bash parser, made once a process (its grammar loaded on first use)."""
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def commands_run(text: str) -> tuple[str, ...]:
    """Each command ``text`` runs, as its words joined by one space, in order:
    ``"sudo rm -rf x && bash -c 'ls | wc'"`` -> ``("rm -rf x", "ls", "wc")``.
    A command the parser could not read whole is still listed as far as it read."""
    return tuple(dict.fromkeys(command.text for command in read_commands(text)))


def read_commands(text: str) -> tuple[Command, ...]:
    """Each command ``text`` runs, once each, in order (``commands_run``'s, with their
    words)."""
    return tuple(dict.fromkeys(Command(tuple(words)) for words in _commands(text, 0)))


def _commands(text: str, depth: int) -> Iterator[list[str]]:
    tree = _parser().parse(text.encode("utf-8", "surrogatepass"))
    for node in _command_nodes(tree.root_node):
        words = [_unquoted(child) for child in node.named_children if child.type not in _SKIPPED]
        yield from _unwrapped(words, depth)


def _command_nodes(root: Node) -> Iterator[Node]:
    """Every ``command`` node under ``root``, in document order (inside lists,
    pipelines, subshells, functions, substitutions, loops)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "command":
            yield node
        stack.extend(reversed(node.children))


def _unwrapped(words: list[str], depth: int) -> Iterator[list[str]]:
    """The command ``words`` run, runners taken off; a shell's ``-c`` script read."""
    while words:
        name = words[0].rsplit("/", 1)[-1]
        if name in _SHELLS and depth < MAX_NESTING:
            script = _script_of(words[1:])
            if script is not None:
                yield words
                yield from _commands(script, depth + 1)
                return
        takes_value = _RUNNERS.get(name)
        if takes_value is None:
            break
        rest = words[1:]
        while rest and (rest[0].startswith("-") or (name == "env" and "=" in rest[0])):
            option = rest.pop(0)
            if option == "--":
                break
            if option in takes_value and rest:
                rest.pop(0)
        del rest[: _POSITIONAL.get(name, 0)]
        words = rest
    if words:
        yield words


def _script_of(arguments: list[str]) -> str | None:
    """The script of a shell's ``-c`` (``-c``, or a cluster such as ``-ec``), else None."""
    for index, word in enumerate(arguments):
        if not word.startswith("-") or word == "--":
            return None
        if "c" in word[1:] and not word.startswith("--") and index + 1 < len(arguments):
            return arguments[index + 1]
    return None


def _unquoted(node: Node) -> str:
    """A word as the shell gives it to the command: quotes taken off, a backslash's
    character kept; an expansion (``$HOME``, ``$(...)``) as written."""
    if node.type == "command_name" and node.named_children:
        return _unquoted(node.named_children[0])
    text = _text(node)
    if node.type == "raw_string":
        return text[1:-1]
    if node.type == "string":
        inner = node.named_children
        if all(child.type == "string_content" for child in inner):
            return "".join(_text(child) for child in inner)
        return text[1:-1]
    if node.type == "concatenation":
        return "".join(_unquoted(child) for child in node.children)
    if node.type == "word":
        return _without_backslashes(text)
    return text


def _without_backslashes(text: str) -> str:
    out = []
    escaped = False
    for character in text:
        if escaped or character != "\\":
            out.append(character)
            escaped = False
        else:
            escaped = True
    return "".join(out)


def _text(node: Node) -> str:
    data = node.text
    return "" if data is None else data.decode("utf-8", "surrogatepass")
