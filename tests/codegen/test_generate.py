"""The generated package: determinism, lint, strict typing, validators and adapters."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from codegen.__main__ import main
from codegen.dialects import UnknownDialectError, validator_class
from codegen.formatting import format_json
from codegen.importer import is_upstream_document
from codegen.pipeline import Plan, out_of_date

Snapshot = dict[str, bytes]

# Stand-in handlers for the tools that have none in the repository, so that every tool is
# served; they build their results with snake_case keywords, as real handlers do.
STAND_IN_HANDLERS = {
    "read_program": """
from schemux.domain.call import Call
from schemux.generated.models.read_program import ReadProgramInput, ReadProgramOutput


async def handle(call: Call, request: ReadProgramInput) -> ReadProgramOutput:
    return ReadProgramOutput(
        cursor=request.cursor or 0,
        effective_timeout_ms=request.timeout_ms or 30000,
        ended=True,
        exit_status=None,
        lost_end=False,
        outcome="completed",
        output_complete=True,
        output_cut=False,
        signal="SIGTERM",
        text=request.program_id,
    )
""",
    "run_program": """
from schemux.domain.call import Call
from schemux.generated.models.run_program import RunProgramInput, RunProgramOutput


async def handle(call: Call, request: RunProgramInput) -> RunProgramOutput:
    return RunProgramOutput(
        dropped_lines=0,
        effective_timeout_ms=request.timeout_ms or 30000,
        exit_status=0,
        lost_end=False,
        lost_start=False,
        omitted_bytes=0,
        outcome="completed",
        output=" ".join(request.argv),
        output_complete=True,
        returned_bytes=0,
        signal=None,
        stderr=None,
    )
""",
    "tmux_capture": """
from schemux.domain.call import Call
from schemux.generated.models.tmux_capture import (
    Error,
    TmuxCaptureInput,
    TmuxCaptureOutput,
    TmuxCaptureOutputNotOk,
)


async def handle(call: Call, request: TmuxCaptureInput) -> TmuxCaptureOutput:
    error = Error(code="unsupported", message=request.root.target.id, delivery="not_sent")
    return TmuxCaptureOutput(TmuxCaptureOutputNotOk(ok=False, error=error))
""",
}

# Run inside the linked package: validator classes, and one call through each adapter.
BINDINGS_PROBE = """
import asyncio, json
from schemux.generated.bindings import BINDINGS, UNSERVED

arguments = {
    "read_program": {"programId": "p1", "timeoutMs": 5},
    "run_program": {"argv": ["echo", "hi"]},
    "tmux_capture": {"target": {"kind": "pane", "id": "%1", "generation": "g1"}},
}
report = {"unserved": list(UNSERVED), "tools": {}}
for name, binding in BINDINGS.items():
    entry = {
        "input": type(binding.input_validator).__name__,
        "output": type(binding.output_validator).__name__,
    }
    if name in arguments:
        assert binding.input_validator.is_valid(arguments[name])
        result = asyncio.run(binding.call(None, arguments[name]))
        entry["result"] = result
        entry["result_valid"] = binding.output_validator.is_valid(result)
    report["tools"][name] = entry
run_command, read_program = BINDINGS["run_command"], BINDINGS["read_program"]
report["integer_checks"] = [
    run_command.input_validator.is_valid({"command": "ls", "max_lines": 5}),
    run_command.input_validator.is_valid({"command": "ls", "max_lines": "5"}),
    read_program.input_validator.is_valid({"programId": "p1", "cursor": "5"}),
]
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def served_repo(copy_repo: Callable[[str], Path]) -> Path:
    """A repository copy where every tool has a handler, generated afresh."""
    root = copy_repo("served")
    for name, source in STAND_IN_HANDLERS.items():
        (root / "handlers" / f"{name}.py").write_text(source.lstrip(), "utf-8")
    assert main(["--root", str(root)]) == 0
    return root


def test_generation_is_deterministic_and_a_second_run_changes_nothing(
    copy_repo: Callable[[str], Path],
    snapshot: Callable[..., Snapshot],
    repo_root: Path,
    repo_plan: Plan,
) -> None:
    root = copy_repo("afresh")
    for path in (root / "generated").rglob("*.*"):
        path.unlink()
    for path in (root / "schemas" / "tools").glob("*.json"):
        if is_upstream_document(json.loads(path.read_text("utf-8"))):
            path.unlink()  # authored documents are codegen's input, not its output
    assert main(["--root", str(root)]) == 0
    generated = snapshot(root, "generated", "schemas/tools")

    # the same as the repository's, and as the session's other run (repo_plan) plans, so a
    # second run here would change nothing (and report nothing: test_check)
    assert generated == snapshot(repo_root, "generated", "schemas/tools")
    assert out_of_date(root, repo_plan) == []
    planned = {
        path.as_posix(): text.encode("utf-8")
        for path, text in repo_plan.files.items()
        if text is not None
        and (path.parts[0] == "generated" or path.parent.as_posix() == "schemas/tools")
    }
    assert {name: generated.get(name) for name in planned} == planned
    for name in set(generated) - set(planned):  # only the authored documents, never planned
        assert not is_upstream_document(json.loads(generated[name]))


