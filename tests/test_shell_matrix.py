"""run_command in the shells people have: login shells x rc profiles (issue 16).

Each profile is a directory of rc files under ``tests/shells/`` (``bashrc`` is the home's
``.bashrc``, ``config/fish/config.fish`` its ``.config/fish/config.fish``), copied into a
home of its own. A profile gets one private tmux server, started by one schemux (in
process, in-memory MCP client) as its embedded default starts it for a user whose login
shell is the profile's, with that home. Its checks run twice, each time in one pane made
at the start and given its first call at once, before its shell has shown a prompt:

* ``agent``: the agent's pane, the login shell schemux starts with its hooks;
* ``own``: a pane made with ``tmux new-session`` on that server, the login shell as tmux
  starts it for a person (``-zsh``), without hooks: the fallback.

A pane left busy by a failed check is replaced. The checks: the first call after start,
multi-line and non-ASCII output exact, exit status, hostile text, a command line wider
than the pane, timeout, interrupt (C-c through send_keys), cancellation, state changes
kept to the call, history, and the screen and the pane's whole history free of schemux
text. 4 to 8 minutes for the 18 panes on this shared 2-CPU machine (under a load of 8-12,
with the checks that still fail waiting out their timeouts); 12 s of it the slow bash's
startup.
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from schemux.config import AgentSession, Settings
from schemux.generated.bindings import BINDINGS
from schemux.hooks import INTEGRATED_SHELLS
from schemux.names import OWNED_SESSION
from schemux.serving.state import ServingState
from schemux.shell.settling import INTERRUPTED_SETTLE_SECONDS
from schemux.tmux import server
from schemux.tmux.agent_session import AGENT_MARK
from tests.contexts import client_of
from tests.process_table import running_with_argument
from tests.support import (
    TERMINAL_QUERIES,
    Pane,
    call,
    remove_server,
    require_tool,
    tagged_socket_name,
    tmux,
    until,
    without_fish_man_page_scan,
)

pytestmark = pytest.mark.anyio

PROFILES_DIRECTORY = Path(__file__).parent / "shells"
WIDTH, HEIGHT = 80, 24
FIRST_CALL_TIMEOUT = 20  # the slow profile's rc takes 6 s before its first prompt

# what schemux's own machinery would show if any of it reached the pane
MACHINERY = ("schemux", "wait-for", "@schemux", "tmux -S", "printf '\\r", "run -b")


@dataclass(frozen=True)
class Profile:
    """A login shell and the rc files of ``tests/shells/<name>``; ``prompt`` holds a
    pattern per row of its prompt, the last being the row the command is typed on, and
    ``right_prompt`` what that row may end with after the command. ``ignores_space``:
    whether its rc files keep a command typed after a space out of history (fish always
    does; schemux's startup files make the agent's pane do so in every shell)."""

    name: str
    shell: str
    prompt: tuple[str, ...]
    right_prompt: str = ""
    ignores_space: bool = False

    @property
    def shell_name(self) -> str:
        return Path(self.shell).name


PROFILES = [
    Profile("bash-plain", "/bin/bash", (r"\S+@\S+:~[#$] ",)),
    Profile("bash-vi", "/bin/bash", (r"\S+@\S+ ~ \[\d*\]", r"[#$] "), ignores_space=True),
    Profile("bash-slow", "/bin/bash", (r"slow\$ ",)),
    Profile("zsh-empty", "/usr/bin/zsh", (r"\S+[#%] ",)),
    Profile(
        "zsh-plugins", "/usr/bin/zsh", (r"\S+@\S+ ~", r"[#%] "), r"\[\d+\]", ignores_space=True
    ),
    Profile("zsh-vi", "/usr/bin/zsh", (r"zvi[#%] ",), ignores_space=True),
    Profile("fish-default", "/usr/bin/fish", (r"\S+@\S+ ~[#>] ",), ignores_space=True),
    Profile("fish-prompt", "/usr/bin/fish", (r"fishy ~ \[\d+\] \u276f ",), ignores_space=True),
    Profile("dash", "/usr/bin/dash", (r"dash\$ ",)),
]


def make_home(profile: Profile, home: Path) -> None:
    """The profile's rc files, each at its dotted place in ``home``."""
    source = PROFILES_DIRECTORY / profile.name
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name != "README":
            target = home / ("." + str(path.relative_to(source)))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    if profile.shell_name == "fish":
        without_fish_man_page_scan(home)


