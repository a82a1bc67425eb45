"""Formatting generated files: Python with the project's pinned ruff and its pyproject
settings, JSON in one stable layout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any


def format_python(root: Path, relative: Path, source: str) -> str:
    """``source`` after ``ruff check --fix`` (import order, unused imports) and ``ruff format``.

    The text goes through stdin under its future path, so ruff applies the repository's
    configuration (per-file ignores, first-party detection) exactly as a later
    ``ruff check`` of the written file will, and nothing touches the disk.
    """
    fixed = _ruff(root, ["check", "--fix-only", "--exit-zero"], relative, source)
    return _ruff(root, ["format"], relative, fixed)


def _ruff_executable() -> str:
    # The ruff installed beside this interpreter: the version pyproject.toml pins.
    executable = shutil.which("ruff", path=sysconfig.get_path("scripts"))
    if executable is None:
        raise RuntimeError("ruff is not installed in this environment (pyproject.toml pins it)")
    return executable


def _ruff(root: Path, command: list[str], relative: Path, source: str) -> str:
    completed = subprocess.run(
        [_ruff_executable(), *command, "--stdin-filename", relative.as_posix(), "-"],
        cwd=root,
        input=source,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"ruff {command[0]} failed on {relative}:\n{completed.stderr}")
    return completed.stdout


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
