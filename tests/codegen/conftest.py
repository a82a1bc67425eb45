"""Fixtures for the codegen tests: throwaway copies of the repository, codegen and mypy runs.

Nothing here needs tmux. Every test that writes works on a copy under pytest's tmp dirs.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import io
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.__main__ import main as codegen_main
from codegen.pipeline import Plan, make_plan
from tests.support import user_cache

REPO_ROOT = Path(__file__).resolve().parents[2]
# Where the schemux package's parts live in the checkout, as pyproject.toml maps them.
PACKAGE_DIRS = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))["tool"][
    "setuptools"
]["package-dir"]
RUNTIME_DIR = PACKAGE_DIRS.get("schemux", "schemux")
# What codegen reads or writes, and what ruff and mypy need beside it.
COPIED = (
    "codegen",
    "schemas",
    "pyproject.toml",
    "README.md",
    "docs",
    RUNTIME_DIR,
    PACKAGE_DIRS["schemux.generated"],
    PACKAGE_DIRS["schemux.handlers"],
)

Snapshot = dict[str, bytes]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The real repository: only ever read."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def repo_plan(repo_root: Path) -> Plan:
    """Codegen's plan for the real repository, made once for the session (a run costs
    seconds): what every file should hold, and what it reports."""
    return make_plan(repo_root)


@pytest.fixture(scope="session")
def copy_repo(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Make a fresh copy of the repository's codegen-relevant files; returns its root."""

    def copy(name: str) -> Path:
        root = tmp_path_factory.mktemp(name) / "repo"
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


@pytest.fixture(scope="session")
def schemux_package(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Path]:
    """Lay out a ``schemux`` package for a repository copy; returns the folder holding it.

    The installation maps schemux/, generated/ and handlers/ into one schemux package;
    links do the same here: schemux/<its own entries>, schemux/generated -> generated/,
    schemux/handlers -> handlers/. Run Python or mypy from the returned folder to use it.
    """

    def link(root: Path) -> Path:
        tree = tmp_path_factory.mktemp("package")
        package = tree / "schemux"
        package.mkdir()
        for entry in (root / RUNTIME_DIR).iterdir():
            if entry.name not in ("generated", "handlers", "__pycache__"):
                (package / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        for subpackage in ("generated", "handlers"):
            directory = root / PACKAGE_DIRS[f"schemux.{subpackage}"]
            (package / subpackage).symlink_to(directory, target_is_directory=True)
        return tree

    return link


@pytest.fixture(scope="session")
def mypy_strict(
    schemux_package: Callable[[Path], Path],
) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    """Type-check a repository copy's ``schemux`` package with ``mypy --strict``.

    Every run shares one cache, in the user's cache (``user_cache``), one run at a time:
    the libraries schemux imports (pydantic, mcp, the standard library) are analysed once
    for the machine, not once a test worker (about 10 s of CPU each time, and the two
    tests that run mypy were seldom in one worker). mypy's incremental mode checks each
    cached module against its source's hash, so a copy whose files differ is checked
    afresh where they differ, and in every module that depends on what changed."""
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is not installed here: these tests need it (and types-jsonschema)")
    cache = user_cache("mypy")

    def run(root: Path) -> subprocess.CompletedProcess[str]:
        tree = schemux_package(root)
        command = [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(root / "pyproject.toml"),
            "--cache-dir",
            str(cache),
            "-p",
            "schemux",
        ]
        with open(cache.with_name("mypy.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # mypy's cache is not for two runs at once
            return subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)

    return run


@pytest.fixture(scope="session")
def snapshot() -> Callable[..., Snapshot]:
    """Every file under the given folders of a root, by relative path, as bytes."""

    def take(root: Path, *folders: str) -> Snapshot:
        files: Snapshot = {}
        for folder in folders:
            for path in sorted((root / folder).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    files[path.relative_to(root).as_posix()] = path.read_bytes()
        return files

    return take


@pytest.fixture(scope="session")
def codegen_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run codegen's command line (``main``) on a repository root, in this process: what
    it prints and its exit status, as a process's (a process of its own would import
    codegen and its libraries again, a second and more each time)."""

    def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        argv = [*args, "--root", str(root)]
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = codegen_main(argv)
        return subprocess.CompletedProcess(argv, status, stdout.getvalue(), stderr.getvalue())

    return run


@pytest.fixture(scope="session")
def codegen_process() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m codegen`` (the copy's own codegen package) in a repository root,
    as a process of its own: the command as CI and people run it."""

    def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "codegen", *args],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )

    return run