def login_environment(profile: Profile, home: Path) -> dict[str, str]:
    """What a login gives: no variable of this test run's shell (PS1, PROMPT_COMMAND,
    ZDOTDIR, ...) reaches the profile's."""
    environment = {
        "HOME": str(home),
        "SHELL": profile.shell,
        "USER": pwd.getpwuid(os.getuid()).pw_name,
        "LOGNAME": pwd.getpwuid(os.getuid()).pw_name,
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm-256color",
    }
    for kept in ("TMPDIR", "TMUX_TMPDIR"):
        if kept in os.environ:
            environment[kept] = os.environ[kept]
    return environment


@contextmanager
def logged_in_as(profile: Profile, home: Path) -> Iterator[None]:
    """This process's environment as the profile's login gives it, and the profile's
    shell as the login shell (the passwd entry's, which ``tests/test_login_shells.py``
    changes for real, with throwaway users): what the schemux in this process starts its
    tmux server and agent session with."""
    environment = login_environment(profile, home)
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            patch.delenv(name)
        for name, value in environment.items():
            patch.setenv(name, value)
        patch.setattr(server, "login_shell", lambda env: profile.shell)
        yield


def start_pane(socket_name: str, home: Path) -> Pane:
    """A new session whose pane runs the server's default shell as a login shell, as a
    person's ``tmux new-session`` does: without schemux's hooks."""
    name = f"p{uuid.uuid4().hex[:8]}"
    ids = tmux(
        socket_name, "new-session", "-d", "-s", name, "-x", str(WIDTH), "-y", str(HEIGHT),
        "-c", str(home), "-P", "-F", "#{pane_id} #{window_id} #{session_id}",
    )  # fmt: skip
    pane_id, window_id, session_id = ids.split()
    return Pane(socket_name, pane_id, window_id, session_id, name)


def rows_of(text: str) -> list[str]:
    return [row.strip() for row in text.splitlines()]


@dataclass
class CallOutcome:
    """A run_command call's answer as the client saw it, and how long it took."""

    is_error: bool
    text: str
    result: dict[str, Any]
    seconds: float


async def run_command(client: Client, pane: Pane, command: str, **arguments: Any) -> CallOutcome:
    started = time.monotonic()
    answer = await client.call_tool(
        "run_command", {"command": command, "pane_id": pane.pane_id, **arguments}
    )
    text = "\n".join(block.text for block in answer.content if block.type == "text")
    result = dict(answer.structured_content or {}) if not answer.is_error else {}
    return CallOutcome(answer.is_error, text, result, time.monotonic() - started)


@dataclass
class ProfileServer:
    """A profile's home, the tmux server schemux started for it (embedded default) and
    that schemux's MCP client."""

    profile: Profile
    home: Path
    socket_name: str
    client: Client


@pytest.fixture(scope="module", params=PROFILES, ids=[profile.name for profile in PROFILES])
async def profile_server(
    request: pytest.FixtureRequest, anyio_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ProfileServer]:
    profile: Profile = request.param
    require_tool(profile.shell)
    home = tmp_path_factory.mktemp(profile.name)
    make_home(profile, home)
    socket_name = tagged_socket_name(profile.name)
    with logged_in_as(profile, home):
        agent = AgentSession(width=WIDTH, height=HEIGHT)
        context = ServingState(Settings(socket_name=socket_name, wait_ceiling=60, agent=agent))
        try:
            async with client_of(context, BINDINGS) as client:
                yield ProfileServer(profile, home, socket_name, client)
        finally:
            await context.close()
            remove_server(socket_name)


# how the pane of the checks starts: as schemux starts the agent's session (the login
# shell with schemux's hooks, where the shell has them), or as a person's own pane
STARTS = ["agent", "own"]


