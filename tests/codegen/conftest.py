"""Fixtures for the codegen tests: throwaway copies of the repository, codegen and mypy runs.

Nothing here needs tmux. Every test that writes works on a copy under ``tmp_path``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# What codegen reads or writes, what ruff and mypy need beside it.
COPIED = ("codegen", "schemas", "generated", "handlers", "schemux", "pyproject.toml", "README.md")

# The tests import codegen itself. Appended, not prepended: the repository's schemux/
# directory must not shadow an installed schemux (which maps in generated/ and handlers/).
if str(REPO_ROOT) not in sys.path:
    sys.path.append(str(REPO_ROOT))

Snapshot = dict[str, bytes]


@pytest.fixture
def copy_repo(tmp_path: Path) -> Callable[[str], Path]:
    """Make a copy of the repository's codegen-relevant files under ``tmp_path/<name>``."""

    def copy(name: str) -> Path:
        root = tmp_path / name
        root.mkdir()
        for entry in COPIED:
            source = REPO_ROOT / entry
            if source.is_dir():
                shutil.copytree(source, root / entry, ignore=shutil.ignore_patterns("__pycache__"))
            elif source.is_file():
                shutil.copy2(source, root / entry)
        for upstream_file in (root / "schemas" / "upstream").iterdir():
            upstream_file.chmod(0o644)  # the repository's copies are read-only
        return root

    return copy


@pytest.fixture
def repo(copy_repo: Callable[[str], Path]) -> Path:
    """One fresh copy of the repository."""
    return copy_repo("repo")


@pytest.fixture
def snapshot() -> Callable[..., Snapshot]:
    """Every file under the given folders of ``root``, by relative path, as bytes."""

    def take(root: Path, *folders: str) -> Snapshot:
        files: Snapshot = {}
        for folder in folders:
            for path in sorted((root / folder).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    files[path.relative_to(root).as_posix()] = path.read_bytes()
        return files

    return take


@pytest.fixture
def codegen_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m codegen`` (the copy's own codegen package) in a repository root."""

    def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "codegen", *args],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )

    return run


@pytest.fixture
def mypy_strict(tmp_path: Path) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    """Type-check a repository copy's ``schemux`` package with ``mypy --strict``.

    The installed package maps generated/ and handlers/ into schemux; here a link tree
    does the same for the copy: schemux/<runtime files>, schemux/generated -> the copy's
    generated/, schemux/handlers -> the copy's handlers/.
    """

    def run(root: Path) -> subprocess.CompletedProcess[str]:
        tree = tmp_path / f"mypy-tree-{root.name}"
        package = tree / "schemux"
        package.mkdir(parents=True)
        for runtime_file in (root / "schemux").glob("*.py"):
            (package / runtime_file.name).symlink_to(runtime_file)
        (package / "generated").symlink_to(root / "generated", target_is_directory=True)
        (package / "handlers").symlink_to(root / "handlers", target_is_directory=True)
        command = [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(root / "pyproject.toml"),
            "--cache-dir",
            str(tree / ".mypy_cache"),
            "-p",
            "schemux",
        ]
        return subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)

    return run
