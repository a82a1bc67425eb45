"""Pydantic models of one tool's input and output, written by datamodel-code-generator.

The generator is given a copy of the tool document whose schemas are reshaped, for the
models only, where its output would otherwise be awkward (see :func:`model_schema`).
The served schemas, and the validators built from them, are never reshaped.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from datamodel_code_generator import generate
from datamodel_code_generator.enums import DataModelType, InputFileType, TargetPydanticVersion
from datamodel_code_generator.format import PythonVersion
from datamodel_code_generator.parser import LiteralType

from codegen.model_defaults import resolve
from codegen.schema_walk import SUBSCHEMA_MAPS, child_schemas

# Keywords that a scalar branch of ``anyOf: [<scalar>, {"type": "null"}]`` may carry for
# the pair to fold into one ``"type": [<scalar>, "null"]`` schema with the same meaning.
_SCALAR_TYPES = frozenset({"integer", "number", "string", "boolean"})
_FOLDABLE_KEYWORDS = frozenset(
    {
        "type",
        "description",
        "title",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
    }
)


def model_source(document: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> str:
    """The module text (not yet formatted) with ``<Pascal>Input`` and ``<Pascal>Output``.

    ``defaults`` maps JSON pointers into the inputSchema to the defaults the contract
    states in words only (``codegen.model_defaults``); the models carry them.

    The text is a function of the two alone, so a process that generates again (the
    codegen tests plan twenty times over documents mostly unchanged) reuses it: the
    generator takes about a tenth of a second of CPU a tool, a third of a generation.
    """
    return _model_source(json.dumps([document, defaults or {}]))


@functools.lru_cache(maxsize=512)
def _model_source(arguments: str) -> str:
    document, defaults = json.loads(arguments)
    name = document["name"]
    pascal = _pascal(name)
    input_schema = model_schema(document["inputSchema"])
    for pointer, value in defaults.items():
        target = resolve(input_schema, pointer)
        if target is None:
            raise ValueError(f"{name}: no subschema {pointer} to give a default")
        target["default"] = value
    tool = {
        "name": name,
        "inputSchema": titled(input_schema, f"{pascal}Input"),
        "outputSchema": titled(model_schema(document["outputSchema"]), f"{pascal}Output"),
    }
    source = generate(
        tool,
        input_file_type=InputFileType.MCPTools,
        output_model_type=DataModelType.PydanticV2BaseModel,
        target_python_version=PythonVersion.PY_311,
        # validate_by_name: handlers build models with snake_case keywords, and the
        # pydantic mypy plugin then types __init__ by field name.
        target_pydantic_version=TargetPydanticVersion.V2_11,
        # No global policy: each model follows its schema's additionalProperties (false:
        # forbid, true: allow, absent: pydantic's ignore), so a model never refuses a
        # property that the validated schema accepted.
        extra_fields=None,
        field_constraints=True,
        use_annotated=True,
        snake_case_field=True,
        allow_population_by_field_name=True,
        # the titles :func:`titled` gives name the classes (no Target1, Data1, ...)
        use_title_as_name=True,
        enum_field_as_literal=LiteralType.All,
        strict_nullable=True,
        disable_timestamp=True,
        # Folds wrappers such as RootModel[list[RootModel[str]]] into plain annotations.
        collapse_root_models=True,
        custom_file_header=(
            f'"""Models of the {name} tool, generated from schemas/tools/{name}.json.\n\n'
            'Do not edit: run ``python -m codegen``.\n"""'
        ),
        # ruff formats every generated file afterwards, with the project's settings.
        formatters=[],
    )
    if not isinstance(source, str):
        raise TypeError(f"datamodel-code-generator returned {type(source).__name__} for {name}")
    return source


