"""The inspect tools' pure rules, with no tmux: list filters, display_message's template,
the environment's shell form, options' and hooks' lines, search patterns, and the pane at
a window's corner."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from schemux.domain.environment import parse_environment
from schemux.domain.filters import OPERATORS, conditions_for, meeting, parse_filters
from schemux.domain.format_text import template
from schemux.domain.pane_search import MAX_PATTERN_CHARACTERS, compiled
from schemux.domain.tmux_objects import Objects, PaneFacts, WindowFacts
from schemux.domain.tmux_options import HookFacts, _hook, _option_entry, converted
from schemux.errors import SchemuxError
from schemux.tmux.format import format_literal

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Item:
    name: str
    count: int
    flag: bool
    note: str | None


ITEMS = [
    Item("dev", 1, True, None),
    Item("Dev-2", 2, False, "x"),
    Item("prod;rm -rf", 10, False, "y"),
]


@pytest.mark.parametrize(
    ("filters", "names"),
    [
        (None, ["dev", "Dev-2", "prod;rm -rf"]),
        ("", ["dev", "Dev-2", "prod;rm -rf"]),
        ({}, ["dev", "Dev-2", "prod;rm -rf"]),
        ({"name": "dev"}, ["dev"]),
        ({"name__exact": "dev"}, ["dev"]),
        ({"name__eq": "Dev-2"}, ["Dev-2"]),
        ({"name__iexact": "DEV"}, ["dev"]),
        ({"name__contains": "ev"}, ["dev", "Dev-2"]),
        ({"name__icontains": "EV"}, ["dev", "Dev-2"]),
        ({"name__startswith": "d"}, ["dev"]),
        ({"name__istartswith": "d"}, ["dev", "Dev-2"]),
        ({"name__endswith": "-rf"}, ["prod;rm -rf"]),
        ({"name__iendswith": "V"}, ["dev"]),
        ({"name__in": "dev,prod;rm -rf"}, ["dev", "prod;rm -rf"]),
        ({"name__nin": "dev,Dev-2"}, ["prod;rm -rf"]),
        ({"name__regex": "^[dD]ev"}, ["dev", "Dev-2"]),
        ({"name__iregex": "^DEV$"}, ["dev"]),
        ({"count": "10"}, ["prod;rm -rf"]),
        ({"count__in": "1,2"}, ["dev", "Dev-2"]),
        ({"flag": "true"}, ["dev"]),
        ({"flag": "false", "count__startswith": "1"}, ["prod;rm -rf"]),
        ({"note__contains": ""}, ["Dev-2", "prod;rm -rf"]),  # null matches nothing
        ({"note__nin": "x"}, ["prod;rm -rf"]),
        ('{"name__contains": "ev", "flag": "false"}', ["Dev-2"]),
    ],
)
async def test_filters_select_as_their_operators_say(filters: object, names: list[str]) -> None:
    conditions = conditions_for(Item, filters)  # type: ignore[arg-type]
    assert [item.name for item in await meeting(ITEMS, conditions)] == names


@pytest.mark.parametrize(
    ("filters", "refusal"),
    [
        ({"size": "1"}, "filters['size']: 'size' is not a field of the listed items"),
        ({"name__like": "x"}, "filters['name__like']: 'like' is not an operator"),
        ({"name__": "x"}, "filters['name__']: '' is not an operator"),
        ({"name__regex": "("}, "filters['name__regex']: '(' is not a valid regular expression"),
        ({"name__regex": "\\p{L}"}, "is not a valid regular expression"),  # regex's, not re's
        ({"name": "x" * 10_001}, "filters['name'] is 10001 characters long"),
        ({f"name{index}": "x" for index in range(101)}, "filters has 101 keys"),
        ("{nope", "filters '{nope' is not JSON"),
        ('["name"]', "is not a JSON object of strings"),
        ('{"name": 1}', "is not a JSON object of strings"),
    ],
)
def test_filters_that_cannot_be_read_are_refused_naming_the_key(
    filters: object, refusal: str
) -> None:
    with pytest.raises(SchemuxError) as refused:
        conditions_for(Item, filters)  # type: ignore[arg-type]
    assert refusal in refused.value.message


def test_every_operator_is_named_in_the_refusal() -> None:
    with pytest.raises(SchemuxError) as refused:
        parse_filters({"name__x": "y"}, ["name"])
    assert refused.value.suggestion == f"use one of {', '.join(OPERATORS)} (none: exact)"


async def test_a_catastrophic_expression_is_refused_within_its_time() -> None:
    slow = [Item("a" * 40 + "!", 0, False, None)]
    conditions = conditions_for(Item, {"name__regex": "^(a|aa)+$"})
    started = time.monotonic()
    with pytest.raises(SchemuxError) as refused:
        await meeting(slow, conditions)
    assert time.monotonic() - started < 5
    assert "backtracks catastrophically" in refused.value.message
    assert "'name__regex'" in refused.value.message


@pytest.mark.parametrize(
    ("format_string", "texts", "names"),
    [
        ("", [""], []),
        ("100% %H $(id) ;", ["100% %H $(id) ;"], []),
        ("#{pane_id}", ["", ""], ["pane_id"]),
        ("a #{pane_width}x#{pane_height}!", ["a ", "x", "!"], ["pane_width", "pane_height"]),
        ("#{@my-option} #{_x}", ["", " ", ""], ["@my-option", "_x"]),
    ],
)
def test_a_template_is_literal_text_and_references(
    format_string: str, texts: list[str], names: list[str]
) -> None:
    assert template(format_string) == (texts, names)


@pytest.mark.parametrize(
    "format_string",
    ["#{E:pane_id}", "#(touch x)", "##", "#[fg=red]", "#{?pane_active,a,b}", "x#", "#{pane id}"],
)
def test_other_format_syntax_is_refused(format_string: str) -> None:
    with pytest.raises(SchemuxError, match="holds tmux format syntax other than"):
        template(format_string)


def test_the_shell_form_of_the_environment_is_read_exactly() -> None:
    printed = (
        'A="plain"; export A;\n'
        'B="two\nlines"; export B;\n'
        'C="q\\"\\$\\`\\\\z"; export C;\n'
        "unset D;\n"
        'E=""; export E;\n'
        'F="PATH=\\"/evil\\"; export PATH;"; export F;\n'
        'A=B="x"; export A=B;\n'
    )
    assert parse_environment(printed) == {
        "A": "plain",
        "B": "two\nlines",
        "C": 'q"$`\\z',
        "D": False,
        "E": "",
        "F": 'PATH="/evil"; export PATH;',
        "A=B": "x",
    }
    assert parse_environment("") == {}
    # tmux 3.4+ escapes a control as it prints (an ESC as \033, unlike a backslash and
    # digits of the value, which the shell form doubles); 3.3a prints it raw
    for esc in ("\\033", "\x1b"):
        printed = f'G="\\\\033 {esc}[31m"; export G;\n'
        assert parse_environment(printed) == {"G": "\\033 \x1b[31m"}
    with pytest.raises(SchemuxError, match="tmux printed an environment schemux cannot read"):
        parse_environment("A=plain\n")


def test_option_lines_values_and_hook_lines() -> None:
    assert _option_entry("history-limit 2000") == ("history-limit", 2000)
    assert _option_entry('status-format[1]* "#[align=centre]"') == (
        "status-format[1]",
        "#[align=centre]",
    )
    assert _option_entry(r'@opt "with spaces \\ and \\033 \033"') == (
        "@opt",
        "with spaces \\ and \\033 \x1b",
    )
    assert converted("2000") == 2000
    assert converted("on") is True
    assert converted("off") is False
    assert converted("-1") == "-1"
    assert converted("On") == "On"
    assert format_literal("#(touch x) #{pane_id} ##") == "##(touch x) ##{pane_id} ####"
    assert _hook('pane-exited[0] run-shell "echo x"') == HookFacts(
        "pane-exited", 0, 'run-shell "echo x"'
    )
    assert _hook("session-renamed display-message hi") == HookFacts(
        "session-renamed", None, "display-message hi"
    )
    assert _hook("after-new-window") is None  # unset


def test_a_search_pattern_is_literal_unless_regex() -> None:
    assert compiled("a.b (c)", regex=False, match_case=False).search("x A.B (C) y")
    assert not compiled("a.b", regex=False, match_case=False).search("axb")
    assert compiled("a.b", regex=True, match_case=False).search("AXB")
    assert not compiled("a.b", regex=True, match_case=True).search("AXB")
    for pattern, refusal in (
        ("(", "pattern '(' is not a valid regular expression"),
        ("x" * (MAX_PATTERN_CHARACTERS + 1), f"at most {MAX_PATTERN_CHARACTERS} are taken"),
    ):
        with pytest.raises(SchemuxError) as refused:
            compiled(pattern, regex=True, match_case=False)
        assert refusal in refused.value.message


def pane(pane_id: str, left: int, top: int, right: int, bottom: int, width: int = 80) -> PaneFacts:
    return PaneFacts(
        pane_id=pane_id, pane_index="0", pane_width="1", pane_height="1",
        pane_left=left, pane_top=top, pane_right=right, pane_bottom=bottom,
        pane_at_left=left == 0, pane_at_right=right == width - 1, pane_at_top=top <= 1,
        pane_at_bottom=bottom == 23, pane_tty="", pane_current_command="",
        pane_current_path="", pane_pid="", pane_title="", pane_active="0", window_id="@1",
        session_id="$1", is_caller=None,
    )  # fmt: skip


def test_the_pane_at_a_corner_touches_both_its_edges() -> None:
    window = WindowFacts(
        window_id="@1", window_name="w", window_index="0", session_id="$1",
        session_name="s", pane_count=4, window_layout="", window_active="1",
        window_width="80", window_height="24", active_pane_id="%1",
    )  # fmt: skip
    # four panes, their top row 1 (a border status line at the top): tmux still says
    # they touch the top edge
    panes = (
        pane("%1", 0, 1, 39, 11),
        pane("%2", 41, 1, 79, 11),
        pane("%3", 0, 13, 39, 23),
        pane("%4", 41, 13, 79, 23),
    )
    objects = Objects("here", "3.3a", "/tmp/s", (), (window,), panes)
    assert objects.pane_at(window, "top-left").pane_id == "%1"
    assert objects.pane_at(window, "top-right").pane_id == "%2"
    assert objects.pane_at(window, "bottom-left").pane_id == "%3"
    assert objects.pane_at(window, "bottom-right").pane_id == "%4"
    empty = Objects("here", "3.3a", "/tmp/s", (), (window,), ())
    with pytest.raises(SchemuxError, match="no pane of window @1 touches its top and left"):
        empty.pane_at(window, "top-left")
