"""Settings from options and the environment: precedence, bad values named, the wait
ceiling, the HTTP address, the program limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemux.config import AuditSettings, RecordingSettings, Settings, settings_from
from schemux.errors import ConfigError
from schemux.http.config import parse_http_address


def test_options_win_over_environment() -> None:
    env = {"SCHEMUX_SOCKET_NAME": "env", "SCHEMUX_WAIT_CEILING": "5", "HOME": "/home/u"}
    audit = AuditSettings(Path("/home/u/.local/state/schemux/audit.jsonl"))  # on by default
    recording = RecordingSettings(Path("/home/u/.local/state/schemux"))  # and beside it
    assert settings_from(env) == Settings(
        socket_name="env", wait_ceiling=5.0, audit=audit, recording=recording
    )
    assert settings_from(env, socket_path="/tmp/s", wait_ceiling=9) == Settings(
        socket_path="/tmp/s", wait_ceiling=9.0, audit=audit, recording=recording
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SCHEMUX_WAIT_CEILING": "soon"}, "SCHEMUX_WAIT_CEILING='soon' is not a number"),
        ({"SCHEMUX_WAIT_CEILING": "-1"}, "must be a positive number"),
        ({"SCHEMUX_WAIT_CEILING": "inf"}, "must be a positive number"),
        ({"SCHEMUX_SOCKET_NAME": "a", "SCHEMUX_SOCKET_PATH": "/b"}, "not both"),
    ],
)
def test_bad_settings_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings_from(env)


def test_clamp_wait() -> None:
    settings = Settings(wait_ceiling=10)
    assert settings.clamp_wait(3) == 3
    assert settings.clamp_wait(30) == 10


@pytest.mark.parametrize(
    ("value", "address"),
    [("8000", ("127.0.0.1", 8000)), ("0.0.0.0:81", ("0.0.0.0", 81)), ("[::1]:9", ("::1", 9))],
)
def test_http_address(value: str, address: tuple[str, int]) -> None:
    assert parse_http_address(value) == address


@pytest.mark.parametrize("value", ["", "host:", "host:x", "70000"])
def test_bad_http_address(value: str) -> None:
    with pytest.raises(ConfigError, match="expected \\[HOST:\\]PORT"):
        parse_http_address(value)


def test_program_limits_from_the_environment() -> None:
    env = {
        "SCHEMUX_MAX_PROGRAMS": "5",
        "SCHEMUX_RETAINED_PROGRAMS": "7",
        "SCHEMUX_OUTPUT_LIMIT": "1000",
    }
    limits = settings_from(env).program_limits
    assert (limits.max_running, limits.retained_ended, limits.output_limit) == (5, 7, 1000)
    with pytest.raises(ConfigError, match="SCHEMUX_MAX_PROGRAMS='0' is not a positive"):
        settings_from({"SCHEMUX_MAX_PROGRAMS": "0"})
