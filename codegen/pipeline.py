"""One codegen run: what the repository should hold, compared with what it holds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codegen.contract_diff import Change, diff_tools
from codegen.generate import GENERATED_DIR, render_generated, served_documents, served_tools
from codegen.importer import plan_import
from codegen.readme import tools_table, with_tools_table

README = Path("README.md")


@dataclass(frozen=True)
class Plan:
    # Path relative to the root -> its wanted text, or None when it should not exist.
    files: dict[Path, str | None]
    # The tool contracts' changes against what generated/ serves now.
    changes: list[Change]


def make_plan(root: Path) -> Plan:
    """Import, generate and lay out the README table, all in memory.

    Raises :class:`codegen.importer.ImportFailed` when the import cannot go on.
    """
    imported = plan_import(root)
    documents = imported.documents
    served = served_tools(root, sorted(documents))
    files = {**imported.files, **render_generated(root, documents, served)}
    for path in sorted((root / GENERATED_DIR).rglob("*.py")):
        # generated/ is codegen's alone: whatever it would not write now is stale.
        files.setdefault(path.relative_to(root), None)
    readme_path = root / README
    if readme_path.is_file():
        readme = with_tools_table(
            readme_path.read_text(encoding="utf-8"), tools_table(documents, served)
        )
        if readme is not None:
            files[README] = readme
    return Plan(files=files, changes=diff_tools(served_documents(root), documents))


def out_of_date(root: Path, plan: Plan) -> list[Path]:
    """The planned files whose content (or existence) differs from the disk's."""
    return [path for path, text in sorted(plan.files.items()) if _current(root / path) != text]


def write(root: Path, plan: Plan) -> list[Path]:
    """Bring the disk in line with ``plan``; the paths written or deleted."""
    changed = out_of_date(root, plan)
    for path in changed:
        text = plan.files[path]
        if text is None:
            (root / path).unlink()
        else:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(text.encode("utf-8"))
    return changed


def _current(path: Path) -> str | None:
    return path.read_bytes().decode("utf-8") if path.is_file() else None
