"""Defaults a contract states in words only reach its models, never what is served."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.model_defaults import MODEL_DEFAULTS, model_defaults, resolve
from schemux.generated.models.read_program import ReadProgramInput
from schemux.generated.models.tmux_capture import TmuxCaptureInput, TmuxCaptureInputWithoutCursor
from tests.generated_data import TOOL_DOCUMENTS

CodegenCli = Callable[..., subprocess.CompletedProcess[str]]


def test_models_carry_the_defaults_and_served_schemas_do_not() -> None:
    request = ReadProgramInput.model_validate({"programId": "p1"})
    capture = TmuxCaptureInput.model_validate(
        {"target": {"kind": "pane", "id": "%1", "generation": "g"}}
    ).root

    assert request.timeout_ms == 30000
    assert isinstance(capture, TmuxCaptureInputWithoutCursor)
    assert (capture.max_lines, capture.max_bytes, capture.history_lines, capture.track) == (
        200,
        65536,
        0,
        False,
    )
    assert "default" not in TOOL_DOCUMENTS["read_program"]["inputSchema"]["properties"]["timeoutMs"]
    assert "default" not in json.dumps(TOOL_DOCUMENTS["tmux_capture"]["inputSchema"])


def test_every_entry_holds_against_its_contract(repo_root: Path) -> None:
    defaults, problems = model_defaults(repo_root, TOOL_DOCUMENTS)

    assert problems == []
    assert defaults["read_program"] == {"/properties/timeoutMs": 30000}


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            {"/properties/timeoutMs": {"default": 30000, "contract": "omitted is 9 seconds"}},
            "the contract does not say 'omitted is 9 seconds'",
        ),
        (
            {"/properties/timeoutMs": {"default": -1, "contract": "omitted is 30 seconds"}},
            "-1 breaks the property's schema",
        ),
        (
            {"/properties/nothing": {"default": 1, "contract": "omitted is 30 seconds"}},
            "no such subschema of the inputSchema",
        ),
    ],
)
def test_an_entry_the_contract_does_not_back_stops_codegen(
    repo: Path, codegen_cli: CodegenCli, entry: dict[str, Any], problem: str
) -> None:
    before = (repo / "generated" / "models" / "read_program.py").read_bytes()
    (repo / MODEL_DEFAULTS).write_text(json.dumps({"read_program": entry}), "utf-8")

    completed = codegen_cli(repo)

    assert completed.returncode == 1
    assert problem in completed.stderr
    assert (repo / "generated" / "models" / "read_program.py").read_bytes() == before


def test_a_property_with_a_default_of_its_own_is_refused(tmp_path: Path) -> None:
    entry = {"/properties/timeout": {"default": 5.0, "contract": "Default 8.0"}}
    (tmp_path / MODEL_DEFAULTS).parent.mkdir(parents=True)
    (tmp_path / MODEL_DEFAULTS).write_text(json.dumps({"wait_for_text": entry}), "utf-8")

    defaults, problems = model_defaults(tmp_path, TOOL_DOCUMENTS)

    assert defaults == {}
    where = f"{MODEL_DEFAULTS}: wait_for_text /properties/timeout"
    assert problems == [f"{where}: the contract has a default of its own"]


def test_pointers_resolve_into_forms() -> None:
    schema = TOOL_DOCUMENTS["tmux_capture"]["inputSchema"]

    assert (
        resolve(schema, "/oneOf/1/properties/cursor") == schema["oneOf"][1]["properties"]["cursor"]
    )
    assert resolve(schema, "/oneOf/2") is None