@dataclass
class ShellUnderTest:
    """One profile's pane, started as ``start`` says, and the answer to its first call."""

    server: ProfileServer
    start: str
    pane: Pane
    first: CallOutcome

    @property
    def profile(self) -> Profile:
        return self.server.profile

    @property
    def hooked(self) -> bool:
        """Whether the pane's shell has schemux's hooks: the agent's pane, in a shell that
        has an integration; every other pane is served by the typed wrapper."""
        return self.start == "agent" and self.profile.shell_name in INTEGRATED_SHELLS

    def fallback_shows_its_wrapper(self) -> None:
        """The typed wrapper is seen in a pane without hooks, by design (issue 16, item
        2: the fallback is the wrapper as today; docs/shells.md): the checks of a pane
        free of schemux text are the hooked panes'."""
        if not self.hooked:
            pytest.skip("a pane without hooks shows the typed wrapper (docs/shells.md)")

    @property
    def client(self) -> Client:
        return self.server.client

    @property
    def socket_name(self) -> str:
        return self.server.socket_name

    async def run(self, command: str, **arguments: Any) -> dict[str, Any]:
        """A call that must succeed: its result."""
        outcome = await run_command(self.client, self.pane, command, **arguments)
        assert not outcome.is_error, f"{self.profile.name}: {command!r}: {outcome.text}"
        return outcome.result

    def history(self) -> str:
        """The pane's whole history and screen, wrapped rows joined."""
        return tmux(
            self.socket_name, "capture-pane", "-p", "-J", "-S", "-", "-t", self.pane.pane_id
        )

    async def fresh_pane(self) -> None:
        """A new pane in place of one a failed check may have left busy, after one call
        (whose answer the checks that follow judge for themselves)."""
        tmux(self.socket_name, "kill-session", "-t", f"={self.pane.session_name}")
        self.pane, _ = await first_call(self.server, self.start, "echo ready")


async def first_call(server: ProfileServer, start: str, command: str) -> tuple[Pane, CallOutcome]:
    """A new pane started as ``start`` says, and its first call, made at once: before its
    shell has shown its prompt (or even started)."""
    if start == "agent":  # no target: the agent's pane, made now (and the server with it)
        # with no session but schemux's own, no target means the agent's pane, made again
        sessions = tmux(server.socket_name, "list-sessions", "-F", "#{session_name}", check=False)
        for name in sessions.split():
            if name != OWNED_SESSION:
                tmux(server.socket_name, "kill-session", "-t", f"={name}", check=False)
        started = time.monotonic()
        answer = await server.client.call_tool(
            "run_command", {"command": command, "timeout": FIRST_CALL_TIMEOUT}
        )
        text = "\n".join(block.text for block in answer.content if block.type == "text")
        result = dict(answer.structured_content or {}) if not answer.is_error else {}
        outcome = CallOutcome(answer.is_error, text, result, time.monotonic() - started)
        panes = tmux(
            server.socket_name, "list-panes", "-a", "-F",
            f"#{{{AGENT_MARK}}} #{{pane_id}} #{{window_id}} #{{session_id}} #{{session_name}}",
        ).split("\n")  # fmt: skip
        marked = [row.split(" ") for row in panes if row.startswith("1 ")]
        assert marked, f"no agent pane after the first call: {outcome.text}\n" + "\n".join(panes)
        _, pane_id, window_id, session_id, session_name = marked[0]
        return Pane(server.socket_name, pane_id, window_id, session_id, session_name), outcome
    if not tmux(server.socket_name, "list-sessions", check=False):
        await first_call(server, "agent", "true")  # schemux starts the server
    pane = start_pane(server.socket_name, server.home)
    outcome = await run_command(server.client, pane, command, timeout=FIRST_CALL_TIMEOUT)
    return pane, outcome


@pytest.fixture(scope="module", params=STARTS)
async def shell(
    request: pytest.FixtureRequest, profile_server: ProfileServer
) -> AsyncIterator[ShellUnderTest]:
    start: str = request.param
    pane, first = await first_call(profile_server, start, "echo first-ok")
    under_test = ShellUnderTest(profile_server, start, pane, first)
    yield under_test
    session = f"={under_test.pane.session_name}"  # the pane may have been replaced
    tmux(profile_server.socket_name, "kill-session", "-t", session, check=False)


@pytest.fixture
async def idle_shell(
    shell: ShellUnderTest, request: pytest.FixtureRequest
) -> AsyncIterator[ShellUnderTest]:
    """``shell``, given a new pane after a check that failed (it may have left the pane
    busy, so the next checks would fail for it)."""
    failures = request.session.testsfailed
    yield shell
    if request.session.testsfailed != failures:
        await shell.fresh_pane()


@pytest.mark.long
async def test_first_call_after_start(shell: ShellUnderTest) -> None:
    first = shell.first
    assert not first.is_error, first.text
    assert first.result["output"] == ["first-ok"]
    assert first.result["exit_status"] == 0
    assert first.result["output_truncated"] is False