def test_public_names_of_the_generated_package(repo_root: Path) -> None:
    bindings = (repo_root / "generated" / "bindings.py").read_text("utf-8")
    models = (repo_root / "generated" / "models" / "__init__.py").read_text("utf-8")

    assert "\nBINDINGS: dict[str, ToolBinding] = load_bindings(HANDLED)\n" in bindings
    assert "\nUNSERVED: tuple[str, ...] = (" in bindings
    for model in ("RunCommandInput", "ReadProgramOutput", "TmuxCaptureInput", "RunProgramOutput"):
        assert f'    "{model}",\n' in models


def test_bound_documents_are_the_schema_files(
    served_repo: Path, schemux_package: Callable[[Path], Path]
) -> None:
    tree = schemux_package(served_repo)
    probe = (
        "import json; from schemux.generated.bindings import BINDINGS; "
        "print(json.dumps({name: b.document for name, b in BINDINGS.items()}))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], cwd=tree, capture_output=True, text=True, check=True
    )

    served = json.loads(completed.stdout)

    assert set(served) == {path.stem for path in (served_repo / "schemas" / "tools").iterdir()}
    for name, document in served.items():
        on_disk = (served_repo / "schemas" / "tools" / f"{name}.json").read_text("utf-8")
        assert json.dumps(document) == json.dumps(json.loads(on_disk))


def test_generated_json_is_laid_out_stably(repo_root: Path) -> None:
    for name in ("contracts.json", "serving.json"):
        text = (repo_root / "generated" / name).read_text("utf-8")
        assert text.endswith("}\n")
        assert format_json(json.loads(text)) == text


def test_generated_code_passes_ruff(served_repo: Path) -> None:
    for command in (["check", "generated"], ["format", "--check", "generated"]):
        completed = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=served_repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr


def test_generated_package_and_handlers_pass_mypy_strict(
    served_repo: Path, mypy_strict: Callable[[Path], subprocess.CompletedProcess[str]]
) -> None:
    completed = mypy_strict(served_repo)

    assert completed.returncode == 0, completed.stdout


def test_bindings_validate_per_own_dialect_and_adapt_results(
    served_repo: Path, schemux_package: Callable[[Path], Path]
) -> None:
    tree = schemux_package(served_repo)
    completed = subprocess.run(
        [sys.executable, "-c", BINDINGS_PROBE], cwd=tree, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    tools = report["tools"]

    assert not set(report["unserved"]) & {*STAND_IN_HANDLERS, "run_command"}
    # Draft-07 schemas get Draft7Validator; no $schema (run_command) or 2020-12 get 2020-12.
    upstream = ("read_program", "run_command", "run_program", "tmux_capture")
    assert {name: (tools[name]["input"], tools[name]["output"]) for name in upstream} == {
        "read_program": ("Draft7Validator", "Draft7Validator"),
        "run_command": ("Draft202012Validator", "Draft202012Validator"),
        "run_program": ("Draft7Validator", "Draft7Validator"),
        "tmux_capture": ("Draft202012Validator", "Draft202012Validator"),
    }
    # jsonschema, unlike pydantic's lax mode, refuses "5" for an integer.
    assert report["integer_checks"] == [True, False, False]
    # Results come back in wire form (aliases, unset fields left out) and validate.
    assert tools["read_program"]["result"]["effectiveTimeoutMs"] == 5
    assert tools["tmux_capture"]["result"] == {
        "error": {"code": "unsupported", "delivery": "not_sent", "message": "%1"},
        "ok": False,
    }
    assert all(tools[name]["result_valid"] for name in STAND_IN_HANDLERS)


def test_unserved_tools_are_named_without_bindings(repo_root: Path) -> None:
    bindings = (repo_root / "generated" / "bindings.py").read_text("utf-8")
    handlers = {path.stem for path in (repo_root / "handlers").glob("*.py")}
    tools = {path.stem for path in (repo_root / "schemas" / "tools").glob("*.json")}
    unserved = sorted(tools - handlers)

    [assignment] = [
        node
        for node in ast.parse(bindings).body
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "UNSERVED"
    ]
    assert assignment.value is not None
    assert ast.literal_eval(assignment.value) == tuple(unserved)
    for name in tools & handlers:
        assert f'    HandledTool("{name}", ' in bindings


def test_validator_class_follows_dollar_schema() -> None:
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    draft2020 = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}

    assert validator_class(draft7) is Draft7Validator
    assert validator_class(draft2020) is Draft202012Validator
    assert validator_class({"type": "object"}) is Draft202012Validator
    with pytest.raises(UnknownDialectError, match="unknown \\$schema"):
        validator_class({"$schema": "https://example.com/my-dialect", "type": "object"})
