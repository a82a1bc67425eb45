"""Formatting generated Python with the project's pinned ruff and its pyproject settings."""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from pathlib import Path


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