async def test_multi_line_and_non_ascii_output(idle_shell: ShellUnderTest) -> None:
    result = await idle_shell.run(r"printf 'one\n\ntwo  \n'; echo 'é✓漢字 ünï 🙂'")
    assert result["output"] == ["one", "", "two  ", "é✓漢字 ünï 🙂"]
    assert result["exit_status"] == 0
    assert result["output_truncated"] is False


async def test_exit_status(idle_shell: ShellUnderTest) -> None:
    result = await idle_shell.run("sh -c 'echo out; exit 7'")
    assert (result["output"], result["exit_status"]) == (["out"], 7)
    result = await idle_shell.run("false")
    assert (result["output"], result["exit_status"]) == ([], 1)
    result = await idle_shell.run("true")
    assert (result["output"], result["exit_status"]) == ([], 0)


async def test_hostile_text_is_printed_not_run(idle_shell: ShellUnderTest) -> None:
    """tmux's separators, formats and the shell's substitutions, single-quoted (the one
    quoting all four shells read alike)."""
    text = "#{pane_id} ; \\; $(echo no) `echo no` %% ## -t ;#"
    result = await idle_shell.run(f"echo '{text}'")
    assert result["output"] == [text]
    assert result["exit_status"] == 0


async def test_a_command_line_wider_than_the_pane(idle_shell: ShellUnderTest) -> None:
    words = ["w" * 70, "x" * 70, "y" * 70]
    result = await idle_shell.run(f"echo {' '.join(words)}")
    assert result["output"] == [" ".join(words)]
    assert result["exit_status"] == 0


def long_sleep() -> str:
    """A ``sleep`` of 30 s whose argument no other process has, to wait for it to run."""
    return f"sleep 30.{uuid.uuid4().int % 10**9:09d}"


async def test_timeout(idle_shell: ShellUnderTest) -> None:
    # 1 s: zsh with its plugins, loaded, was seen to take 0.5 s to accept a typed line.
    # The command goes on until the test lets it (a file), so past the call's timeout
    go = idle_shell.server.home / f"go-{uuid.uuid4().hex[:8]}"
    waiting = f"sh -c 'until [ -e \"$0\" ]; do sleep 0.02; done' {shlex.quote(str(go))}"
    result = await idle_shell.run(f"echo started; {waiting}; echo late", timeout=1)
    assert result["timed_out"] is True
    assert result["exit_status"] is None
    assert result["output"] == ["started"]
    # the command keeps running: a call meanwhile is refused, saying so
    busy = await run_command(idle_shell.client, idle_shell.pane, "echo next")
    assert busy.is_error
    assert "running" in busy.text
    go.touch()
    # once it has ended, the next call runs (within a moment of its end: the shell takes
    # its terminal back)
    with anyio.fail_after(10):
        while "late" not in rows_of(idle_shell.history()):  # noqa: ASYNC110 (tmux state)
            await anyio.sleep(0.05)
    deadline = time.monotonic() + 1
    while (after := await run_command(idle_shell.client, idle_shell.pane, "echo after")).is_error:
        assert time.monotonic() < deadline, after.text
        await anyio.sleep(0.05)
    assert after.result["output"] == ["after"]


async def test_interrupt(idle_shell: ShellUnderTest) -> None:
    """C-c typed into the pane (send_keys) while the command runs: the call ends with the
    command's status for SIGINT, and the pane takes the next call."""
    sleep = long_sleep()
    async with anyio.create_task_group() as group:
        outcome: list[dict[str, Any]] = []

        async def running() -> None:
            outcome.append(await idle_shell.run(f"echo before; {sleep}; echo never", timeout=10))

        group.start_soon(running)
        with anyio.fail_after(10):
            while "before" not in rows_of(idle_shell.history()):  # noqa: ASYNC110 (tmux state)
                await anyio.sleep(0.02)
        await until(lambda: running_with_argument(sleep.split()[1]))  # and sleep runs
        await call(
            idle_shell.client, "send_keys", keys="C-c", pane_id=idle_shell.pane.pane_id,
            enter=False,
        )  # fmt: skip
    (result,) = outcome
    assert result["timed_out"] is False
    assert result["exit_status"] == 130
    assert result["output"] == ["before"]
    after = await idle_shell.run("echo after")
    assert after["output"] == ["after"]


