"""Overlays: what schemux says about a tool over its contract, one authored file per tool.

``schemas/overlays/<tool>.toml`` (its shape: ``schemas/overlay.schema.json``) can replace
the description, whole or one schema's, replace or remove one schema's title, give the
annotations (each hint with why it holds for schemux's handler), add advice that is
served only with the tools it names, and carries schemux's own facts about the tool: its
family (``--tools``), its use in the server's instructions, the arguments whose text
never reaches tmux, whether a call may run as a task (``schemux.serving.tasks``), whether it is
served only while several hosts are configured (``schemux.serving.selection``), the kinds of
resource it reads (``schemux.serving.resources``), the arguments the audit redacts and reads
its target from (``schemux.audit.log``), those that carry a host and the list a call on
every host merges (``schemux.serving.host_addressing``), the checks its handler needs over
the contract (``checks``: validated with it, never served), and schemux's own top-level
arguments the contract lacks (``arguments``: added to the contract that validates calls,
to the models and to what tools/list serves). The families, in the order
the instructions give them, and the recipes the instructions add when their tools are
served, are ``schemas/families.toml``.

TOML because overlays are prose written by people: multi-line text without escapes, and
comments. The contract in ``schemas/tools/`` is never changed: it still validates every
call and result, with only the overlay's checks and arguments added (``checked``); the
rest of the overlay changes what tools/list says.
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match

from codegen.dialects import validator_class
from codegen.schema_walk import child_schemas

OVERLAYS_DIR = Path("schemas/overlays")
OVERLAY_SCHEMA = Path("schemas/overlay.schema.json")
FAMILIES_FILE = Path("schemas/families.toml")
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
RESOURCE_KINDS = (
    "pane",
    "picture",
    "program",
)  # what an overlay's resources may name (its schema's)
TARGET_KINDS = ("pane", "program")  # what an overlay's targets may name (its schema's)
ALL_TOOLS = "all"  # what --tools takes for every tool, on request or not


@dataclass(frozen=True)
class Advice:
    needs: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Overlay:
    tool: str
    family: str
    use: str
    order: int
    never_sent: tuple[str, ...]
    task: bool
    several_hosts: bool
    description: str | None
    descriptions: dict[str, str]
    titles: dict[str, str]
    advice: tuple[Advice, ...]
    annotations: dict[str, bool]
    why: dict[str, str]
    resources: tuple[str, ...] = ()
    redacted: tuple[str, ...] = ()
    targets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    host_stamped: tuple[str, ...] = ()
    every_host_list: str | None = None
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    # schemux's own top-level arguments, by name: the schema each is added with
    arguments: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """A family of tools: its name, the job its instructions' line starts with, and
    whether it is served only when ``--tools`` names it (or ``all``)."""

    name: str
    job: str
    on_request: bool = False


@dataclass(frozen=True)
class Recipe:
    """A way to do a common job, given in the instructions when every tool it needs is."""

    needs: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Overlays:
    families: tuple[Family, ...]
    by_tool: dict[str, Overlay]
    recipes: tuple[Recipe, ...] = ()
    # groups of argument names callers use for one thing (cwd, startDirectory, ...)
    synonyms: tuple[tuple[str, ...], ...] = ()


def load_overlays(root: Path) -> tuple[Overlays, list[str]]:
    """Every overlay and the families; the problems found (each naming its file)."""
    problems: list[str] = []
    families, recipes, synonyms = _families(root, problems)
    schema = json.loads((root / OVERLAY_SCHEMA).read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    by_tool: dict[str, Overlay] = {}
    for path in sorted((root / OVERLAYS_DIR).glob("*")):
        relative = path.relative_to(root).as_posix()
        if path.suffix != ".toml":
            problems.append(f"{relative}: an overlay is a .toml file named after its tool")
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            problems.append(f"{relative}: invalid TOML: {error}")
            continue
        violation = best_match(validator.iter_errors(data))
        if violation is not None:
            where = "/".join(str(part) for part in violation.absolute_path) or "(top)"
            problems.append(f"{relative}: {where}: {violation.message}")
            continue
        if data["family"] not in {family.name for family in families}:
            problems.append(f"{relative}: family {data['family']!r} is not in {FAMILIES_FILE}")
        by_tool[path.stem] = _overlay(path.stem, data)
    return Overlays(families, by_tool, recipes, synonyms), problems


def _families(
    root: Path, problems: list[str]
) -> tuple[tuple[Family, ...], tuple[Recipe, ...], tuple[tuple[str, ...], ...]]:
    try:
        data = tomllib.loads((root / FAMILIES_FILE).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        problems.append(f"{FAMILIES_FILE}: {error}")
        return (), (), ()
    families = []
    for entry in data.get("family", []):
        if (
            not {"name", "job"} <= set(entry) <= {"name", "job", "on_request"}
            or not all(isinstance(entry[key], str) for key in ("name", "job"))
            or not isinstance(entry.get("on_request", False), bool)
        ):
            problems.append(
                f"{FAMILIES_FILE}: each [[family]] has a name and a job (and may say "
                f"on_request = true), not {entry}"
            )
            continue
        if entry["name"] == ALL_TOOLS:
            problems.append(f"{FAMILIES_FILE}: no family may be named {ALL_TOOLS!r} (--tools all)")
            continue
        families.append(Family(entry["name"], entry["job"], entry.get("on_request", False)))
    recipes = []
    for entry in data.get("recipe", []):
        needs, text = entry.get("needs"), entry.get("text")
        if (
            set(entry) != {"needs", "text"}
            or not isinstance(text, str)
            or not text
            or not isinstance(needs, list)
            or not needs
            or not all(isinstance(tool, str) for tool in needs)
        ):
            problems.append(
                f"{FAMILIES_FILE}: each [[recipe]] has needs (tool names) and a text, not {entry}"
            )
            continue
        recipes.append(Recipe(tuple(needs), text))
    synonyms = []
    for entry in data.get("synonyms", []):
        words = entry.get("words")
        if (
            set(entry) != {"words"}
            or not isinstance(words, list)
            or len(words) < 2
            or not all(isinstance(word, str) and word for word in words)
        ):
            problems.append(
                f"{FAMILIES_FILE}: each [[synonyms]] has words (two argument names or more), "
                f"not {entry}"
            )
            continue
        synonyms.append(tuple(words))
    return tuple(families), tuple(recipes), tuple(synonyms)


def _overlay(tool: str, data: Mapping[str, Any]) -> Overlay:
    annotations = data["annotations"]
    return Overlay(
        tool=tool,
        family=data["family"],
        use=data["instructions"]["use"],
        order=data["instructions"]["order"],
        never_sent=tuple(data.get("never_sent", ())),
        task=bool(data.get("task", False)),
        several_hosts=bool(data.get("several_hosts", False)),
        resources=tuple(data.get("resources", ())),
        redacted=tuple(data.get("redacted", ())),
        targets={kind: tuple(names) for kind, names in data.get("targets", {}).items()},
        host_stamped=tuple(data.get("host_stamped", ())),
        every_host_list=data.get("every_host_list"),
        checks={pointer: dict(keywords) for pointer, keywords in data.get("checks", {}).items()},
        arguments={
            name: dict(schema) for name, schema in sorted(data.get("arguments", {}).items())
        },
        description=data.get("description"),
        descriptions=dict(data.get("descriptions", {})),
        titles=dict(data.get("titles", {})),
        advice=tuple(
            Advice(needs=tuple(item["needs"]), text=item["text"]) for item in data.get("advice", ())
        ),
        annotations={hint: annotations[hint]["value"] for hint in HINTS},
        why={hint: annotations[hint]["why"] for hint in HINTS},
    )


def overlay_problems(
    overlays: Overlays, documents: Mapping[str, Mapping[str, Any]], served: list[str]
) -> list[str]:
    """Every served tool has an overlay; every overlay's tool, pointers and names exist."""
    problems = [
        f"{name} is served (handlers/{name}.py) but has no overlay: write "
        f"{OVERLAYS_DIR}/{name}.toml (CONTRIBUTING.md, 'Overlays')"
        for name in served
        if name not in overlays.by_tool
    ]
    for name, overlay in overlays.by_tool.items():
        where = f"{OVERLAYS_DIR}/{name}.toml"
        document = documents.get(name)
        if document is None:
            problems.append(f"{where}: no contract schemas/tools/{name}.json for this overlay")
            continue
        for table, pointers in (("descriptions", overlay.descriptions), ("titles", overlay.titles)):
            problems += [
                f"{where}: {table}: {pointer} is no schema of the contract"
                for pointer in pointers
                if not isinstance(_resolve(document, pointer), dict)
            ]
        properties = document["inputSchema"].get("properties", {})
        problems += [
            f"{where}: never_sent: {field!r} is no top-level argument of the contract"
            for field in overlay.never_sent
            if field not in properties
        ]
        problems += [
            f"{where}: advice needs {needed!r}, which has no contract in schemas/tools/"
            for advice in overlay.advice
            for needed in advice.needs
            if needed not in documents or needed == name
        ]
        problems += _argument_problems(where, overlay, document)
        problems += _added_argument_problems(where, overlay, document)
        problems += _check_problems(where, overlay, document)
    problems += [
        f"{FAMILIES_FILE}: a recipe needs {needed!r}, which has no contract in schemas/tools/"
        for recipe in overlays.recipes
        for needed in recipe.needs
        if needed not in documents
    ]
    return problems


