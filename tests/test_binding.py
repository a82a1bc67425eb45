"""The generic binding: what a start pays for, and what a tool's first call loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schemux.serving.binding import ToolBinding
from tests.generated_data import TOOL_DOCUMENTS

# Run outside the repository, so ``schemux`` is the installed package (with its generated/
# and handlers/), not the bare source folder.
PROBE = """
import json, sys
from schemux.config import Settings
from schemux.serving.state import ServingState
from schemux.generated.bindings import BINDINGS
from schemux.serving.server import build_server
from schemux.serving.tool_listing import tool_table

build_server(ServingState(Settings()), BINDINGS)
tool_table(BINDINGS, list(BINDINGS), mode="projected")

def loaded():
    prefixes = ("schemux.handlers.", "schemux.generated.models.", "jsonschema")
    return sorted(name for name in sys.modules if name.startswith(prefixes))

listed = loaded()
BINDINGS["capture_pane"].handler
BINDINGS["capture_pane"].input_validator
print(json.dumps({"listed": listed, "called": loaded()}))
"""


def test_listing_loads_no_handler_model_or_validator(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)

    assert report["listed"] == []
    called = report["called"]
    assert "schemux.handlers.capture_pane" in called
    assert "schemux.generated.models.capture_pane" in called
    assert "jsonschema" in called
    # only the called tool's handler and models
    assert not [name for name in called if name.endswith(".run_command")]


def test_a_handler_typed_against_another_model_is_refused() -> None:
    binding = ToolBinding(document=TOOL_DOCUMENTS["capture_pane"], input_model="CapturePaneOutput")

    with pytest.raises(TypeError, match="not the generated CapturePaneOutput"):
        _ = binding.handler


@pytest.mark.parametrize(
    ("name", "dialect"),
    [("read_program", "Draft7Validator"), ("run_command", "Draft202012Validator")],
)
def test_validators_follow_each_schema_s_own_dialect(name: str, dialect: str) -> None:
    binding = ToolBinding(document=TOOL_DOCUMENTS[name], input_model="unused")

    assert type(binding.input_validator).__name__ == dialect
    assert type(binding.output_validator).__name__ == dialect
    assert binding.input_validator.schema is TOOL_DOCUMENTS[name]["inputSchema"]


def test_openai_strict_nulls_are_absent_only_where_the_projection_made_them() -> None:
    binding = ToolBinding(
        document={"name": "t", "inputSchema": {"type": "object"}},
        input_model="TInput",
        absent_when_null=("a", "b.c", "d[].e"),
    )
    sent = {
        "a": None,
        "keep": None,
        "b": {"c": None, "other": None},
        "d": [{"e": None, "f": 1}, {"e": 2}, "not an object"],
    }
    assert binding.wire_arguments(sent, "openai-strict") == {
        "keep": None,
        "b": {"other": None},
        "d": [{"f": 1}, {"e": 2}, "not an object"],
    }
    assert sent["a"] is None  # the caller's arguments are left as sent
    assert binding.wire_arguments(sent, "projected") is sent
    assert binding.wire_arguments(sent, "exact") is sent
    assert binding.wire_arguments({"b": None}, "openai-strict") == {"b": None}


def test_advice_is_served_when_every_tool_it_needs_is() -> None:
    binding = ToolBinding(
        document={"name": "t", "description": "Do.", "inputSchema": {"type": "object"}},
        input_model="TInput",
        advice=((("u",), "Then u."), (("u", "v"), "Or u and v.")),
    )
    assert binding.served_document("projected", ["t"])["description"] == "Do."
    assert binding.served_document("projected", ["t", "u"])["description"] == "Do.\n\nThen u."
    assert binding.served_document("exact", ["u", "v"])["description"] == (
        "Do.\n\nThen u.\n\nOr u and v."
    )
