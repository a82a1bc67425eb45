"""Unit tests of the pure pieces: settings, version parsing, positions, tails, targets."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from schemux.config import AuditSettings, Settings, settings_from
from schemux.errors import ConfigError, SchemuxError, TmuxUnavailable
from schemux.http_config import parse_http_address
from schemux.server import describe_violation
from schemux.shell_commands import check_command
from schemux.shell_output import OutputEnd, Prompt, Report, after_last_mention, keep_tail
from schemux.shell_panes import shell_reads_input
from schemux.targets import PaneTarget
from schemux.tmux_version import parse_version


@pytest.mark.parametrize(
    ("text", "version"),
    [("tmux 3.3a", (3, 3)), ("tmux 3.5a", (3, 5)), ("tmux next-3.6", (3, 6)), ("tmux 2.9", (2, 9))],
)
def test_parse_version(text: str, version: tuple[int, int]) -> None:
    assert parse_version(text) == version


def test_parse_version_rejects_garbage() -> None:
    with pytest.raises(TmuxUnavailable, match="cannot read the tmux version"):
        parse_version("tmux")


def test_options_win_over_environment() -> None:
    env = {"SCHEMUX_SOCKET_NAME": "env", "SCHEMUX_WAIT_CEILING": "5", "HOME": "/home/u"}
    audit = AuditSettings(Path("/home/u/.local/state/schemux/audit.jsonl"))  # on by default
    assert settings_from(env) == Settings(socket_name="env", wait_ceiling=5.0, audit=audit)
    assert settings_from(env, socket_path="/tmp/s", wait_ceiling=9) == Settings(
        socket_path="/tmp/s", wait_ceiling=9.0, audit=audit
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


def test_report_parses_only_complete_records() -> None:
    assert Report.parse("armed") is None
    assert Report.parse("E 0 5 6") is None
    assert Report.parse("E 3 5 6 7 2000") == Report(3, OutputEnd(5, 6, 7, 2000))
    assert Report.parse("E x 5 6 7 2000") is None


def test_rows_are_relative_to_the_screen_at_the_end() -> None:
    # the prompt was on absolute row 10+4; the output ended 20 history rows later, on row 6
    end = OutputEnd(history=30, row=6, column=0, history_limit=2000)
    assert end.first_row_since(Prompt(10, 4)) == -16
    assert end.last_output_row == 5  # the cursor's row holds nothing yet
    assert OutputEnd(30, 6, 3, 2000).last_output_row == 6


@pytest.mark.parametrize(
    ("before", "after", "limit", "known"),
    [
        (10, 30, 2000, True),
        (10, 1799, 2000, True),
        (10, 1800, 2000, False),  # a collection leaves at least 2000 - 200 rows
        (500, 400, 2000, False),  # history shrank: cleared or collected
        (0, 0, 0, False),  # no history at all: every scrolled row is gone
    ],
)
def test_prompt_row_unknown_once_history_may_have_dropped(
    before: int, after: int, limit: int, known: bool
) -> None:
    first = OutputEnd(after, 0, 0, limit).first_row_since(Prompt(before, 0))
    assert (first is not None) is known


def test_after_last_mention() -> None:
    lines = ["$ old", "wrapper tok1 start", "wrapper tok1 end", "out1", "out2"]
    assert after_last_mention(lines, "tok1") == (["out1", "out2"], True)
    assert after_last_mention(["a", "b"], "tok1") == (["a", "b"], False)


def test_a_vanished_shell_counts_as_running() -> None:
    # no /proc entry: nothing says the shell is still reading, so no C-c is sent
    assert shell_reads_input(2**22 + 1) is False


@pytest.mark.parametrize(
    ("max_lines", "kept", "dropped"),
    [(None, ["a", "b", "c"], 0), (5, ["a", "b", "c"], 0), (2, ["b", "c"], 1), (0, [], 3)],
)
def test_keep_tail(max_lines: int | None, kept: list[str], dropped: int) -> None:
    assert keep_tail(["a", "b", "c"], max_lines) == (kept, dropped)


@pytest.mark.parametrize(
    ("command", "suppress", "message"),
    [
        ("", True, "must not be empty"),
        (" \n ", False, "must not be empty"),
        ("a\nb", True, "single line"),
        ("a\rb", False, "carriage return"),
    ],
)
def test_check_command(command: str, suppress: bool, message: str) -> None:
    with pytest.raises(SchemuxError, match=message):
        check_command(command, suppress)


def test_target_precedence_and_shapes() -> None:
    assert PaneTarget(pane_id="%1", session_name="s").tmux_target() == "%1"
    assert PaneTarget(window_id="@2", session_id="$1").tmux_target() == "@2"
    # a session name is matched exactly, never read by tmux's target syntax
    assert PaneTarget(session_name="work").tmux_target() is None
    assert PaneTarget().tmux_target() is None
    for target in (PaneTarget(pane_id="1"), PaneTarget(window_id="%1"), PaneTarget(session_id="1")):
        with pytest.raises(SchemuxError, match="is not a tmux"):
            target.validate()


def test_violation_names_the_field_and_rule() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
    }
    error = next(Draft202012Validator(schema).iter_errors({"a": [1, "2"]}))
    assert describe_violation(error) == "a[1]: '2' is not of type 'integer' (rule: type)"


def test_violation_of_forms_gives_each_form_its_reason() -> None:
    schema = {
        "oneOf": [
            {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"b": {"oneOf": [{"type": "string", "minLength": 2}]}}},
        ]
    }
    validator = Draft202012Validator(schema)
    error = next(validator.iter_errors({"a": "x", "b": "y"}))  # the oneOf error itself
    assert describe_violation(error) == (
        "(arguments): matches none of the 2 forms (rule: oneOf): "
        "form 1: a: 'x' is not of type 'integer' (rule: type); "
        "form 2: b: 'y' is too short (rule: minLength)"
    )
    both = next(validator.iter_errors({"a": 1, "b": "yy"}))
    text = describe_violation(both)  # matching two forms has no per-form reasons
    assert text.startswith("(arguments): {'a': 1, 'b': 'yy'} is valid under each of ")
    assert text.endswith("(rule: oneOf)")


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
