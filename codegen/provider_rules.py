"""The lint: would the main model providers accept the tool as schemux serves it?

An MCP client hands each listed tool's name and ``inputSchema`` to its model provider as
a tool or function declaration. Every provider accepts only part of JSON Schema, and a
declaration it refuses fails the whole request (every tool of the session), so each
served document must pass the rules of all three. The rules are the providers' own,
each cited where it is checked:

Anthropic, Messages API ``tools[].input_schema`` (also Bedrock and Vertex AI):
  ANTHROPIC_TOOLS: the name pattern; ``input_schema`` is a JSON Schema object. Root
  ``oneOf``/``anyOf``/``allOf`` is refused with "input_schema does not support oneOf,
  allOf, or anyOf at the top level" (the API's own error; the page documents the root
  object shape).

OpenAI, function calling ``tools[].function.parameters``:
  OPENAI_FUNCTIONS: the name pattern; parameters are a JSON Schema object (a function
  without parameters is ``{"type": "object", "properties": {}}``).
  OPENAI_STRICT ("Supported schemas"): applied where strict mode can be in force without
  schemux asking for it, which is the Responses API, where a function sent without
  ``strict`` is normalized into strict mode: the root is an object and not ``anyOf``,
  nesting and property-count limits. Not applied: strict mode's "every property
  required" and "additionalProperties: false everywhere" (that normalization is
  OpenAI's, and schemux cannot make optional arguments required without changing the
  contract), nor its keyword subset (OpenAI documents dropping into best-effort
  non-strict mode, not refusal, for what it cannot normalize).

Gemini API and Vertex AI, ``functionDeclarations[].parameters``: the ``Schema`` object,
  "a select subset of an OpenAPI 3.0 schema object" (GEMINI_SCHEMA, VERTEX_SCHEMA). A
  field it does not define is refused ("Unknown name ..."), so the served schema may
  use only the fields both pages define: no ``$schema``, ``$ref``/``$defs``, ``const``,
  ``oneOf``, ``allOf``, ``not``, ``additionalProperties`` (Gemini API), exclusive
  bounds; ``type`` is one type (``nullable`` says null is allowed), ``enum`` lists
  strings, names in ``required`` are properties. GEMINI_FUNCTIONS: the name and
  parameter-name patterns.

A served document that the projection (``codegen.projection``) still cannot bring within
these rules stops codegen, naming the tool and the rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from codegen.schema_walk import PROPERTY_VALUES, child_schemas

ANTHROPIC_TOOLS = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use"
OPENAI_FUNCTIONS = "https://platform.openai.com/docs/guides/function-calling"
OPENAI_STRICT = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
GEMINI_FUNCTIONS = "https://ai.google.dev/gemini-api/docs/function-calling"
GEMINI_SCHEMA = "https://ai.google.dev/api/caching#Schema"
VERTEX_SCHEMA = "https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema"


@dataclass(frozen=True)
class Rule:
    provider: str
    id: str
    text: str
    source: str


ANTHROPIC_NAME = Rule(
    "anthropic", "tool-name", "the name matches ^[a-zA-Z0-9_-]{1,64}$", ANTHROPIC_TOOLS
)
ANTHROPIC_ROOT_OBJECT = Rule(
    "anthropic", "root-object", 'input_schema has "type": "object" at its root', ANTHROPIC_TOOLS
)
ANTHROPIC_ROOT_COMBINATOR = Rule(
    "anthropic",
    "root-combinator",
    "input_schema does not support oneOf, allOf, or anyOf at the top level",
    ANTHROPIC_TOOLS,
)
ANTHROPIC_JSON_SCHEMA = Rule(
    "anthropic", "json-schema", "input_schema is valid JSON Schema (2020-12)", ANTHROPIC_TOOLS
)
OPENAI_NAME = Rule(
    "openai", "function-name", "the name matches ^[a-zA-Z0-9_-]{1,64}$", OPENAI_FUNCTIONS
)
OPENAI_ROOT_OBJECT = Rule(
    "openai",
    "root-object",
    'parameters are an object schema: "type": "object" with "properties"',
    OPENAI_FUNCTIONS,
)
OPENAI_ROOT_COMBINATOR = Rule(
    "openai", "root-anyof", "the root object must not be anyOf (or oneOf/allOf)", OPENAI_STRICT
)
OPENAI_NESTING = Rule("openai", "nesting", "at most 5 levels of object nesting", OPENAI_STRICT)
OPENAI_PROPERTY_COUNT = Rule(
    "openai", "property-count", "at most 100 object properties in total", OPENAI_STRICT
)
GEMINI_NAME = Rule(
    "gemini",
    "function-name",
    "the name starts with a letter or _ and has only a-z, A-Z, 0-9, _, ., :, - (64 at most)",
    GEMINI_FUNCTIONS,
)
GEMINI_PARAMETER_NAME = Rule(
    "gemini",
    "parameter-name",
    "a parameter name starts with a letter or _ and has only a-z, A-Z, 0-9, _ (64 at most)",
    VERTEX_SCHEMA,
)
GEMINI_KEYWORD = Rule(
    "gemini",
    "schema-field",
    "only fields of the Schema object (an OpenAPI 3.0 subset)",
    GEMINI_SCHEMA,
)
GEMINI_TYPE = Rule(
    "gemini", "single-type", "type is one of its Type values (no type arrays)", GEMINI_SCHEMA
)
GEMINI_ENUM = Rule(
    "gemini", "string-enum", "enum is for a string type and lists strings", GEMINI_SCHEMA
)
GEMINI_REQUIRED = Rule(
    "gemini", "required-defined", "every name in required is one of the properties", GEMINI_SCHEMA
)
GEMINI_ITEMS = Rule("gemini", "items-schema", "items is one Schema (no tuples)", GEMINI_SCHEMA)

RULES = (
    ANTHROPIC_NAME,
    ANTHROPIC_ROOT_OBJECT,
    ANTHROPIC_ROOT_COMBINATOR,
    ANTHROPIC_JSON_SCHEMA,
    OPENAI_NAME,
    OPENAI_ROOT_OBJECT,
    OPENAI_ROOT_COMBINATOR,
    OPENAI_NESTING,
    OPENAI_PROPERTY_COUNT,
    GEMINI_NAME,
    GEMINI_PARAMETER_NAME,
    GEMINI_KEYWORD,
    GEMINI_TYPE,
    GEMINI_ENUM,
    GEMINI_REQUIRED,
    GEMINI_ITEMS,
)

# The Schema fields that the Gemini API and Vertex AI both define.
GEMINI_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
GEMINI_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
ROOT_COMBINATORS = ("oneOf", "anyOf", "allOf")

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_GEMINI_FUNCTION_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
_GEMINI_PARAMETER_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,63}$")
_MAX_NESTING = 5
_MAX_PROPERTIES = 100

Report = Callable[[Rule, str, str], None]


@dataclass(frozen=True)
class Violation:
    tool: str
    rule: Rule
    where: str
    detail: str

    def __str__(self) -> str:
        return (
            f"{self.tool}: {self.rule.provider} rule {self.rule.id} ({self.rule.text}) "
            f"broken at {self.where}: {self.detail}; see {self.rule.source}"
        )


def lint_tool(name: str, input_schema: Mapping[str, Any]) -> list[Violation]:
    """Every provider rule that the tool ``name`` serving ``input_schema`` breaks."""
    found: list[Violation] = []

    def report(rule: Rule, where: str, detail: str) -> None:
        found.append(Violation(name, rule, where, detail))

    for rule, pattern in (
        (ANTHROPIC_NAME, _TOOL_NAME),
        (OPENAI_NAME, _TOOL_NAME),
        (GEMINI_NAME, _GEMINI_FUNCTION_NAME),
    ):
        if not pattern.match(name):
            report(rule, "name", f"{name!r}")
    _check_root(input_schema, report)
    try:
        Draft202012Validator.check_schema(input_schema)
    except SchemaError as error:
        where = "/".join(str(part) for part in error.path) or "(root)"
        report(ANTHROPIC_JSON_SCHEMA, where, error.message)
    objects = 0
    for where, schema, depth in _subschemas(input_schema):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            objects += len(properties)
            if depth > _MAX_NESTING:
                report(OPENAI_NESTING, where, f"an object at nesting level {depth}")
        _check_gemini(where, schema, report)
    if objects > _MAX_PROPERTIES:
        report(OPENAI_PROPERTY_COUNT, "(all)", f"{objects} properties")
    return found


def _check_root(schema: Mapping[str, Any], report: Report) -> None:
    if schema.get("type") != "object":
        report(ANTHROPIC_ROOT_OBJECT, "(root)", f"type is {schema.get('type')!r}")
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), Mapping):
        report(OPENAI_ROOT_OBJECT, "(root)", "no object type with properties at the root")
    for combinator in ROOT_COMBINATORS:
        if combinator in schema:
            report(ANTHROPIC_ROOT_COMBINATOR, "(root)", f"root {combinator}")
            report(OPENAI_ROOT_COMBINATOR, "(root)", f"root {combinator}")


def _check_gemini(where: str, schema: Mapping[str, Any], report: Report) -> None:
    for keyword in schema:
        if keyword not in GEMINI_FIELDS:
            report(GEMINI_KEYWORD, where, f"{keyword!r} is not a Schema field")
    kind = schema.get("type")
    if "type" in schema and not (isinstance(kind, str) and kind.lower() in GEMINI_TYPES):
        report(GEMINI_TYPE, where, f"type {kind!r}")
    enum = schema.get("enum")
    if "enum" in schema and not (
        isinstance(enum, list)
        and all(isinstance(value, str) for value in enum)
        and str(kind).lower() == "string"
    ):
        report(GEMINI_ENUM, where, f"enum {enum!r} on type {kind!r}")
    properties = schema.get("properties")
    defined = properties if isinstance(properties, Mapping) else {}
    for required in schema.get("required") or ():
        if required not in defined:
            report(GEMINI_REQUIRED, where, f"{required!r} is required but not a property")
    for property_name in defined:
        if not _GEMINI_PARAMETER_NAME.match(str(property_name)):
            report(GEMINI_PARAMETER_NAME, f"{_join(where, 'properties')}", f"{property_name!r}")
    if "items" in schema and not isinstance(schema["items"], Mapping):
        report(GEMINI_ITEMS, where, "items is not one schema")


def _subschemas(
    schema: Mapping[str, Any], where: str = "(root)", depth: int = 1
) -> Iterator[tuple[str, Mapping[str, Any], int]]:
    """``schema`` and every schema inside it, with its path and object nesting depth."""
    yield where, schema, depth
    for keyword, name, child in child_schemas(schema):
        path = _join(where, keyword if name is None else f"{keyword}/{name}")
        yield from _subschemas(child, path, depth + 1 if keyword in PROPERTY_VALUES else depth)


def _join(where: str, part: str) -> str:
    return part if where == "(root)" else f"{where}/{part}"


OPENAI_STRICT_ROOT = Rule(
    "openai-strict", "root-object", "the root is an object, not anyOf", OPENAI_STRICT
)
OPENAI_STRICT_REQUIRED = Rule(
    "openai-strict", "all-required", "every property of an object is required", OPENAI_STRICT
)
OPENAI_STRICT_CLOSED = Rule(
    "openai-strict",
    "additional-properties",
    "additionalProperties: false on every object",
    OPENAI_STRICT,
)
OPENAI_STRICT_KEYWORD = Rule(
    "openai-strict",
    "supported-keyword",
    "only the supported keywords (no default, bounds, pattern, format, oneOf, allOf, $ref)",
    OPENAI_STRICT,
)
STRICT_RULES = (
    OPENAI_STRICT_ROOT,
    OPENAI_STRICT_REQUIRED,
    OPENAI_STRICT_CLOSED,
    OPENAI_STRICT_KEYWORD,
    OPENAI_NESTING,
    OPENAI_PROPERTY_COUNT,
)
# The keywords every strict-mode model takes; OpenAI lists bounds, pattern and format as
# not supported by some (fine-tuned) models, so the projection never serves them.
OPENAI_STRICT_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf"}
    | {"description"}
)


def lint_openai_strict(name: str, input_schema: Mapping[str, Any]) -> list[Violation]:
    """Every rule of OpenAI's strict mode that ``input_schema`` breaks."""
    found: list[Violation] = []

    def report(rule: Rule, where: str, detail: str) -> None:
        found.append(Violation(name, rule, where, detail))

    if input_schema.get("type") != "object" or "anyOf" in input_schema:
        report(OPENAI_STRICT_ROOT, "(root)", "not an object, or anyOf")
    objects = 0
    for where, schema, depth in _subschemas(input_schema):
        for keyword in schema:
            if keyword not in OPENAI_STRICT_KEYWORDS:
                report(OPENAI_STRICT_KEYWORD, where, f"{keyword!r}")
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            continue
        objects += len(properties)
        if depth > _MAX_NESTING:
            report(OPENAI_NESTING, where, f"an object at nesting level {depth}")
        if set(schema.get("required") or ()) != set(properties):
            report(OPENAI_STRICT_REQUIRED, where, f"required is {schema.get('required')!r}")
        if schema.get("additionalProperties") is not False:
            report(OPENAI_STRICT_CLOSED, where, "additionalProperties is not false")
    if objects > _MAX_PROPERTIES:
        report(OPENAI_PROPERTY_COUNT, "(all)", f"{objects} properties")
    return found
