"""``schemas/upstream/README.md``: which tool each upstream file is, written by codegen."""

from __future__ import annotations

import json
from pathlib import Path

from codegen.importer import PROVENANCE, UPSTREAM_INDEX, is_upstream_document
from codegen.pipeline import Plan
from codegen.prompts import is_prompt_list
from codegen.upstream_readme import upstream_readme


def test_the_index_names_every_upstream_file_and_its_tool(repo_root: Path, repo_plan: Plan) -> None:
    index = (repo_root / UPSTREAM_INDEX).read_text("utf-8")
    rows = index.splitlines()

    assert repo_plan.files[UPSTREAM_INDEX] == index  # codegen's, and current
    listed = set()
    for path in sorted((repo_root / "schemas" / "tools").glob("*.json")):
        document = json.loads(path.read_text("utf-8"))
        if is_upstream_document(document):
            file = Path(document["_meta"][PROVENANCE]["upstreamFile"]).name
            [row] = [row for row in rows if row.startswith(f"| `{file}` |")]
            assert row.split(" | ")[1] == f"`{document['name']}`"
            listed.add(file)
        else:
            assert f"`{document['name']}`" in rows[-1]  # authored: no file of its own
    upstream = repo_root / "schemas" / "upstream"
    prompt_lists = {p.name for p in upstream.glob("*.txt") if is_prompt_list(p.read_text("utf-8"))}
    for file in prompt_lists:  # a prompt list's file is its prompts' rows
        assert any(row.startswith(f"| `{file}` | `") for row in rows)
    assert listed == {p.name for p in upstream.glob("*.txt")} - prompt_lists
    for model in (upstream / "result-models").iterdir():
        assert any(row.startswith(f"| `result-models/{model.name}` | `") for row in rows)


def test_a_renamed_file_is_listed_under_its_new_name(repo_root: Path) -> None:
    documents = {}
    for path in (repo_root / "schemas" / "tools").glob("*.json"):
        documents[path.stem] = json.loads(path.read_text("utf-8"))
    provenance = documents["run_command"]["_meta"][PROVENANCE]
    provenance["upstreamFile"] = "schemas/upstream/zz|odd.txt"  # a pipe would end a cell

    rows = upstream_readme(repo_root, documents).splitlines()

    assert [row for row in rows if "`run_command`" in row] == [
        "| `zz\\|odd.txt` | `run_command` | JSON tool descriptor | tmux-python/libtmux-mcp "
        "`src/libtmux_mcp/tools/pane_tools/__init__.py:96` at 4daddc0dfca9 |"
    ]