def _argument_problems(where: str, overlay: Overlay, document: Mapping[str, Any]) -> list[str]:
    """The argument names the overlay gives that its contract does not declare (top-level
    ones in any root form; redacted ones at any depth), and a list no result has."""
    schema = document["inputSchema"]
    top = _top_level_arguments(schema)
    named = [
        *((f"targets.{kind}", names) for kind, names in overlay.targets.items()),
        ("host_stamped", overlay.host_stamped),
    ]
    problems = [
        f"{where}: {key}: {name!r} is no top-level argument of the contract"
        for key, names in named
        for name in names
        if name not in top
    ]
    anywhere = _property_names(schema)
    problems += [
        f"{where}: redacted: {name!r} is no argument of the contract, at any depth"
        for name in overlay.redacted
        if name not in anywhere
    ]
    listed = overlay.every_host_list
    if listed is not None and listed not in _property_names(document.get("outputSchema")):
        problems.append(f"{where}: every_host_list: {listed!r} is in no result of the contract")
    return problems


def _added_argument_problems(
    where: str, overlay: Overlay, document: Mapping[str, Any]
) -> list[str]:
    """Arguments the overlay adds that the contract has already (in any root form), or
    to an inputSchema whose root is no object schema."""
    if not overlay.arguments:
        return []
    schema = document["inputSchema"]
    if schema.get("type") != "object" or not isinstance(schema.get("properties", {}), dict):
        return [f"{where}: arguments: the contract's inputSchema root is no object schema"]
    top = _top_level_arguments(schema)
    return [
        f"{where}: arguments: {name!r} is an argument of the contract already; an overlay only adds"
        for name in overlay.arguments
        if name in top
    ]


