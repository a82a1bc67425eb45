"""Benchmark ``run_command {"command": "true"}`` per shell: bash, zsh and fish against the
raw tmux floor measured in the same shell and run, and against libtmux-mcp.

For each shell, one private tmux server (socket ``schemux-shells-<pid>-<shell>``), started
the way a user whose login shell it is starts it: by schemux's embedded default, with HOME a
copy of the shell's plain profile in ``tests/shells/`` (or, by the profile's name in
``--shells``, another: ``bash-vi``, ``zsh-plugins``, ``zsh-vi``, ``fish-prompt``,
``dash``) and that shell as the login shell
(given to the schemux process in place of the passwd entry's, which is root's bash here).
Then, 200 timed calls after 5 warm-up each (``--calls``, ``--warmup``), the contenders
taking turns of 10 calls (``--batch``; the order reversed every turn, so that a change of
load on a shared machine weighs on all alike), each in a pane of its own of that server:

* **schemux, agent pane**: over stdio (one ``python -m schemux serve`` driven by the
  ``mcp`` client), in the agent's pane schemux started (the login shell with schemux's
  hooks, where the shell has them);
* **schemux, agent pane, unrecorded**: a second ``python -m schemux serve --no-record
  --tools all`` in the same agent's pane (no recording of the call: the cost of it);
* **schemux, own pane**: the first server, in a pane made with ``tmux new-window``, the
  login shell as a person starts it (no hooks: the fallback);
* **schemux, adopted pane**: the first server, in a pane like the last that the second
  adopted (``adopt_pane``: the hooks typed in once);
* **raw tmux floor**: three tmux CLI subprocesses per call in a pane like the last
  (``send-keys -l " true; tmux wait-for -S CH"``, ``send-keys Enter``, ``wait-for CH``), as
  ``bench/run_command.py`` measures it;
* **libtmux-mcp 0.1.0a22** (``bench/run_command.py``'s anchor), in a pane like the last:
  in bash and zsh only, as its wrapper (``s=$?``) is not fish's syntax.

Ratios: each schemux median / the floor's median of the same shell, and / libtmux-mcp's
(fish's against bash's anchor). Goals (issue 37): the agent's pane <= 0.6x the floor
(recorded and not), an adopted pane <= 1.1x; (issue 16) the agent's pane <= 0.3x
libtmux-mcp.

Usage: ``python bench/shells.py [--calls N] [--warmup K] [--batch B] [--shells bash,zsh,fish]
[--skip-anchor] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import pwd
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    COMMAND,
    Bar,
    CallFailed,
    Tmux,
    anchor_params,
    check_result,
    ensure_anchor,
    failed,
    machine_facts,
    publish,
    run,
    succeeded,
    summary,
)

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "tests" / "shells"
# the plain profile of each shell by its name (the default run), and the other profiles of
# tests/shells by theirs (--shells bash-vi,zsh-plugins,...)
SHELLS = {
    "bash": ("/bin/bash", "bash-plain"),
    "zsh": ("/usr/bin/zsh", "zsh-empty"),
    "fish": ("/usr/bin/fish", "fish-default"),
    "bash-vi": ("/bin/bash", "bash-vi"),
    "zsh-plugins": ("/usr/bin/zsh", "zsh-plugins"),
    "zsh-vi": ("/usr/bin/zsh", "zsh-vi"),
    "fish-prompt": ("/usr/bin/fish", "fish-prompt"),
    "dash": ("/usr/bin/dash", "dash"),
}
# libtmux-mcp's wrapper is POSIX shell: fish has no anchor of its own
ANCHOR_SHELLS = frozenset(name for name, (path, _) in SHELLS.items() if "fish" not in path)
# schemux as `python -m schemux`, its login shell the first argument instead of the
# passwd entry's (schemux.tmux.server.login_shell)
AS_LOGIN_SHELL = (
    "import sys, schemux.tmux.server as tmux; shell = sys.argv.pop(1); "
    "tmux.login_shell = lambda env: shell; "
    "from schemux.cli.main import main; sys.exit(main(sys.argv[1:]))"
)
GOAL_AGENT, GOAL_ADOPTED, GOAL_ANCHOR = 0.6, 1.1, 0.3
# the shells adopt_pane takes (a dash pane keeps the fallback)
ADOPTABLE = frozenset({"bash", "zsh", "fish"})
# the contenders whose ratios are reported, in the table's order
SCHEMUX = ("schemux_agent", "schemux_unrecorded", "schemux_own", "schemux_adopted")


def make_home(profile: str, home: Path) -> None:
    """The profile's rc files at their dotted places (as tests/test_shell_matrix.py)."""
    source = PROFILES / profile
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name != "README":
            target = home / ("." + str(path.relative_to(source)))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def login_environment(shell: str, home: Path) -> dict[str, str]:
    user = pwd.getpwuid(os.getuid()).pw_name
    environment = {
        "HOME": str(home),
        "SHELL": shell,
        "USER": user,
        "LOGNAME": user,
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm-256color",
    }
    for kept in ("TMPDIR", "TMUX_TMPDIR"):
        if kept in os.environ:
            environment[kept] = os.environ[kept]
    return environment


