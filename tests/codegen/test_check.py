"""``python -m codegen --check``: writes nothing, names every file that would change."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from codegen.contract_diff import format_report
from codegen.pipeline import Plan, format_overlays, format_projections, out_of_date

Snapshot = dict[str, bytes]
CodegenCli = Callable[..., subprocess.CompletedProcess[str]]


def test_check_is_clean_on_the_repository(repo_root: Path, repo_plan: Plan) -> None:
    # What `--check` compares (its exit status and output: the tests below)
    assert out_of_date(repo_root, repo_plan) == []
    assert format_report(repo_plan.changes) == ""
    assert format_overlays(repo_plan) == format_projections(repo_plan) == ""


def test_check_names_every_file_that_would_change(
    repo: Path, codegen_cli: CodegenCli, snapshot: Callable[..., Snapshot]
) -> None:
    (upstream,) = (repo / "schemas" / "upstream").glob("001_*.txt")
    descriptor = json.loads(upstream.read_text("utf-8"))
    descriptor["description"] = "Run a shell command in a pane."
    upstream.write_text(json.dumps(descriptor, indent=2), "utf-8")
    (repo / "generated" / "models" / "run_program.py").unlink()
    (repo / "generated" / "models" / "leftover.py").write_text("X = 1\n", "utf-8")
    (repo / "generated" / "leftover.json").write_text("{}\n", "utf-8")
    readme = repo / "README.md"
    readme.write_text(readme.read_text("utf-8").replace("| `programs` |", "| `progs` |"), "utf-8")
    before = snapshot(repo, ".")

    completed = codegen_cli(repo, "--check")

    assert completed.returncode == 1
    assert completed.stderr.splitlines() == [
        "would change: README.md",
        "would change: docs/tools.md",
        # the overlay replaces run_command's description: what tools/list says (serving.json)
        # is the same
        "would change: generated/contracts.json",
        "would delete: generated/leftover.json",
        "would delete: generated/models/leftover.py",
        "would change: generated/models/run_program.py",
        "would change: schemas/tools/run_command.json",
    ]
    assert "compatible  tool.description: description changed" in completed.stdout
    assert snapshot(repo, ".") == before


def test_readme_without_markers_is_left_alone(repo: Path, codegen_cli: CodegenCli) -> None:
    readme = repo / "README.md"
    readme.write_text("# schemux\n\nNo tool table here.\n", "utf-8")

    assert codegen_cli(repo).returncode == 0
    checked = codegen_cli(repo, "--check")

    assert readme.read_text("utf-8") == "# schemux\n\nNo tool table here.\n"
    assert checked.returncode == 0, checked.stderr


def test_missing_readme_is_no_problem(repo: Path, codegen_cli: CodegenCli) -> None:
    (repo / "README.md").unlink()

    checked = codegen_cli(repo, "--check")

    assert checked.returncode == 0, checked.stderr
    assert not (repo / "README.md").exists()


def test_readme_table_describes_each_family(repo_root: Path) -> None:
    """A row a family, so that the README stays short however many tools the contracts
    bring (docs/tools.md has each tool): whether it is served by default, its tools."""
    readme = (repo_root / "README.md").read_text("utf-8")
    table = readme.split("<!-- tools:begin -->\n")[1].split("<!-- tools:end -->")[0]

    assert table.splitlines()[:2] == [
        "| Family | Served | Tools | What for |",
        "|---|---|---|---|",
    ]
    assert (
        "| `programs` | by default | `read_program`, `run_program`, `start_program`, "
        "`stop_program` | Programs in a pane of their own |"
    ) in table
    assert "`run_command_on_hosts` (with several hosts)" in table
    assert "| `inspect` | when asked (`--tools inspect` or `all`) | `call_read" in table
