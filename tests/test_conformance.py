"""The MCP conformance suite (``@modelcontextprotocol/conformance``, npm) against a real
``schemux serve --http``: every server scenario that applies to schemux passes.

The suite needs node 22 or newer; Debian 12 ships node 18 and Debian 13 node 20, so the
run takes node 22 from npm itself (``node-linux-*``, which puts a ``node`` first on the
suite's PATH). Only ``npm`` must be installed (Debian's; ``.ci/run`` installs it, and
without it the tests skip, saying so); the packages come from the npm registry at their
pinned versions, installed once for the run with the other node programs'
(``tests.node``), whose ``conformance`` command runs the suite.

The scenarios not run, and why (``conformance list``):

- ``tools-call-*``, ``json-schema-2020-12``, ``elicitation-*``: they call the reference
  server's fixture tools (``test_simple_text``, ``json_schema_2020_12_tool``, ...);
  schemux serves only its own tools.
- ``prompts-*``: schemux has no prompts (``completion-complete`` asks to complete a fixture
  prompt's argument; schemux answers it with no values, which passes).
- ``resources-read-*``, ``resources-templates-read``, ``resources-(un)subscribe``: they read
  and subscribe to the reference server's fixture URIs (``test://static-text``, ...);
  schemux's resources are ``tmux://`` URIs of real panes and programs.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http_serving import serving_over_http
from tests.node import binaries

SCENARIOS = [
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "server-sse-polling",
    "dns-rebinding-protection",
    "resources-list",
    "completion-complete",
]


@pytest.fixture(scope="module")
def served(tmux_socket: str) -> Iterator[str]:
    """``schemux serve --http`` on a free loopback port, listening; its URL."""
    with serving_over_http(tmux_socket) as url:
        yield url


def run_scenario(commands: Path, url: str, scenario: str, results: Path) -> list[dict[str, object]]:
    """The checks of ``scenario`` as the suite records them."""
    command = [str(commands / "conformance"), "server", "--url", url, "--scenario", scenario,
               "--output-dir", str(results)]  # fmt: skip
    # the suite's `#!/usr/bin/env node` finds node 22 first
    environment = {**os.environ, "PATH": f"{commands}:{os.environ['PATH']}"}
    ran = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)
    found = sorted(results.glob("*/checks.json"))
    assert found, f"the suite recorded nothing (exit {ran.returncode}):\n{ran.stdout}{ran.stderr}"
    checks: list[dict[str, object]] = json.loads(found[-1].read_text())
    return checks


@pytest.mark.long  # the first one installs the node packages (tests.node)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_conformance_scenario_passes(
    node_scripts: Path, served: str, scenario: str, tmp_path: Path
) -> None:
    checks = run_scenario(binaries(node_scripts), served, scenario, tmp_path)
    failed = [check for check in checks if check["status"] == "FAILURE"]
    assert failed == [], json.dumps(failed, indent=2)
    if scenario != "server-sse-polling":  # without resumable streams it only warns
        assert any(check["status"] == "SUCCESS" for check in checks), checks