def model_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A reshaped deep copy of ``schema`` that generates better models, same meaning.

    - ``anyOf: [<bounded scalar>, {"type": "null"}]`` becomes ``"type": [<scalar>,
      "null"]`` with the bounds: datamodel-code-generator makes the former a RootModel per
      field, which handlers would have to wrap values in and which mypy --strict rejects.
    - a ``oneOf`` whose object branches each require a property with a distinct ``const``
      gets an OpenAPI ``discriminator`` on it, so the model is a discriminated union
      rather than a plain one (pydantic then picks the branch by that property).
    - ``pattern`` is left out: the validators match patterns as ECMA-262 does, pydantic
      with its own engine (Rust regex: other ``\\d``, ``\\s`` and ``.``), so a model that
      matched them again could refuse a value the validated schema accepted.
    """
    reshaped = copy.deepcopy(dict(schema))
    _reshape(reshaped)
    return reshaped


def _reshape(schema: dict[str, Any]) -> None:
    for children in _subschemas(schema):
        _reshape(children)
    _fold_nullable_scalar(schema)
    _add_discriminator(schema)
    if isinstance(schema.get("pattern"), str):
        del schema["pattern"]


def _subschemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [child for _, _, child in child_schemas(schema)]


def _fold_nullable_scalar(schema: dict[str, Any]) -> None:
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2 or {"type": "null"} not in branches:
        return
    scalar = branches[1 - branches.index({"type": "null"})]
    if (
        not isinstance(scalar, dict)
        or scalar.get("type") not in _SCALAR_TYPES
        or not scalar.keys() <= _FOLDABLE_KEYWORDS
        or scalar.keys() & (schema.keys() - {"anyOf"})
    ):
        return
    del schema["anyOf"]
    schema.update(scalar)
    schema["type"] = [scalar["type"], "null"]


def _add_discriminator(schema: dict[str, Any]) -> None:
    branches = schema.get("oneOf")
    if "discriminator" in schema or not isinstance(branches, list) or len(branches) < 2:
        return
    for name in sorted(_required_consts(branches[0])):
        values = [_required_consts(branch).get(name) for branch in branches]
        tags = [repr(value) for value in values]
        if None not in values and len(set(tags)) == len(tags):
            schema["discriminator"] = {"propertyName": name}
            return


def _required_consts(branch: Any) -> dict[str, Any]:
    """The required properties of an object branch that have a ``const`` value."""
    if not isinstance(branch, dict) or not isinstance(branch.get("properties"), dict):
        return {}
    return {
        name: subschema["const"]
        for name, subschema in branch["properties"].items()
        if name in branch.get("required", ())
        and isinstance(subschema, dict)
        and "const" in subschema
        and subschema["const"] is not None
    }


def titled(schema: dict[str, Any], root: str) -> dict[str, Any]:
    """``schema`` with titles on the subschemas the generator would otherwise number.

    The generator names a class after its property (``target`` -> ``Target``) and numbers
    the ones that clash (``Target1``), or a union's branches after the union
    (``TmuxCaptureOutput1``); a handler could import such a name only by its position
    in the schema. Titles, for the models only (served documents never carry them):

    - each branch of a ``oneOf`` whose branches each require a ``const`` of their own
      (the tag) is ``<Context><Value>``: ``DataSnapshot`` for ``mode: "snapshot"``, and
      for a boolean tag ``<Context><Name>`` or ``<Context>Not<Name>``
      (``TmuxCaptureOutputOk``, ``TmuxCaptureOutputNotOk`` for ``ok``);
    - each branch of an untagged ``oneOf`` is ``<Context>With<Names>`` after the
      properties it requires and its siblings do not, else ``<Context>Without<Names>``
      after those its siblings require (``TmuxCaptureInputWithCursor``,
      ``TmuxCaptureInputWithoutCursor``);
    - objects that share a context with a different object (``target`` of a session, a
      window and a pane) and require a string ``const`` are ``<Context><Value>``
      (``TargetSession``, ``TargetWindow``, ``TargetPane``).

    ``<Context>`` is a subschema's property name in PascalCase (an array's items take
    the array's), the root's is ``root``. Existing titles are kept.
    """
    contexts: dict[str, list[dict[str, Any]]] = {}
    _collect_contexts(schema, root, contexts)
    clashing = {
        id(found)
        for found_list in contexts.values()
        if len({repr(found) for found in found_list}) > 1
        for found in found_list
    }
    _title(schema, root, clashing)
    schema.setdefault("title", root)
    return schema


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name))


def _child_contexts(schema: dict[str, Any], context: str) -> list[tuple[dict[str, Any], str]]:
    """Each subschema with the context it names classes in."""
    return [
        (child, _pascal(str(name)) if keyword in SUBSCHEMA_MAPS else context)
        for keyword, name, child in child_schemas(schema)
    ]


def _collect_contexts(
    schema: dict[str, Any], context: str, found: dict[str, list[dict[str, Any]]]
) -> None:
    if schema.get("type") == "object" and "properties" in schema:
        found.setdefault(schema.get("title", context), []).append(schema)
    for child, child_context in _child_contexts(schema, context):
        _collect_contexts(child, child_context, found)


def _title(schema: dict[str, Any], context: str, clashing: set[int]) -> None:
    context = schema.get("title", context)
    branches = schema.get("oneOf")
    if isinstance(branches, list) and len(branches) > 1:
        names = _tag_names(branches) or _requirement_names(branches)
        for branch, name in zip(branches, names, strict=True):
            if isinstance(branch, dict):
                branch.setdefault("title", f"{context}{name}")
    elif id(schema) in clashing and "title" not in schema:
        tags = [value for value in _required_consts(schema).values() if isinstance(value, str)]
        if len(tags) == 1:
            schema["title"] = f"{context}{_pascal(tags[0])}"
    for child, child_context in _child_contexts(schema, context):
        _title(child, child_context, clashing)


def _tag_names(branches: list[Any]) -> list[str] | None:
    """Each branch's name after the tag all branches require with distinct values."""
    for tag in sorted(_required_consts(branches[0])):
        values = [_required_consts(branch).get(tag) for branch in branches]
        if None in values or len({repr(value) for value in values}) != len(values):
            continue
        if all(isinstance(value, str) for value in values):
            return [_pascal(str(value)) for value in values]
        if all(isinstance(value, bool) for value in values):
            return [_pascal(tag) if value else f"Not{_pascal(tag)}" for value in values]
    return None


def _requirement_names(branches: list[Any]) -> list[str]:
    required = [
        set(branch.get("required", ())) if isinstance(branch, dict) else set()
        for branch in branches
    ]
    names = []
    for index, own in enumerate(required):
        others = set().union(*(r for i, r in enumerate(required) if i != index))
        if own - others:
            names.append("With" + "".join(_pascal(name) for name in sorted(own - others)))
        else:
            names.append("Without" + "".join(_pascal(name) for name in sorted(others - own)))
    return names
