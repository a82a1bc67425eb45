"""The README's set-up text is what works: its commands match the launcher and CI, and
every client configuration it shows parses."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, get_default_environment

from schemux.errors import ConfigError
from schemux.http.config import read_token_file

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


def test_a_quick_start_of_five_lines_comes_first() -> None:
    headings = re.findall(r"^## (.+)$", README, re.MULTILINE)
    assert headings[0] == "Quick start"
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    (commands,) = BLOCK.findall(section)
    assert len(commands[1].strip().splitlines()) == 5
    assert "## Troubleshooting" in README


def test_every_call_example_names_the_agents_own_server() -> None:
    """Without -L a call makes its sessions on the person's default tmux server."""
    calls = [line for text in blocks("sh") for line in text.splitlines() if "schemux call" in line]
    assert calls
    assert all(" -L agent " in line for line in calls)


def test_what_it_says_of_filtered_environments_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's stdio client drops TMUX_TMPDIR, as the README warns, and says what to do."""
    monkeypatch.setenv("TMUX_TMPDIR", "/run/user/1000")
    assert "TMUX_TMPDIR" not in get_default_environment()
    for variable in DEFAULT_INHERITED_ENV_VARS:
        assert f"`{variable}`" in README
    assert "put it in the client's `env`" in README


def test_what_it_says_of_token_files_holds(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("a-token-of-16-characters-or-more\n")
    token.chmod(0o640)
    with pytest.raises(ConfigError, match="chmod 600"):
        read_token_file(str(token))
    token.chmod(0o600)
    assert read_token_file(str(token)) == "a-token-of-16-characters-or-more"
    assert "`chmod 600 FILE`" in README