def schemux_as_user(shell: str, home: Path, socket: str, *options: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", AS_LOGIN_SHELL, shell, "serve", "--socket-name", socket, *options],
        env=login_environment(shell, home),
        cwd=home,
    )


class ShellServer(Tmux):
    """A schemux-started tmux server whose panes run one login shell."""

    def own_pane(self) -> str:
        """A window of the agent's session running the default shell as a login shell,
        idle at its prompt (two screens with text and the shell holding its terminal)."""
        pane = self.run("new-window", "-d", "-t", "=agent:", "-P", "-F", "#{pane_id}").strip()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            screen = self.run("capture-pane", "-p", "-t", pane).strip()
            if screen and screen == self.run("capture-pane", "-p", "-t", pane).strip():
                time.sleep(0.3)  # rc files done: the prompt stays
                return pane
            time.sleep(0.05)
        raise RuntimeError(f"pane {pane}: no prompt within 15 s")


async def adopted(client: Client, pane: str) -> str:
    """``pane`` adopted (the hooks typed into its shell) by ``client``'s schemux."""
    succeeded("adopt_pane", await client.call_tool("adopt_pane", {"pane_id": pane}))
    return pane


async def agent_pane(client: Client) -> str:
    """The first call, with no target: schemux starts the server and the agent's pane."""
    result = await client.call_tool("run_command", {"command": "true", "timeout": 30})
    return str(succeeded("the first run_command", result)["pane_id"])


@dataclass
class Contender:
    """One way of running ``true`` in a pane: ``call`` runs it once."""

    name: str
    call: Callable[[], Awaitable[None]]
    seconds: list[float] = field(default_factory=list)
    error: str | None = None

    async def timed(self, count: int, *, keep: bool) -> None:
        for _ in range(count):
            started = time.perf_counter()
            try:
                await self.call()
            except Exception as error:
                self.error = _first_error(error)
                return
            if keep:
                self.seconds.append(time.perf_counter() - started)


def mcp_contender(name: str, client: Client, pane: str) -> Contender:
    async def call() -> None:
        check_result(name, await client.call_tool("run_command", {**COMMAND, "pane_id": pane}))

    return Contender(name, call)


def floor_contender(server: ShellServer, pane: str) -> Contender:
    """``bench/run_command.py``'s raw floor, one call at a time (a fresh channel each)."""
    channels = itertools.count()

    async def call() -> None:
        floor_call(server, pane, f"{server.name}-{next(channels)}")

    return Contender("raw_floor", call)


def floor_call(server: ShellServer, pane: str, channel: str) -> None:
    server.run("send-keys", "-t", pane, "-l", f" true; tmux wait-for -S {channel}")
    server.run("send-keys", "-t", pane, "Enter")
    server.run("wait-for", channel)


async def interleave(contenders: list[Contender], calls: int, warmup: int, batch: int) -> None:
    """``warmup`` untimed calls of each, then ``calls`` timed ones in batches of ``batch``,
    the contenders taking turns (the order reversed every round): a change of load on the
    machine falls on all of them alike instead of skewing their ratios."""
    for contender in contenders:
        await contender.timed(warmup, keep=False)
    order = list(contenders)
    while any(len(each.seconds) < calls and each.error is None for each in order):
        for contender in order:
            if contender.error is None:
                await contender.timed(min(batch, calls - len(contender.seconds)), keep=True)
        order.reverse()