def _check_problems(where: str, overlay: Overlay, document: Mapping[str, Any]) -> list[str]:
    """Checks that name no schema, change a keyword the contract states, make the
    inputSchema invalid (with the overlay's arguments), or refuse a default the contract
    or an added argument gives."""
    problems = []
    for pointer, keywords in overlay.checks.items():
        target = _resolve(document, pointer)
        if not isinstance(target, dict):
            problems.append(f"{where}: checks: {pointer} is no schema of the contract")
            continue
        problems += [
            f"{where}: checks: {pointer} has {keyword} already; a check only adds"
            for keyword in keywords
            if keyword in target
        ]
    if problems:
        return problems
    schema = checked(document, overlay)["inputSchema"]
    cls = validator_class(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as error:
        return [f"{where}: checks make the inputSchema invalid: {error.message}"]
    for pointer in overlay.checks:
        target = _resolve({"inputSchema": schema}, pointer)
        if "default" in target and not cls(target).is_valid(target["default"]):
            problems.append(f"{where}: checks: {pointer} refuses the contract's own default")
    for name, added in overlay.arguments.items():
        if "default" in added and not cls(added).is_valid(added["default"]):
            problems.append(f"{where}: arguments: {name!r} refuses its own default")
    return problems


def _top_level_arguments(schema: Mapping[str, Any]) -> set[str]:
    """The properties of the root and of each of its oneOf/anyOf forms."""
    forms = [schema, *schema.get("oneOf", ()), *schema.get("anyOf", ())]
    return {name for form in forms if isinstance(form, dict) for name in form.get("properties", {})}


def _property_names(schema: Any) -> set[str]:
    """Every property name a schema declares, at any depth."""
    if not isinstance(schema, Mapping):
        return set()
    properties = schema.get("properties")
    names = set(properties) if isinstance(properties, Mapping) else set()
    for _, _, child in child_schemas(schema):
        names |= _property_names(child)
    return names


def extended(document: Mapping[str, Any], overlay: Overlay | None) -> dict[str, Any]:
    """``document`` with the overlay's own arguments added to its inputSchema's
    properties, after the contract's, in name order (``document`` itself is left as it
    is): what the models are made from."""
    result = copy.deepcopy(dict(document))
    if overlay is not None and overlay.arguments:
        schema = result["inputSchema"]
        schema["properties"] = {
            **schema.get("properties", {}),
            **copy.deepcopy(overlay.arguments),
        }
    return result


def checked(document: Mapping[str, Any], overlay: Overlay | None) -> dict[str, Any]:
    """The contract that validates calls: ``document`` with the overlay's arguments and
    checks added to its inputSchema (``document`` itself is left as it is)."""
    result = extended(document, overlay)
    for pointer, keywords in (overlay.checks if overlay is not None else {}).items():
        target = _resolve(result, pointer)
        assert isinstance(target, dict)  # overlay_problems refused any other
        target.update(copy.deepcopy(keywords))
    return result


def overlaid(document: Mapping[str, Any], overlay: Overlay | None) -> dict[str, Any]:
    """The document as tools/list says it: the overlay's texts and annotations over the
    contract, and no ``_meta`` (provenance stays in schemas/ and docs/tools.md). The
    advice is not in it: it is served only with the tools it names. The overlay's own
    arguments are served as the contract's are."""
    served = {key: value for key, value in extended(document, overlay).items() if key != "_meta"}
    if overlay is None:
        return served
    if overlay.description is not None:
        served["description"] = overlay.description
    for key, texts in (("description", overlay.descriptions), ("title", overlay.titles)):
        for pointer, text in texts.items():
            target = _resolve(served, pointer)
            assert isinstance(target, dict)  # overlay_problems refused any other
            if text:
                target[key] = text
            else:
                target.pop(key, None)
    served["annotations"] = {**(document.get("annotations") or {}), **overlay.annotations}
    return served


def _resolve(document: Any, pointer: str) -> Any:
    """The value at a JSON Pointer (RFC 6901); None when it names nothing."""
    value = document
    for raw in pointer.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value
