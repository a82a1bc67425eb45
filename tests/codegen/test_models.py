"""The models: the schema reshaping they are generated from, and how they behave."""

from __future__ import annotations

import copy
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic
import pytest

from codegen.models import model_schema
from codegen.models import titled as titled_schema

MODELS = Path(__file__).resolve().parents[2] / "generated" / "models"

BOUNDED_NULLABLE = {
    "anyOf": [{"type": "integer", "minimum": -9, "maximum": 9}, {"type": "null"}],
    "description": "Exit status.",
}


def load_models(tool: str) -> ModuleType:
    """A generated models module, loaded from its file (it imports only pydantic)."""
    name = f"generated_models_under_test.{tool}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, MODELS / f"{tool}.py")
        assert spec is not None
        assert spec.loader is not None
        # Registered before it runs: pydantic resolves the models' annotations through it.
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def test_bounded_nullable_scalar_folds_into_a_type_list() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"exitStatus": BOUNDED_NULLABLE}}

    reshaped = model_schema(schema)

    assert reshaped["properties"]["exitStatus"] == {
        "description": "Exit status.",
        "type": ["integer", "null"],
        "minimum": -9,
        "maximum": 9,
    }
    assert schema["properties"]["exitStatus"] == BOUNDED_NULLABLE  # the original is kept


@pytest.mark.parametrize(
    "branch",
    [
        {"type": "string", "enum": ["a", "b"]},  # null is not among the values
        {"type": "object", "properties": {}},
        {"type": "integer", "description": "clashes with the outer description"},
    ],
    ids=["enum", "object", "clashing keyword"],
)
def test_other_nullable_unions_are_left_alone(branch: dict[str, Any]) -> None:
    schema = {"anyOf": [branch, {"type": "null"}], "description": "outer"}

    assert model_schema(schema) == schema


def test_const_tagged_variants_get_a_discriminator() -> None:
    def variant(tag: object, extra: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"ok": {"const": tag}, extra: {"type": "string"}},
            "required": ["ok", extra],
        }

    tagged = {"oneOf": [variant(True, "data"), variant(False, "error")]}
    same_tag = {"oneOf": [variant(True, "data"), variant(True, "error")]}

    assert model_schema(tagged)["discriminator"] == {"propertyName": "ok"}
    assert "discriminator" not in model_schema(same_tag)


def test_reshaping_reaches_nested_variants() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"oneOf": [{"properties": {}}]}},
            "data": {"oneOf": [{"type": "object", "properties": {"code": BOUNDED_NULLABLE}}]},
        },
    }

    reshaped = model_schema(copy.deepcopy(schema))

    assert reshaped["properties"]["data"]["oneOf"][0]["properties"]["code"]["type"] == [
        "integer",
        "null",
    ]


def test_models_take_snake_case_names_and_dump_wire_aliases() -> None:
    models = load_models("read_program")

    output = models.ReadProgramOutput(
        cursor=3,
        effective_timeout_ms=100,
        ended=False,
        exit_status=None,
        lost_end=False,
        outcome="running",
        output_complete=False,
        output_cut=False,
        signal=None,
        text="",
    )

    assert output.model_dump(by_alias=True)["effectiveTimeoutMs"] == 100
    assert models.ReadProgramInput.model_validate({"programId": "p"}).program_id == "p"


def test_models_follow_additional_properties_and_keep_constraints() -> None:
    models = load_models("read_program")

    # read_program's inputSchema allows other properties: its model ignores them
    request = models.ReadProgramInput.model_validate({"programId": "p", "shell": "bash"})
    assert request.model_dump(by_alias=True, exclude_unset=True) == {"programId": "p"}
    # stop_program's forbids them: so does its model
    with pytest.raises(pydantic.ValidationError, match="extra_forbidden"):
        load_models("stop_program").StopProgramInput.model_validate(
            {"programId": "p", "shell": "bash"}
        )
    with pytest.raises(pydantic.ValidationError, match="at most 64 characters"):
        models.ReadProgramInput.model_validate({"programId": "p" * 65})
    with pytest.raises(pydantic.ValidationError, match="less than or equal to 9007199254740991"):
        models.ReadProgramOutput.model_validate(
            {
                "cursor": 0,
                "effectiveTimeoutMs": 0,
                "ended": True,
                "exitStatus": 2**60,
                "lostEnd": False,
                "outcome": "completed",
                "outputComplete": True,
                "outputCut": False,
                "signal": None,
                "text": "",
            }
        )


def test_patterns_are_left_to_the_validators() -> None:
    """pydantic's regex engine is not ECMA-262; the validators are the one authority."""
    reshaped = model_schema(
        {
            "type": "object",
            "properties": {
                "paneId": {"type": "string", "pattern": "^%\\d+$"},
                "pattern": {"type": "string", "pattern": "^x$"},
            },
        }
    )
    assert reshaped["properties"] == {"paneId": {"type": "string"}, "pattern": {"type": "string"}}
    request = load_models("capture_pane").CapturePaneInput.model_validate({"pane_id": "%1\n"})
    assert request.pane_id == "%1\n"


def test_enums_and_consts_are_literals() -> None:
    models = load_models("run_program")

    with pytest.raises(pydantic.ValidationError, match="'window' or 'split'"):
        models.RunProgramInput.model_validate({"argv": ["ls"], "placement": "tab"})


def test_one_of_outputs_are_discriminated_root_models() -> None:
    models = load_models("tmux_capture")

    failure = models.TmuxCaptureOutput.model_validate(
        {"ok": False, "error": {"code": "gone", "message": "no pane", "delivery": "not_sent"}}
    )

    assert isinstance(failure.root, models.TmuxCaptureOutputNotOk)
    with pytest.raises(pydantic.ValidationError, match="union_tag_not_found"):
        models.TmuxCaptureOutput.model_validate({"error": {}})


def test_titles_name_union_branches_and_clashing_objects() -> None:
    reference: dict[str, Any] = {
        "type": "object",
        "properties": {"kind": {"const": "session"}, "id": {"type": "string"}},
        "required": ["kind", "id"],
    }
    window = copy.deepcopy(reference)
    window["properties"]["kind"] = {"const": "window"}
    schema: dict[str, Any] = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"ok": {"const": True}, "target": reference},
                "required": ["ok", "target"],
            },
            {
                "type": "object",
                "properties": {"ok": {"const": False}, "target": window},
                "required": ["ok"],
            },
        ],
        "properties": {
            "form": {
                "oneOf": [
                    {"type": "object", "properties": {"a": {}}, "required": ["a"]},
                    {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]},
                ]
            }
        },
    }

    titled = titled_schema(copy.deepcopy(schema), "ToolOutput")

    assert titled["title"] == "ToolOutput"
    ok, failed = titled["oneOf"]
    assert (ok["title"], failed["title"]) == ("ToolOutputOk", "ToolOutputNotOk")
    assert ok["properties"]["target"]["title"] == "TargetSession"
    assert failed["properties"]["target"]["title"] == "TargetWindow"
    forms = titled["properties"]["form"]["oneOf"]
    assert [form["title"] for form in forms] == ["FormWithoutB", "FormWithB"]
    # an object whose context clashes with no other keeps the generator's own name
    alone = titled_schema({"type": "object", "properties": {"target": reference}}, "X")
    assert "title" not in alone["properties"]["target"]


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.py")), ids=lambda path: path.stem)
def test_generated_classes_have_no_numbered_names(path: Path) -> None:
    names = re.findall(r"^class (\w+)", path.read_text("utf-8"), re.MULTILINE)

    assert [name for name in names if name[-1].isdigit()] == []