async def test_cancellation(idle_shell: ShellUnderTest) -> None:
    """A cancelled call interrupts its command as C-c would; the pane takes the next call
    at once, and nothing typed is left to run later."""
    sleep = long_sleep()
    async with anyio.create_task_group() as group:  # cancelled once its sleep runs
        group.start_soon(
            idle_shell.client.call_tool,
            "run_command",
            {"command": f"{sleep}; echo never", "pane_id": idle_shell.pane.pane_id, "timeout": 20},
        )
        await until(lambda: running_with_argument(sleep.split()[1]))
        group.cancel_scope.cancel()
    started = time.monotonic()
    after = await idle_shell.run("echo after")
    assert after["output"] == ["after"]
    # at once: not after waiting out an interrupted pane's settling (a loaded machine
    # took over 2 s for a correct call; how fast beyond that is for the benchmarks)
    assert time.monotonic() - started < INTERRUPTED_SETTLE_SECONDS / 2
    # a sleep, not a wait: what is checked is an absence (nothing left typed runs later)
    await anyio.sleep(0.3)
    assert "never" not in rows_of(idle_shell.history())


def screen_rows(rows: list[str], profile: Profile, command: str) -> list[str]:
    """The rows from the prompt of ``command`` (typed last in the pane) to the end of the
    screen's text."""
    typed = [index for index, row in enumerate(rows) if command in row]
    assert typed, f"{command!r} is not on the screen:\n" + "\n".join(rows)
    start = typed[-1] - (len(profile.prompt) - 1)
    shown = [row.rstrip() for row in rows[start:]]
    while shown and not shown[-1]:
        shown.pop()
    return shown


def expected_rows(profile: Profile, runs: list[tuple[str, list[str]]]) -> list[str]:
    """Patterns of the rows a person sees for ``runs`` (the command's pattern, its output
    lines): the prompt, the command as typed, its output; and the prompt after the last."""
    right = f"(\\s+{profile.right_prompt})?" if profile.right_prompt else ""
    patterns: list[str] = []
    for command, output in runs:
        patterns += list(profile.prompt[:-1])
        patterns.append(profile.prompt[-1] + command + right)
        patterns += [re.escape(line) for line in output]
    patterns += list(profile.prompt[:-1])
    patterns.append(profile.prompt[-1].rstrip() + f"( ?{right})?")
    return patterns


async def test_state_changes_persist_as_the_served_text_says(idle_shell: ShellUnderTest) -> None:
    """run_command's served text: with hooks the command runs in the shell itself (cd
    and export stay); without, in a POSIX shell's subshell (they do not), and in fish's
    begin/end block (they stay)."""
    before = await idle_shell.run("pwd")
    fish = idle_shell.profile.shell_name == "fish"
    await idle_shell.run(
        "cd /; set -gx PROBE_VARIABLE set" if fish else "cd /; export PROBE_VARIABLE=set"
    )
    after = await idle_shell.run("pwd; sh -c 'echo ${PROBE_VARIABLE:-unset}'")
    stays = idle_shell.hooked or fish
    assert after["output"] == (["/", "set"] if stays else [*before["output"], "unset"])
    if stays:  # back as it was, for the checks that follow
        await idle_shell.run(f"cd {idle_shell.server.home}")


async def test_terminal_replies_are_never_typed(idle_shell: ShellUnderTest) -> None:
    """A command that prints terminal queries leaves tmux's replies on the pane's input:
    none of them reaches the next command's line (issue 32, item 2). Each query alone,
    then all at once, each followed by a command with a ``;`` in it."""
    for name, query in [*TERMINAL_QUERIES.items(), ("all", "".join(TERMINAL_QUERIES.values()))]:
        asked = await idle_shell.run(f"printf '{query}'")
        assert asked["exit_status"] == 0, (name, asked)
        after = await idle_shell.run("echo one; echo two")
        assert (after["output"], after["exit_status"]) == (["one", "two"], 0), (name, after)


# how a profile's shell lists its whole history, oldest first
HISTORY_SINCE = {"bash": "history", "zsh": "fc -ln 1", "fish": "history --reverse"}


