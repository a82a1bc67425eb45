"""An upstream contract changes: codegen reports what breaks, mypy finds the handler it breaks."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.mark.long
def test_breaking_upstream_change_reaches_the_handler(
    repo_root: Path,
    repo: Path,
    codegen_process: Callable[..., subprocess.CompletedProcess[str]],
    mypy_strict: Callable[[Path], subprocess.CompletedProcess[str]],
) -> None:
    if not (repo_root / "handlers" / "run_command.py").is_file():
        pytest.skip("handlers/run_command.py does not exist yet")
    (upstream,) = (repo / "schemas" / "upstream").glob("001_*.txt")
    descriptor = json.loads(upstream.read_text("utf-8"))
    inputs, outputs = descriptor["inputSchema"], descriptor["outputSchema"]
    inputs["properties"]["shell"] = {"type": "string", "description": "Shell to run it in."}
    inputs["required"].append("shell")
    del outputs["properties"]["output_truncated_lines"]
    outputs["properties"]["elapsed_seconds"]["type"] = "string"
    upstream.write_text(json.dumps(descriptor, indent=2) + "\n", "utf-8")

    # schemux's overlay still describes the removed field: codegen names it, writes nothing
    stale = codegen_process(repo)
    assert stale.returncode == 1
    assert "output_truncated_lines is no schema of the contract" in stale.stderr
    overlay = repo / "schemas" / "overlays" / "run_command.toml"
    overlay.write_text(
        "".join(
            line
            for line in overlay.read_text("utf-8").splitlines(keepends=True)
            if "/output_truncated_lines" not in line
        ),
        "utf-8",
    )

    generated = codegen_process(repo)

    assert generated.returncode == 0, generated.stderr
    report = generated.stdout.splitlines()
    for line in (
        "    BREAKING    input.shell: new required input",
        "    BREAKING    output.elapsed_seconds: type changed: number -> string",
        "    BREAKING    output.output_truncated_lines: output field removed",
    ):
        assert line in report
    assert "wrote generated/models/run_command.py" in report

    checked = mypy_strict(repo)

    assert checked.returncode == 1
    handler_errors = [
        line for line in checked.stdout.splitlines() if "handlers/run_command.py" in line
    ]
    assert any('Unexpected keyword argument "output_truncated_lines"' in e for e in handler_errors)
    assert any('"elapsed_seconds"' in e for e in handler_errors)
