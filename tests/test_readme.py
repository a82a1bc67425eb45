"""The README's set-up text is what works: its commands match the launcher and CI, and
every client configuration it shows parses."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def blocks(language: str) -> list[str]:
    return [text for kind, text in BLOCK.findall(README) if kind == language]


def test_the_serve_command_is_the_launcher() -> None:
    assert "bin/schemux serve\n" in blocks("sh")
    assert (ROOT / "bin" / "schemux").stat().st_mode & 0o111


def test_ci_runs_the_readmes_test_command() -> None:
    (command,) = [text for text in blocks("sh") if ".venv-nox/bin/nox" in text]
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert command.strip() in ci.splitlines()


def test_every_client_configuration_parses_and_names_the_launcher() -> None:
    parsed = [json.loads(text) for text in blocks("json")]
    parsed += [tomllib.loads(text) for text in blocks("toml")]  # overlays' examples too
    configurations = [each for each in parsed if any("ervers" in key for key in each)]
    assert len(configurations) == 3  # mcpServers (Claude Desktop, Cursor), VS Code, Codex
    for configuration in configurations:
        (servers,) = [value for key, value in configuration.items() if "ervers" in key]
        entry = servers["schemux"]
        assert entry["command"].endswith("/bin/schemux")
        assert entry["args"] == ["serve"]
    claude_code = next(text for text in blocks("sh") if text.startswith("claude mcp add"))
    assert claude_code.rstrip().endswith("/bin/schemux serve")