async def test_history_keeps_the_command_never_machinery(idle_shell: ShellUnderTest) -> None:
    whole = HISTORY_SINCE.get(idle_shell.profile.shell_name)
    if whole is None:
        pytest.skip(f"{idle_shell.profile.shell_name} keeps no history")
    idle_shell.fallback_shows_its_wrapper()
    # what this pane added, from a mark on: the history file is the profile's, shared
    # with the pane without hooks that the same HOME serves, whose entries are not
    # printed into this pane
    mark = f"echo history-from-{uuid.uuid4().hex[:8]}"
    lister = f"{whole} | sed -n '/{mark}/,$p'"
    await idle_shell.run(mark, suppress_history=False)
    await idle_shell.run("echo kept-in-history", suppress_history=False)
    result = await idle_shell.run(lister, suppress_history=False)
    listed = "\n".join(result["output"])
    assert mark in listed
    history = listed[listed.index(mark) :]
    assert "echo kept-in-history" in history
    assert not [mark for mark in MACHINERY if mark in history], history


# a multi-line command for each shell: a loop, and a heredoc where the shell has them
MULTI_LINE = {
    "fish": ("for word in hidden-one hidden-two\n  echo $word\nend", ["hidden-one", "hidden-two"]),
}
POSIX_MULTI_LINE = (
    "for word in hidden-one hidden-two; do\n  echo $word\ndone\n"
    "cat <<'END'\nhidden-three $HOME\nEND",
    ["hidden-one", "hidden-two", "hidden-three $HOME"],
)


async def test_a_multi_line_command_stays_out_of_history(idle_shell: ShellUnderTest) -> None:
    """With suppress_history (the default), a loop and a heredoc run whole and none of
    their lines reaches the shell's history (it was refused: "must be a single line")."""
    command, output = MULTI_LINE.get(idle_shell.profile.shell_name, POSIX_MULTI_LINE)
    result = await idle_shell.run(command)
    assert (result["output"], result["exit_status"]) == (output, 0)
    if idle_shell.profile.shell_name not in HISTORY_SINCE:
        return  # dash keeps no history
    if not (idle_shell.start == "agent" or idle_shell.profile.ignores_space):
        return  # a person's shell that saves what is typed after a space: best effort
    # what this pane added after a mark (the history file is shared with the profile's
    # other pane, whose shell may not ignore a space), counted in the shell: the history
    # is not printed, so the pane shows none of what that other pane saved
    mark = f"history-from-{uuid.uuid4().hex[:8]}"
    await idle_shell.run(f"echo {mark}", suppress_history=False)
    result = await idle_shell.run(command)
    assert (result["output"], result["exit_status"]) == (output, 0)
    counting = f"{HISTORY_SINCE[idle_shell.profile.shell_name]} | sed -n '/{mark}/,$p'"
    marked = await idle_shell.run(f"{counting} | grep -c 'history-fro[m]'")
    assert marked["output"] == ["1"]  # the mark is there: the shell keeps a history
    # "; true": a count of 0 is grep's status 1, which fish's prompt would show next
    hidden = await idle_shell.run(f"{counting} | grep -c 'hidde[n]'; true")
    assert hidden["output"] == ["0"]


async def test_the_screen_shows_prompt_command_and_output_only(
    idle_shell: ShellUnderTest,
) -> None:
    """The command as typed: exactly; with suppress_history, after one space where that
    is how the shell is told to keep it out of history (the contract's way)."""
    idle_shell.fallback_shows_its_wrapper()
    runs = [
        ("echo screen-one", ["screen-one"], False),
        ("printf 'screen\\ntwo\\n'", ["screen", "two"], True),
    ]
    for command, output, suppress_history in runs:
        result = await idle_shell.run(command, suppress_history=suppress_history)
        assert result["output"] == output
    await anyio.sleep(0.3)  # the prompt after the last command is drawn
    captured = await call(idle_shell.client, "capture_pane", pane_id=idle_shell.pane.pane_id)
    shown = screen_rows(captured["result"].split("\n"), idle_shell.profile, runs[0][0])
    typed = [(" ?" * suppress + re.escape(command), output) for command, output, suppress in runs]
    patterns = expected_rows(idle_shell.profile, typed)
    mismatch = f"screen of {idle_shell.profile.name}:\n" + "\n".join(shown)
    assert len(shown) == len(patterns), mismatch
    for row, pattern in zip(shown, patterns, strict=True):
        assert re.fullmatch(pattern, row), f"{row!r} is not {pattern!r}\n{mismatch}"


async def test_nothing_of_schemux_in_the_whole_history(shell: ShellUnderTest) -> None:
    """Every row the profile's pane ever showed, through all the checks above."""
    shell.fallback_shows_its_wrapper()
    history = shell.history()
    found = [row for row in history.splitlines() if any(mark in row for mark in MACHINERY)]
    assert found == [], f"{shell.profile.name}:\n" + history
