"""Formatting generated files: Python with the project's pinned ruff and its pyproject
settings, JSON in one stable layout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def format_python(root: Path, sources: Mapping[Path, str]) -> dict[Path, str]:
    """Each of ``sources`` (by path relative to ``root``) after ``ruff check --fix`` (import
    order, unused imports) and ``ruff format``.

    The files are written under their paths to a scratch directory beside a copy of
    ``root``'s pyproject.toml, so ruff applies the repository's configuration (per-file
    ignores, first-party modules) exactly as a later ``ruff check`` of the written files
    will, and nothing in ``root`` is touched. Two ruff runs do them all: a run each file
    cost as much CPU again as the rest of a generation.
    """
    with tempfile.TemporaryDirectory(prefix="codegen-format-") as scratch:
        tree = Path(scratch)
        shutil.copyfile(root / "pyproject.toml", tree / "pyproject.toml")
        for relative, source in sources.items():
            (tree / relative).parent.mkdir(parents=True, exist_ok=True)
            (tree / relative).write_text(source, "utf-8")
        paths = [relative.as_posix() for relative in sources]
        _ruff(tree, ["check", "--fix-only", "--exit-zero", *_WHOLE, *paths])
        _ruff(tree, ["format", *_WHOLE, *paths])
        return {relative: (tree / relative).read_text("utf-8") for relative in sources}


# Every file given, whatever the ignore files around the scratch directory say, and no
# cache left in it.
_WHOLE = ("--no-cache", "--no-respect-gitignore")


def _ruff_executable() -> str:
    # The ruff installed beside this interpreter: the version pyproject.toml pins.
    executable = shutil.which("ruff", path=sysconfig.get_path("scripts"))
    if executable is None:
        raise RuntimeError("ruff is not installed in this environment (pyproject.toml pins it)")
    return executable


def _ruff(tree: Path, command: list[str]) -> None:
    completed = subprocess.run(
        [_ruff_executable(), *command],
        cwd=tree,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"ruff {command[0]} failed:\n{completed.stdout}{completed.stderr}")


def format_json(value: Any) -> str:
    """``value`` as the JSON files of ``generated/`` hold it: keys in the order given, two
    spaces an indent, and each object or array on one line where it fits in ``_WIDTH``
    columns (as ruff lays out Python), so a contract change is a short diff."""
    return _layout(value, indent=0, lead=0) + "\n"


_WIDTH = 100


def _layout(value: Any, indent: int, lead: int) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or not value or indent + lead + len(flat) <= _WIDTH:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        members = []
        for key, member in value.items():
            name = json.dumps(key, ensure_ascii=False) + ": "
            members.append(inner + name + _layout(member, indent + 2, len(name)))
        return "{\n" + ",\n".join(members) + "\n" + " " * indent + "}"
    items = [inner + _layout(item, indent + 2, 0) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
