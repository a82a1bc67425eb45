"""``python -m codegen`` reports the projections, keeps them current, and stops on a served
document that breaks a provider rule."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.codegen.overlay_files import remove_overlay

Snapshot = dict[str, bytes]
CodegenCli = Callable[..., subprocess.CompletedProcess[str]]


def test_a_run_reports_new_and_changed_projections_once(
    repo: Path, codegen_cli: CodegenCli
) -> None:
    serving = repo / "generated" / "serving.json"
    entries = json.loads(serving.read_text("utf-8"))
    entries["read_program"]["projectedInputSchema"]["properties"]["maxLines"]["minimum"] = 2
    serving.write_text(json.dumps(entries), "utf-8")
    # its contract no longer arrives at all
    (repo / "schemas" / "upstream" / "012_e6e62525914b02e5.txt").unlink()
    (repo / "schemas" / "outputs" / "capture_pane.json").unlink()
    remove_overlay(repo, "capture_pane")

    completed = codegen_cli(repo)

    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    header = "Projections served instead of the exact inputSchema (which still validates calls):"
    start = lines.index(header)
    assert lines[start + 1 : start + 3] == [
        "  capture_pane: no longer projected; the exact inputSchema is served",
        "  read_program (changed): $schema dropped; exclusiveMinimum on an integer served as "
        "minimum",
    ]
    again = codegen_cli(repo)
    assert again.returncode == 0, again.stderr
    assert again.stdout == ""


def test_a_run_reports_every_projection_as_new_when_none_was_generated(
    repo: Path, codegen_cli: CodegenCli
) -> None:
    (repo / "generated" / "serving.json").unlink()

    completed = codegen_cli(repo)

    assert completed.returncode == 0, completed.stderr
    assert (
        "  tmux_capture (new): root oneOf merged (2 forms); $schema dropped; one-variant oneOf "
        "unwrapped; additionalProperties dropped; const served as a one-value string enum"
    ) in completed.stdout.splitlines()


def test_check_covers_projections_and_their_docs_section(
    repo: Path, codegen_cli: CodegenCli
) -> None:
    serving = repo / "generated" / "serving.json"
    serving.write_text(serving.read_text("utf-8").replace("one of 2 forms", "one of 3"), "utf-8")
    protocol = repo / "docs" / "protocol.md"
    protocol.write_text(protocol.read_text("utf-8").replace("- `tmux_capture`:", "- `x`:"), "utf-8")

    completed = codegen_cli(repo, "--check")

    assert completed.returncode == 1
    assert completed.stderr.splitlines() == [
        "would change: docs/protocol.md",
        "would change: generated/serving.json",
    ]


def test_the_projections_section_lists_each_projected_tool(repo_root: Path) -> None:
    protocol = (repo_root / "docs" / "protocol.md").read_text("utf-8")
    section = protocol.split("<!-- projections:begin -->\n")[1].split("<!-- projections:end -->")[0]

    assert (
        "- `tmux_capture`: root oneOf merged (2 forms); $schema dropped; one-variant oneOf "
        "unwrapped; additionalProperties dropped; const served as a one-value string enum.\n"
    ) in section


def test_a_served_document_that_breaks_a_rule_stops_codegen(
    repo: Path, codegen_cli: CodegenCli, snapshot: Callable[..., Snapshot]
) -> None:
    authored = repo / "schemas" / "tools" / "stop_program.json"
    document = json.loads(authored.read_text("utf-8"))
    document["inputSchema"]["patternProperties"] = {"^x-": {"type": "string"}}
    authored.write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    before = snapshot(repo, ".")

    completed = codegen_cli(repo)

    assert completed.returncode == 1
    assert completed.stderr.splitlines() == [
        "codegen: stopped, nothing written:",
        "  served inputSchema of stop_program: gemini rule schema-field (only fields of the "
        "Schema object (an OpenAPI 3.0 subset)) broken at (root): 'patternProperties' is not "
        "a Schema field; see https://ai.google.dev/api/caching#Schema",
    ]
    assert snapshot(repo, ".") == before
