"""The generic binding: what a start pays for, and what a tool's first call loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schemux.binding import ToolBinding
from schemux.generated.tools import TOOL_DOCUMENTS

# Run outside the repository, so ``schemux`` is the installed package (with its generated/
# and handlers/), not the bare source folder.
PROBE = """
import json, sys
from schemux.config import Settings
from schemux.context import ToolContext
from schemux.generated.bindings import BINDINGS
from schemux.server import build_server
from schemux.tool_listing import tool_table

build_server(ToolContext(Settings()), BINDINGS)
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
    [("capture_pane", "Draft7Validator"), ("run_command", "Draft202012Validator")],
)
def test_validators_follow_each_schema_s_own_dialect(name: str, dialect: str) -> None:
    binding = ToolBinding(document=TOOL_DOCUMENTS[name], input_model="unused")

    assert type(binding.input_validator).__name__ == dialect
    assert type(binding.output_validator).__name__ == dialect
    assert binding.input_validator.schema is TOOL_DOCUMENTS[name]["inputSchema"]
