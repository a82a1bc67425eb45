"""bin/schemux, the launcher a client starts: a private venv made with the system python3,
installed quietly (stderr only), reused until the checkout changes.

The "system" python3 here is a stand-in on PATH that behaves like Debian's under PEP 668:
it refuses ``-m pip`` with ``externally-managed-environment`` and logs every use, so the
tests prove the launcher only ever asks it to make the venv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from schemux import __version__

CHECKOUT = Path(__file__).resolve().parent.parent
PACKAGED = ("pyproject.toml", "README.md", "bin", "schemux", "handlers", "generated")
PIP_PROBE = "-m pip install nothing"
INSTALL_SECONDS = 300  # a first install fetches the dependencies

SYSTEM_PYTHON = """#!/bin/sh
printf '%s\\n' "$*" >>"{log}"
case " $* " in
*" -m pip "*)
    echo "error: externally-managed-environment" >&2
    exit 1 ;;
esac
exec "{real}" "$@"
"""


@dataclass(frozen=True)
class Installation:
    checkout: Path
    data_home: Path
    system_log: Path
    env: dict[str, str]

    @property
    def launcher(self) -> Path:
        return self.checkout / "bin" / "schemux"

    @property
    def venv(self) -> Path:
        return self.data_home / "schemux" / "venv"

    @property
    def stamp(self) -> Path:
        return self.venv / "schemux-checkout"

    def system_python_uses(self) -> list[str]:
        return self.system_log.read_text().splitlines() if self.system_log.exists() else []

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.launcher), *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=INSTALL_SECONDS,
            check=False,
        )


@pytest.fixture
def installation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installation]:
    """A throwaway copy of the checkout, a data home of its own, a PEP 668 python3; all
    of it removed after the test (the venv's 7,000 files took the run's end 3 s)."""
    root = tmp_path_factory.mktemp("launcher")
    checkout = root / "checkout"
    checkout.mkdir()
    for name in PACKAGED:
        source = CHECKOUT / name
        if source.is_dir():
            shutil.copytree(source, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, checkout / name)
    system = root / "system-bin"
    system.mkdir()
    log = root / "system-python.log"
    python3 = system / "python3"
    python3.write_text(SYSTEM_PYTHON.format(log=log, real=sys.executable))
    python3.chmod(0o755)
    env = dict(os.environ, XDG_DATA_HOME=str(root / "data"))
    env["PATH"] = f"{system}{os.pathsep}{env['PATH']}"
    env.pop("SCHEMUX_PYTHON", None)
    env.pop("VIRTUAL_ENV", None)
    yield Installation(checkout, root / "data", log, env)
    shutil.rmtree(root, ignore_errors=True)


def test_the_stand_in_python_refuses_pip_as_debian_does(installation: Installation) -> None:
    done = subprocess.run(
        ["python3", *PIP_PROBE.split()],
        capture_output=True,
        text=True,
        env=installation.env,
        check=False,
    )
    assert done.returncode == 1
    assert "externally-managed-environment" in done.stderr


@pytest.mark.anyio
@pytest.mark.long
async def test_an_install_from_first_start_to_a_broken_one(
    installation: Installation, tmux_socket: str, anyio_backend: str
) -> None:
    """The launcher's life on one machine, step by step, each on what the one before
    left: one test, so that one worker pays for the install (a pip install of the
    dependencies; a worker that ran a later step alone installed all of it again)."""
    a_first_start_installs_quietly_and_speaks_only_mcp_on_stdout(installation, tmux_socket)
    await a_second_start_reuses_the_install(installation, tmux_socket)
    a_changed_checkout_is_installed_again(installation)
    a_broken_install_is_retried_on_the_next_start(installation)


def a_first_start_installs_quietly_and_speaks_only_mcp_on_stdout(
    installation: Installation, tmux_socket: str
) -> None:
    """The very first start installs, then answers initialize: stdout holds that answer
    and nothing else; the install's lines went to stderr."""
    assert not installation.venv.exists()
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "launcher-test", "version": "1"},
        },
    }
    done = subprocess.run(
        [str(installation.launcher), "serve", "-L", tmux_socket],
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        env=installation.env,
        timeout=INSTALL_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    answer = json.loads(lines[0])
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"]["name"] == "schemux"
    assert "installing" in done.stderr
    assert installation.stamp.is_file()
    # the system python made the venv and was asked nothing more (the probe above aside)
    uses = [use for use in installation.system_python_uses() if use != PIP_PROBE]
    assert uses == [f"-m venv -- {installation.venv}"]


async def a_second_start_reuses_the_install(installation: Installation, tmux_socket: str) -> None:
    """Through the SDK's stdio client, as an MCP client starts it: no new install."""
    stamp_time = installation.stamp.stat().st_mtime_ns
    uses = installation.system_python_uses()
    parameters = StdioServerParameters(
        command=str(installation.launcher),
        args=["serve", "-L", tmux_socket],
        env=installation.env,
    )
    async with Client(parameters) as client:
        tools = await client.list_tools()
        result = await client.call_tool("tmux_snapshot", {})
    assert "run_command" in {tool.name for tool in tools.tools}
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.structured_content["data"]["server"]["socket_path"].endswith(tmux_socket)
    assert installation.stamp.stat().st_mtime_ns == stamp_time
    assert installation.system_python_uses() == uses


def a_changed_checkout_is_installed_again(installation: Installation) -> None:
    unchanged = installation.run("--version")
    assert (unchanged.stdout, unchanged.returncode) == (f"schemux {__version__}\n", 0)
    assert "installing" not in unchanged.stderr

    source = installation.checkout / "schemux" / "serving" / "tool_listing.py"
    source.write_text(source.read_text() + "\nCHANGED_BY_THE_LAUNCHER_TEST = True\n")
    changed = installation.run("--version")
    assert (changed.stdout, changed.returncode) == (f"schemux {__version__}\n", 0)
    assert "installing" in changed.stderr
    # Run outside the repository, whose own schemux/ would be imported instead.
    installed = subprocess.run(
        [str(installation.venv / "bin" / "python"), "-c",
         "import schemux.serving.tool_listing as t; print(t.CHANGED_BY_THE_LAUNCHER_TEST)"],
        capture_output=True, text=True, check=False, cwd=installation.venv,
    )  # fmt: skip
    assert installed.stdout == "True\n", installed.stderr
    assert not (installation.checkout / "build").exists()  # built from a copy
    again = installation.run("--version")
    assert "installing" not in again.stderr


def a_broken_install_is_retried_on_the_next_start(installation: Installation) -> None:
    """An install that failed leaves no stamp, so the next start does not trust it."""
    installation.stamp.write_text("from an older checkout\n")
    done = installation.run("--version")
    assert done.returncode == 0, done.stderr
    assert "installing" in done.stderr
    assert installation.stamp.read_text() != "from an older checkout\n"
