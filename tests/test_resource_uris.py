"""The resource URI scheme: written and parsed back, and every other form refused (pure)."""

from __future__ import annotations

import pytest

from schemux.domain.resource_uris import (
    MAX_URI_LENGTH,
    ResourceAddress,
    ResourceUriError,
    pane_uri,
    parse,
    program_uri,
    template,
)


@pytest.mark.parametrize(
    ("uri", "address"),
    [
        ("tmux://local/pane/%2512/screen", ResourceAddress("pane", "%12", "screen", "local")),
        ("tmux://local/pane/%250/scrollback", ResourceAddress("pane", "%0", "scrollback", "local")),
        (
            "tmux://local/program/p0123456789ab/output",
            ResourceAddress("program", "p0123456789ab", "output", "local"),
        ),
    ],
)
def test_a_uri_names_its_resource_and_is_written_back_the_same(
    uri: str, address: ResourceAddress
) -> None:
    assert parse(uri, ["local"]) == address
    assert address.uri() == uri


def test_an_ssh_host_is_percent_encoded_in_the_authority() -> None:
    host = "alice@build.example:2222"
    uri = pane_uri(host, "%3", "screen")
    assert uri == "tmux://alice%40build.example%3A2222/pane/%253/screen"
    assert parse(uri, [host]) == ResourceAddress("pane", "%3", "screen", host)
    assert program_uri(host, "p0123456789ab").startswith("tmux://alice%40build.example%3A2222/")


def test_templates_expand_as_rfc_6570_expands_an_id() -> None:
    assert template("local", "pane", "screen") == "tmux://local/pane/{pane_id}/screen"
    assert template("local", "program", "output") == "tmux://local/program/{program_id}/output"


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("tmux://elsewhere/pane/%2512/screen", "host 'elsewhere' is not this server's"),
        ("tmux://LOCAL/pane/%2512/screen", "is not this server's"),
        ("tmux://local/pane/%12/screen", "%12 is written %2512"),
        ("tmux://local/pane/12/screen", "a pane id is %25 and digits"),
        ("tmux://local/pane/%2512%00/screen", "a pane id is %25 and digits"),
        ("tmux://local/pane/%2512\x00/screen", "control character"),
        ("tmux://local/pane/%2512/screen\n", "control character"),
        ("tmux://local/pane/..%2F..%2Fetc/screen", "a pane id is"),
        ("tmux://local/pane/%2512/../screen", "dot segment"),
        ("tmux://local/pane/%2e%2e/screen", "dot segment"),
        ("tmux://local/pane/%2512/screen/", "its path is"),
        ("tmux://local/pane/%2512/screen?x=1", "query or fragment"),
        ("tmux://local/pane/%2512/screen#top", "query or fragment"),
        ("tmux://local/pane/%2512/history", "no view of a pane"),
        ("tmux://local/pane/%252F/screen", "a pane id is"),
        ("tmux://local/pane/%25-1/screen", "a pane id is"),
        ("tmux://local/pane/%251234567890/screen", "a pane id is"),
        ("tmux://local/window/@1/screen", "its path is"),
        ("tmux://local/program/P0123456789AB/output", "program id"),
        ("tmux://local/program/p0123456789ab/screen", "no view of a program"),
        ("tmux://local/program/p0123;rm -rf/output", "program id"),
        ("tmux://user@local/pane/%2512/screen", "percent-encoded"),
        ("file:///etc/passwd", "is not a tmux:// URI"),
        ("TMUX://local/pane/%2512/screen", "is not a tmux:// URI"),
        ("", "is not a tmux:// URI"),
        ("tmux://local/pane/%25" + "1" * MAX_URI_LENGTH + "/screen", "characters, more than"),
    ],
)
def test_every_other_form_is_refused_saying_why(uri: str, says: str) -> None:
    with pytest.raises(ResourceUriError) as refused:
        parse(uri, ["local"])
    assert str(refused.value).startswith("uri: ")
    assert says in str(refused.value)


def test_each_configured_host_has_its_own_uris_and_no_other_host_is_taken() -> None:
    hosts = ["web1", "db.eu", "alice@build:22"]
    for host in hosts:
        address = parse(pane_uri(host, "%7", "scrollback"), hosts)
        assert address == ResourceAddress("pane", "%7", "scrollback", host)
        assert address.uri() == pane_uri(host, "%7", "scrollback")
    with pytest.raises(ResourceUriError, match="host 'web2' is not this server's"):
        parse("tmux://web2/pane/%257/screen", hosts)
    with pytest.raises(ResourceUriError) as refused:
        parse("tmux://web/pane/%257/screen", hosts)
    assert "its resources are on tmux://web1/, tmux://db.eu/, tmux://alice%40build%3A22/" in str(
        refused.value
    )
    with pytest.raises(ResourceUriError, match="percent-encoded"):
        parse("tmux://alice@build:22/pane/%257/screen", hosts)


def test_a_refusal_names_a_few_of_many_hosts() -> None:
    hosts = [f"h{number}" for number in range(1000)]
    with pytest.raises(ResourceUriError) as refused:
        parse("tmux://elsewhere/pane/%251/screen", hosts)
    assert str(refused.value).endswith("tmux://h4/ and 995 more hosts")
