"""Pydantic models of one tool's input and output, written by datamodel-code-generator.

The generator is given a copy of the tool document whose schemas are reshaped, for the
models only, where its output would otherwise be awkward (see :func:`model_schema`).
The served schemas, and the validators built from them, are never reshaped.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from datamodel_code_generator import generate
from datamodel_code_generator.enums import DataModelType, InputFileType, TargetPydanticVersion
from datamodel_code_generator.format import PythonVersion
from datamodel_code_generator.parser import LiteralType

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
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def model_source(document: Mapping[str, Any]) -> str:
    """The module text (not yet formatted) with ``<Pascal>Input`` and ``<Pascal>Output``."""
    name = document["name"]
    tool = {
        "name": name,
        "inputSchema": model_schema(document["inputSchema"]),
        "outputSchema": model_schema(document["outputSchema"]),
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
    found = [schema[key] for key in _SUBSCHEMAS if isinstance(schema.get(key), dict)]
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            found.extend(value for value in schema[key].values() if isinstance(value, dict))
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            found.extend(value for value in schema[key] if isinstance(value, dict))
    return found


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