async def measure_shell(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Each contender's figures in this shell, or the error that stopped it."""
    shell, profile = SHELLS[name]
    home = Path(tempfile.mkdtemp(prefix=f"schemux-bench-{name}-"))
    try:
        make_home(profile, home)
        server = ShellServer(f"schemux-shells-{os.getpid()}-{name}")
        try:
            async with contextlib.AsyncExitStack() as stack:
                schemux = await stack.enter_async_context(
                    Client(schemux_as_user(shell, home, server.name))
                )
                unrecorded = await stack.enter_async_context(
                    Client(
                        schemux_as_user(shell, home, server.name, "--no-record", "--tools", "all")
                    )
                )
                agent = await agent_pane(schemux)
                contenders = [
                    mcp_contender("schemux_agent", schemux, agent),
                    mcp_contender("schemux_unrecorded", unrecorded, agent),
                    mcp_contender("schemux_own", schemux, server.own_pane()),
                    floor_contender(server, server.own_pane()),
                ]
                if Path(shell).name in ADOPTABLE:
                    pane = await adopted(unrecorded, server.own_pane())
                    contenders.append(mcp_contender("schemux_adopted", schemux, pane))
                if name in ANCHOR_SHELLS and not args.skip_anchor:
                    anchor = await stack.enter_async_context(Client(anchor_params(server.name)))
                    contenders.append(mcp_contender("libtmux_mcp", anchor, server.own_pane()))
                await interleave(contenders, args.calls, args.warmup, args.batch)
        finally:
            server.kill()
    finally:
        remove_home(home)
    return {
        each.name: {"error": each.error} if each.error else summary(each.seconds)
        for each in contenders
    }


def remove_home(home: Path, within: float = 30.0) -> None:
    """Remove the temporary HOME, again while the killed server's shells and what they
    started still write into it (bash its history; fish's first start generates its
    completions there in the background, for seconds): past ``within`` seconds, say what
    is left rather than lose the figures."""
    deadline = time.monotonic() + within
    while True:
        try:
            shutil.rmtree(home)
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if time.monotonic() > deadline:
                print(f"left {home}: {error}", file=sys.stderr)
                return
            time.sleep(0.2)


def _first_error(error: BaseException) -> str:
    """The message of the first error inside ``error`` (an SDK client wraps it in groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return str(error).splitlines()[0]


def ratios(report: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per shell: each schemux median over the floor's and over libtmux-mcp's (bash's
    where the shell has none)."""
    shells = report["shells"]
    bash_anchor = shells.get("bash", {}).get("libtmux_mcp", {})
    found: dict[str, dict[str, float]] = {}
    for name, calls in shells.items():
        anchor = calls.get("libtmux_mcp") or bash_anchor
        found[name] = {}
        for contender in SCHEMUX:
            median = calls.get(contender, {}).get("median_ms")
            if median is None:
                continue
            if "median_ms" in calls["raw_floor"]:
                found[name][f"{contender}_over_floor"] = median / calls["raw_floor"]["median_ms"]
            if "median_ms" in anchor:
                found[name][f"{contender}_over_libtmux_mcp"] = median / anchor["median_ms"]
    return found


def render(report: dict[str, Any]) -> str:
    facts = report["machine"]
    lines = [
        f"{facts['tmux']}, nproc {facts['nproc']}, Python {facts['python']}, "
        f"mcp {facts['mcp']}, schemux {facts['schemux']}",
        f'run_command {{"command": "true"}}: {report["calls"]} timed calls after '
        f"{report['warmup']} warm-up, in turns of {report['batch']}, per shell ("
        "profiles of tests/shells), median / p90 ms",
        "",
        f"  {'':12}{'agent pane':>16}{'unrecorded':>16}{'own pane':>16}{'adopted':>16}"
        f"{'raw floor':>16}{'libtmux-mcp':>16}",
    ]
    for name, calls in report["shells"].items():
        cells = []
        for contender in (*SCHEMUX, "raw_floor", "libtmux_mcp"):
            row = calls.get(contender, {})
            cells.append(
                f"{row['median_ms']:7.2f} /{row['p90_ms']:6.2f}" if "p90_ms" in row else "-"
            )
        lines.append(f"  {name:12}" + "".join(f"{cell:>16}" for cell in cells))
    lines += [
        "",
        f"  {'':12}{'agent/floor':>14}{'unrec/floor':>12}{'own/floor':>12}{'adopt/floor':>12}"
        f"{'agent/ltm':>12}{'own/ltm':>10}",
    ]
    for name, found in report["ratios"].items():
        cells = [
            found.get(key)
            for key in (
                *(f"{contender}_over_floor" for contender in SCHEMUX),
                "schemux_agent_over_libtmux_mcp",
                "schemux_own_over_libtmux_mcp",
            )
        ]
        widths = (14, 12, 12, 12, 12, 10)
        lines.append(
            f"  {name:12}"
            + "".join(
                f"{(f'{cell:.2f}' if cell is not None else '-'):>{width}}"
                for cell, width in zip(cells, widths, strict=True)
            )
        )
    errors = [
        f"  {name} {contender}: {row['error']}"
        for name, calls in report["shells"].items()
        for contender, row in calls.items()
        if "error" in row
    ]
    if errors:
        lines += ["", "failed (no figures):", *errors]
    lines += [
        "",
        f"goals: agent pane <= {GOAL_AGENT}x the floor (recorded and not), adopted pane <= "
        f"{GOAL_ADOPTED}x, agent pane <= {GOAL_ANCHOR}x libtmux-mcp (fish against bash's "
        "libtmux-mcp, which cannot run in fish)",
    ]
    lines += [bar.line() for bar in bars(report)]
    return "\n".join(lines)


def bars(report: dict[str, Any]) -> list[Bar]:
    """Per shell, the agent pane (recorded and not) and the adopted pane over the floor,
    and the agent pane over libtmux-mcp (SKIP without it; a shell whose agent pane has no
    figures failed, which ``errors`` tells)."""
    found = []
    for name, ratio in report["ratios"].items():
        if "schemux_agent_over_floor" in ratio:
            floor = ratio["schemux_agent_over_floor"]
            anchor = ratio.get("schemux_agent_over_libtmux_mcp")
            unrecorded = ratio.get("schemux_unrecorded_over_floor")
            adopted = ratio.get("schemux_adopted_over_floor")
            found.append(Bar(f"{name}: agent pane / floor", floor, GOAL_AGENT))
            found.append(Bar(f"{name}: unrecorded / floor", unrecorded, GOAL_AGENT))
            found.append(Bar(f"{name}: adopted pane / floor", adopted, GOAL_ADOPTED))
            found.append(Bar(f"{name}: agent pane / libtmux-mcp", anchor, GOAL_ANCHOR))
    return found


def errors(report: dict[str, Any]) -> list[CallFailed]:
    """What stopped a contender: its calls failed, so it has no figures to judge."""
    return [
        CallFailed(f"{name}, {contender}: {row['error']}")
        for name, calls in report["shells"].items()
        for contender, row in calls.items()
        if "error" in row
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=200, help="timed calls per contender")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first (5)")
    parser.add_argument("--batch", type=int, default=10, help="calls per turn (10)")
    parser.add_argument("--shells", default="bash,zsh,fish", help="comma-separated shells")
    parser.add_argument("--skip-anchor", action="store_true", help="without libtmux-mcp")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    args = parser.parse_args(argv)
    shells = [name for name in args.shells.split(",") if name]
    unknown = [name for name in shells if name not in SHELLS]
    if unknown or args.calls < 1 or args.warmup < 0 or args.batch < 1:
        parser.error(f"shells are {', '.join(SHELLS)}; --calls, --batch >= 1, --warmup >= 0")
    if not args.skip_anchor:
        ensure_anchor()
    report: dict[str, Any] = {
        "machine": machine_facts(),
        "calls": args.calls,
        "warmup": args.warmup,
        "batch": args.batch,
        "shells": {name: asyncio.run(measure_shell(name, args)) for name in shells},
    }
    report["ratios"] = ratios(report)
    status = publish(render(report), report, args.json, bars(report))
    return failed(*errors(report)) if errors(report) else status


if __name__ == "__main__":
    run(main)
