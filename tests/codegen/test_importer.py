"""The importer, run on copies of the repository: documents, idempotence, refusals."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.__main__ import main
from codegen.importer import PROVENANCE, UPSTREAM_META, plan_import
from tests.codegen.overlay_files import remove_overlay, write_overlay

Snapshot = dict[str, bytes]


def upstream_file(root: Path, prefix: str) -> Path:
    (path,) = (root / "schemas" / "upstream").glob(f"{prefix}_*.txt")
    return path


def tool_document(root: Path, name: str) -> dict[str, object]:
    document = json.loads((root / "schemas" / "tools" / f"{name}.json").read_text("utf-8"))
    assert isinstance(document, dict)
    return document


def test_documents_have_the_tool_shape_and_provenance(repo: Path) -> None:
    upstream = json.loads(upstream_file(repo, "000").read_text("utf-8"))

    document = tool_document(repo, "read_program")

    assert list(document) == [
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "_meta",
    ]
    assert document["title"] == "Read a started program"
    # Schemas exactly as upstream wrote them, key order included.
    assert json.dumps(document["inputSchema"]) == json.dumps(upstream["inputSchema"])
    assert json.dumps(document["outputSchema"]) == json.dumps(upstream["outputSchema"])
    meta = document["_meta"]
    assert isinstance(meta, dict)
    assert meta[UPSTREAM_META] == upstream["meta"]
    assert meta[PROVENANCE] == {
        "origin": "upstream",
        "upstreamFile": "schemas/upstream/000_5f93f95652b9e95f.txt",
        "format": "json-descriptor",
        "repository": "libtmux/libtmux-ts",
        "revision": "f7b03a361f7c97677406b4ab937b2772ddb5f7dd",
        "sourceFile": "packages/mcp/src/tools/programs.ts",
        "sourceLine": 378,
        "sha256": "30f69860e697e9e41c9226d11ecc82e34df4fd536fd0580ea6d12a569c59faa0",
    }


def test_page_documents_record_the_product_and_have_no_title(repo: Path) -> None:
    capture = tool_document(repo, "tmux_capture")
    run_program = tool_document(repo, "run_program")

    assert "title" not in capture
    assert "title" not in run_program
    assert capture["_meta"] == {
        PROVENANCE: {
            "origin": "upstream",
            "upstreamFile": "schemas/upstream/002_87064d815a28a871.txt",
            "format": "documentation-page",
            "product": "toolMCPv0.1.0.alpha.2",
            "sha256": "b6c8426763141f41c93e34806e8cb4023dbbc396b27d5eb71aa2e5f8cde44f48",
        }
    }


def test_formats_are_told_by_content_not_name(repo: Path) -> None:
    before = plan_import(repo).documents
    # Swap the names of a descriptor and a page, and give both misleading extensions.
    descriptor, page = upstream_file(repo, "000"), upstream_file(repo, "003")
    descriptor.rename(page.with_name("003_page.html"))
    page.rename(descriptor.with_name("000_descriptor.json"))

    after = plan_import(repo).documents

    assert after["read_program"]["_meta"][PROVENANCE]["upstreamFile"].endswith("003_page.html")
    assert after["run_program"]["_meta"][PROVENANCE]["format"] == "documentation-page"
    for document in (*before.values(), *after.values()):
        document["_meta"][PROVENANCE].pop("upstreamFile", None)
    assert after == before


def _truncate(root: Path) -> str:
    path = upstream_file(root, "001")
    path.write_text(path.read_text("utf-8")[:2000], "utf-8")
    return f"{path.relative_to(root)}: JSON tool descriptor: truncated JSON"


def _drop_output_schema(root: Path) -> str:
    path = upstream_file(root, "003")
    text = path.read_text("utf-8")
    path.write_text(text[: text.index("Output schema")], "utf-8")
    return f"{path.relative_to(root)}: documentation page: no 'Output schema'"


def _break_json_schema(root: Path) -> str:
    path = upstream_file(root, "000")
    descriptor = json.loads(path.read_text("utf-8"))
    descriptor["inputSchema"]["properties"]["cursor"]["minimum"] = "zero"
    path.write_text(json.dumps(descriptor, indent=2), "utf-8")
    return (
        f"{path.relative_to(root)}: input schema: not valid JSON Schema at "
        "properties/cursor/minimum: 'zero' is not of type 'number'"
    )


def _output_root_not_object(root: Path) -> str:
    path = upstream_file(root, "001")
    descriptor = json.loads(path.read_text("utf-8"))
    del descriptor["outputSchema"]["type"]
    path.write_text(json.dumps(descriptor, indent=2), "utf-8")
    return f'{path.relative_to(root)}: output schema: root lacks "type": "object"'


def _duplicate_tool(root: Path) -> str:
    original = upstream_file(root, "001")
    duplicate = original.with_name("004_again.txt")
    duplicate.write_bytes(original.read_bytes())
    return (
        f"{duplicate.relative_to(root)}: tool 'run_command' is already defined by "
        f"{original.relative_to(root)}"
    )


@pytest.mark.parametrize(
    "break_upstream",
    [_truncate, _drop_output_schema, _break_json_schema, _output_root_not_object, _duplicate_tool],
    ids=["truncated JSON", "no output schema", "invalid schema", "output not object", "duplicate"],
)
def test_broken_upstream_stops_the_import_untouched(
    break_upstream: Callable[[Path], str],
    repo: Path,
    snapshot: Callable[..., Snapshot],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A pending, valid change that a partial import would write.
    (repo / "schemas" / "tools" / "read_program.json").unlink()
    expected_problem = break_upstream(repo)
    before = snapshot(repo, "schemas/tools", "generated")

    status = main(["--root", str(repo)])

    assert status == 1
    assert expected_problem in capsys.readouterr().err
    assert snapshot(repo, "schemas/tools", "generated") == before


def test_authored_documents_are_never_touched(
    repo: Path, snapshot: Callable[..., Snapshot], capsys: pytest.CaptureFixture[str]
) -> None:
    authored = repo / "schemas" / "tools" / "start_program.json"
    # Deliberately not in the importer's own serialization (indent 4).
    authored.write_text(
        json.dumps(
            {
                "name": "start_program",
                "description": "Start a program in a pane of its own.",
                "inputSchema": {"type": "object", "properties": {"argv": {"type": "array"}}},
                "outputSchema": {"type": "object", "properties": {"programId": {"type": "string"}}},
                "_meta": {PROVENANCE: {"origin": "authored"}},
            },
            indent=4,
        ),
        "utf-8",
    )
    before = authored.read_bytes()
    write_overlay(repo, "start_program")  # its facts, without the fields it lost

    assert main(["--root", str(repo)]) == 0

    assert authored.read_bytes() == before
    assert "start_program" in capsys.readouterr().out  # reported as a new tool
    served = json.loads((repo / "generated" / "contracts.json").read_text("utf-8"))
    assert served["start_program"] == json.loads(before)


def test_upstream_tool_clashing_with_an_authored_one_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = repo / "schemas" / "tools" / "run_command.json"
    document = json.loads(path.read_text("utf-8"))
    document["_meta"] = {PROVENANCE: {"origin": "authored"}}
    path.write_text(json.dumps(document), "utf-8")

    assert main(["--root", str(repo)]) == 1

    assert (
        "schemas/upstream/001_ca8fbe17a229e663.txt: tool 'run_command' clashes with the "
        "authored document schemas/tools/run_command.json"
    ) in capsys.readouterr().err


def test_removed_upstream_file_removes_its_tool(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream_file(repo, "000").unlink()
    assert main(["--root", str(repo)]) == 1  # its overlay is left without a contract
    assert (
        "schemas/overlays/read_program.toml: no contract schemas/tools/read_program.json"
        in capsys.readouterr().err
    )
    remove_overlay(repo, "read_program")

    assert main(["--root", str(repo)]) == 0

    assert not (repo / "schemas" / "tools" / "read_program.json").exists()
    assert not (repo / "generated" / "models" / "read_program.py").exists()
    output = capsys.readouterr().out
    assert "BREAKING    tool: tool removed" in output
    assert "deleted schemas/tools/read_program.json" in output


def test_a_descriptor_without_output_schema_takes_the_one_authored_from_its_model(
    repo: Path,
) -> None:
    upstream = json.loads(upstream_file(repo, "006").read_text("utf-8"))
    model = json.loads(
        (repo / "schemas/upstream/result-models/CaptureSinceResult.json").read_text("utf-8")
    )
    assert "outputSchema" not in upstream

    document = tool_document(repo, "capture_since")

    output = document["outputSchema"]
    assert isinstance(output, dict)
    assert list(output["properties"]) == list(model["properties"])
    assert output["required"] == model["required"]
    assert output["additionalProperties"] is False
    meta = document["_meta"]
    assert isinstance(meta, dict)
    assert meta[PROVENANCE]["outputSchema"] == "schemas/outputs/capture_since.json"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda authored: authored["outputSchema"]["properties"].pop("lines_missed"),
            "schemas/outputs/capture_since.json: fields ['pane_id', 'cursor', 'lines', "
            "'elapsed_seconds', 'truncated', 'truncated_lines', 'truncated_bytes'] are not "
            "schemas/upstream/result-models/CaptureSinceResult.json's",
        ),
        (
            lambda authored: authored["outputSchema"]["properties"]["cursor"].update(
                type="integer"
            ),
            "field 'cursor' is not of schemas/upstream/result-models/CaptureSinceResult.json's "
            "type",
        ),
        (
            lambda authored: authored["outputSchema"]["required"].pop(),
            "required fields differ",
        ),
        (
            lambda authored: authored["outputSchema"].pop("additionalProperties"),
            "no additionalProperties: false",
        ),
        (lambda authored: authored.update(tool="snapshot_pane"), "authors the outputSchema of"),
    ],
)
def test_an_authored_output_schema_must_have_exactly_the_models_fields(
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], object],
    problem: str,
) -> None:
    path = repo / "schemas" / "outputs" / "capture_since.json"
    authored = json.loads(path.read_text("utf-8"))
    change(authored)
    path.write_text(json.dumps(authored), "utf-8")

    assert main(["--root", str(repo)]) == 1

    assert problem in capsys.readouterr().err


def test_a_descriptor_without_output_schema_and_no_authored_one_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "schemas" / "outputs" / "snapshot_pane.json").unlink()

    assert main(["--root", str(repo)]) == 1

    assert (
        "schemas/upstream/008_3f28cd8155a4f3ea.txt: declares no outputSchema, and "
        "schemas/outputs/snapshot_pane.json authors none"
    ) in capsys.readouterr().err
