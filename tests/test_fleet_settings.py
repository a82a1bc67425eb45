"""Hosts configured by name (``--host``, ``--hosts FILE``, their variables): what each
spelling makes, and every bad name, destination, prefix and file field refused with a
message naming it (issue 20, item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemux.cli.start_notice import same_server_lines
from schemux.config import Settings, settings_from
from schemux.errors import ConfigError
from schemux.host_settings import ExecTarget, FleetSettings, NamedHost, SshTarget, parse_host_option

HOSTILE_NAMES = [
    "", "Web", "-L", "web;rm", "web 1", "web\n1", "../etc", "web/1", "a" * 64, "_web",
    ".web", "wéb", "web:1", "web=1", "$(id)", "\x00", "web\u2028",
]  # fmt: skip


def test_a_host_option_is_ssh_local_or_exec() -> None:
    assert parse_host_option("web1=alice@web1") == NamedHost("web1", SshTarget("alice@web1"))
    assert parse_host_option("web1=ssh://a@h:22", "cfg") == NamedHost(
        "web1", SshTarget("ssh://a@h:22", "cfg")
    )
    assert parse_host_option("here=local") == NamedHost("here")
    assert parse_host_option("db=exec:docker exec -i 'my db'") == NamedHost(
        "db", ExecTarget(("docker", "exec", "-i", "my db"))
    )


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_is_refused_naming_it(name: str) -> None:
    if "=" not in name:  # the first "=" ends the name of --host's
        with pytest.raises(ConfigError, match=r"--host .*not a host name"):
            parse_host_option(f"{name}=local")
    with pytest.raises(ConfigError, match="is not a host name"):
        FleetSettings(hosts=(NamedHost(name),))


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("web1", "give NAME=DEST"),
        ("web1=", "ssh destination is not one: it is empty"),
        ("web1=-oProxyCommand=x", "starts with '-'"),
        ("web1=a b", "whitespace"),
        ("web1=a\nb", "whitespace or a control"),
        ("db=exec:", "names no command"),
        ("db=exec:-x", "not a command"),
        ("db=exec:'unclosed", "No closing quotation"),
    ],
)
def test_a_hostile_destination_or_prefix_is_refused(option: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        settings_from({}, hosts=(option,))


def test_the_same_name_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match="'web1' is configured twice"):
        settings_from({}, hosts=("web1=local", "web1=h"))


def test_a_group_may_not_be_a_host_name_or_hostile() -> None:
    with pytest.raises(ConfigError, match="group 'db' of host 'web' has a host's name"):
        FleetSettings(hosts=(NamedHost("web", groups=("db",)), NamedHost("db")))
    with pytest.raises(ConfigError, match=r"a group of host 'web'.*not a host name"):
        FleetSettings(hosts=(NamedHost("web", groups=("a;b",)),))


def test_hosts_by_name_and_by_ssh_are_not_mixed() -> None:
    with pytest.raises(ConfigError, match="not both"):
        settings_from({}, ssh="h", hosts=("web=local",))
    with pytest.raises(ConfigError, match="not both"):
        settings_from({"SCHEMUX_EXEC": "docker exec -i c"}, hosts=("web=local",))


def test_the_environment_names_hosts_and_options_win() -> None:
    env = {"SCHEMUX_HOST": "a=local; b=exec:env X=1 \n c=h", "SCHEMUX_DEFAULT_HOST": "b"}
    fleet = settings_from(env).fleet
    assert [host.name for host in fleet.hosts] == ["a", "b", "c"]
    assert fleet.hosts[1].target == ExecTarget(("env", "X=1"))
    assert fleet.default == "b"
    named = settings_from(env, hosts=("z=local",), default_host="z").fleet.hosts
    assert [host.name for host in named] == ["z"]
    with pytest.raises(ConfigError, match=r"default host .*'zz' is not a configured host"):
        settings_from(env, default_host="zz")


def test_the_connect_bound_and_idle_time() -> None:
    fleet = settings_from(
        {"SCHEMUX_MAX_CONNECTING": "3", "SCHEMUX_HOST_IDLE": "2.5"}, hosts=("a=local",)
    ).fleet
    assert (fleet.max_connecting, fleet.idle_seconds) == (3, 2.5)
    assert settings_from({}, hosts=("a=local",), max_connecting=5).fleet.max_connecting == 5
    for env, said in [
        ({"SCHEMUX_MAX_CONNECTING": "0"}, "SCHEMUX_MAX_CONNECTING='0' is not a positive"),
        ({"SCHEMUX_HOST_IDLE": "soon"}, "SCHEMUX_HOST_IDLE='soon' is not a number"),
        ({"SCHEMUX_HOST_IDLE": "-1"}, "idle time of a host"),
        ({"SCHEMUX_HOST_IDLE": "nan"}, "idle time of a host"),
    ]:
        with pytest.raises(ConfigError, match=said):
            settings_from(env)
    with pytest.raises(ConfigError, match="at most 0 hosts connecting"):
        settings_from({}, max_connecting=0)


def test_ssh_config_applies_to_the_hosts_named() -> None:
    settings = settings_from({}, hosts=("web=h",), ssh_config="/cfg")
    assert settings.fleet.hosts[0].target == SshTarget("h", "/cfg")
    assert settings.ssh is None
    with pytest.raises(ConfigError, match="needs --ssh"):
        settings_from({}, ssh_config="/cfg")


HOSTS_FILE = """
default = "db"
[hosts.web1]
destination = "alice@web1.example.com"
ssh_config = "/etc/fleet_ssh"
groups = ["web", "eu"]
[hosts.db]
kind = "exec"
prefix = ["docker", "exec", "-i", "db"]
groups = ["eu"]
[hosts.here]
kind = "local"
"""


def test_a_hosts_file(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(HOSTS_FILE)
    settings = settings_from({"SCHEMUX_HOSTS": str(path)}, hosts=("extra=local",))
    assert settings.fleet.hosts == (
        NamedHost("web1", SshTarget("alice@web1.example.com", "/etc/fleet_ssh"), ("web", "eu")),
        NamedHost("db", ExecTarget(("docker", "exec", "-i", "db")), ("eu",)),
        NamedHost("here"),
        NamedHost("extra"),
    )
    assert settings.fleet.default == "db"
    assert settings.named_hosts
    assert not Settings().named_hosts


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[hosts.web]\ndestination = 'h'\ncolour = 'red'", r"hosts.'web': unknown key 'colour'"),
        ("[hosts.web]\nkind = 'telnet'", r"hosts.'web'.kind: 'telnet': expected local, ssh"),
        ("[hosts.web]\nkind = 'ssh'", r"hosts.'web'.destination: an ssh host needs"),
        ("[hosts.web]\ndestination = 7", r"hosts.'web'.destination: an ssh host needs"),
        ("[hosts.web]\ndestination = '-oX=y'", r"hosts.'web': the ssh destination .* '-'"),
        ("[hosts.web]\nkind = 'exec'\nprefix = 'docker exec'", r"prefix: an exec host needs"),
        ("[hosts.web]\nkind = 'exec'\nprefix = []", r"prefix is not one: it names no command"),
        ("[hosts.web]\nkind = 'local'\ndestination = 'h'", r"destination: a local host takes"),
        ("[hosts.web]\ndestination = 'h'\ngroups = 'eu'", r"groups: must be a list"),
        ("[hosts.'We b']\nkind = 'local'", r"is not a host name"),
        ("[hosts]\nweb = 'h'", r"hosts.'web': must be a table"),
        ("hosts = 3", "configures no host"),
        ("", "configures no host"),
        ("default = 3\n[hosts.a]\nkind='local'", "default must be a host's name"),
        ("default = 'b'\n[hosts.a]\nkind='local'", "default host .*'b' is not a configured"),
        ("colour = 1", "unknown key 'colour'"),
        ("[hosts.web", "is not TOML"),
    ],
)
def test_a_bad_hosts_file_names_the_field(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=said):
        settings_from({}, hosts_file=str(path))


@pytest.mark.parametrize(
    "text",
    [
        "default = " + "[" * 5000 + "]" * 5000,
        "default = " + "{a = " * 5000 + "1" + "}" * 5000,
    ],
)
def test_a_hosts_file_nested_too_deep_is_one_line_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        settings_from({}, hosts_file=str(path))
    said = str(refused.value)  # a Python whose tomllib limits nesting may word it its way
    assert said.startswith(f"the hosts file {path} is not TOML: ")
    assert "\n" not in said


def test_a_missing_hosts_file_is_said(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"hosts file .* cannot be read"):
        settings_from({}, hosts_file=str(tmp_path / "none.toml"))


def test_names_of_one_target_are_said_at_start() -> None:
    """Two names for one target reach one tmux server (every host's is the configured
    socket there): the start says so, a line for each such group."""
    hosts = (
        NamedHost("a"),
        NamedHost("web", SshTarget("alice@web")),
        NamedHost("b"),
        NamedHost("web2", SshTarget("alice@web")),
        NamedHost("other", SshTarget("alice@web", "cfg")),
        NamedHost("box", ExecTarget(("env",))),
    )
    fleet = FleetSettings(hosts)
    assert fleet.same_targets() == (("a", "b"), ("web", "web2"))
    lines = same_server_lines(Settings(fleet=fleet))
    assert len(lines) == 2
    assert lines[0].startswith("schemux: hosts a, b name the same target, so the same tmux server")
    assert lines[1].startswith("schemux: hosts web, web2 name")
    assert same_server_lines(Settings(fleet=FleetSettings(hosts[:2]))) == []
    assert same_server_lines(Settings()) == []
