"""A soak with faults: mixed calls from concurrent clients for many minutes while something
breaks every minute, checking that every call returns its exact result or a clear error,
that every byte a program printed is accounted for, and that schemux ends holding what it
held at the start.

One ``schemux serve`` runs as a subprocess over stdio (so it can be stopped, and its
/proc read), serving four hosts: ``here`` (this machine's private tmux server, socket
``schemux-soak-<pid>`` in a private ``TMUX_TMPDIR``, never the default server), two
exec-kind hosts ``e0`` and ``e1`` (a tmux directory of their own each, as
``bench/fanout.py`` makes them) and ``far``, over OpenSSH to the test suite's sshd on
127.0.0.1 (``tests/ssh_server.py``; its tmux directory another again). Its audit log is
on a 512 MB tmpfs of its own, never rotated: schemux starts under ``unshare -m`` (root
only), which mounts the tmpfs on the log's directory in a mount namespace of schemux's,
and the bench fills it through ``/proc/PID/root``.

The clients are tasks sharing the one stdio session (``--clients``, default 8), each
with a bash pane of its own on ``here``. Each repeats:

* ``run_command``: ``printf`` of a fresh token, its ``cksum``, and an exit status from 0
  to 3; exact is exactly those two lines and that status;
* ``start_program`` of ``seq`` printing 400 numbered lines with the token, then
  ``read_program`` from cursor to cursor until it ends; exact is completed, exit 0,
  ``outputComplete`` and exactly those bytes. A program a fault ended is accounted for
  when what it returned is a prefix of them and its result says why the rest is missing;
* ``send_keys`` of a command printing a token, with a ``subscriptions/listen`` on the
  pane's screen opened before: ``wait_for_text`` for the token, an update of the
  subscription, ``capture_pane`` showing the token's line, ``resources/read`` of the
  screen showing it;
* one in two rounds, ``run_command_on_hosts`` on every host (one at a time across the
  clients: two at once would find the hosts' agent shells busy), exact when every host
  answers exit 0 and exactly the token.

Every ``--fault-every`` seconds (default 60) one fault, in turn: SIGKILL of one of
schemux's tmux control clients; SIGKILL of ``here``'s tmux server (the bench then
starts it again with fresh panes); SIGKILL of the ssh master; SIGSTOP of schemux for 7 s;
the audit log's filesystem full for 20 s; host ``e1`` not answering for 20 s (its tmux
server stopped with SIGSTOP).

Each call is **exact**; a **clear error** (an error result, or a result that says it
failed: timed out, a host's error, a program gone) while a fault lasts or within 20 s
after it, whose text says what happened (not empty, no traceback, not a bare
exception's name); an **unprovoked error**, clear but with no fault near; or **wrong**:
a result that claims success and is not exact, an error that says nothing, an
exception the client raised, or no answer within 120 s.

Bars: no wrong result; no unprovoked error; every tool call sent either in the audit
log or counted in its gap notices; schemux's RSS, open fds and threads at the end within
10% of the start (each read after 20 s of quiet: the start after a warm-up that fills
schemux's retention of ended programs, the end after the clients stop).
Exit status 1 when a bar is missed, 2 when the warm-up was not exact.

Usage: ``python bench/soak.py [--minutes 30] [--clients 8] [--fault-every 60]
[--faults KIND,...] [--json PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, MCPError, StdioServerParameters

if __package__ in (None, ""):  # run as a script: make `bench` importable from the root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Bar, CallFailed, Tmux, error_text, machine_facts, publish, run
from bench.fanout import ExecHost, exec_hosts
from schemux.config import ENV_HOST, ENV_SSH_CONFIG, ProgramLimits
from schemux.domain.resource_uris import pane_uri
from tests.process_table import processes
from tests.ssh_server import ALIAS, available, ssh_server

GRACE = 20.0  # seconds after a fault in which an error is still its doing
HANG = 120.0  # a call unanswered this long is a hang
SETTLE = 20.0  # seconds of quiet before resources are read
RESOURCE_BAR = 0.10  # end within 10% of start
PROGRAM_LINES = 400
RETAINED_PROGRAMS = ProgramLimits().retained_ended  # ended programs schemux keeps
FAN_OUT_TIMEOUT = 15
AUDIT_FS_SIZE = "512m"
AUDIT_MAX_BYTES = 400 << 20  # no rotation: every record stays in one file to count
STOP_SECONDS = 7.0
HOLD_SECONDS = 20.0  # how long the audit disk stays full, or a host silent
FAULTS = (
    "control_client",
    "tmux_server",
    "ssh_master",
    "schemux_stopped",
    "audit_full",
    "host_silent",
)
EXACT, CLEAR, UNPROVOKED, WRONG = "exact", "clear error", "unprovoked error", "wrong"


# --- judging an outcome (pure) ---------------------------------------------------------


@dataclass(frozen=True)
class Miss:
    """A result that is not the exact one: ``declared`` when the result itself says it
    failed (timed out, a host's error, a program that did not complete), so it counts as
    an error; otherwise it claims success with something else, which is always wrong."""

    text: str
    declared: bool


BARE_EXCEPTION = re.compile(r"^\s*[A-Za-z_.]*(Error|Exception)\b\s*(\(|:|$)")


def unclear(text: str) -> str | None:
    """Why an error's text does not say what happened, or None when it does."""
    if not text.strip():
        return "an error with no text"
    if "Traceback (most recent call last)" in text or re.search(r'File "[^"]+", line \d+', text):
        return "a traceback"
    if BARE_EXCEPTION.match(text):
        return "a bare exception"
    if len(text.strip()) < 12:
        return "too short to say what happened"
    return None


def judge(
    miss: Miss | None, error: str | None, near_fault: bool, pane_replaced: bool = False
) -> tuple[str, str]:
    """The outcome of one call and why, from the error it returned (None when none), how
    its result differed from the exact one (None when it did not), whether a fault
    lasted or had just ended while it ran, and whether the pane it named was replaced
    meanwhile (a killed tmux server's pane ids are given to new panes: a result about
    another pane is then the caller's mistake, not schemux's). Exact; a clear error
    (or a result that says it failed) near a fault; an unprovoked error, clear but with
    no fault near; or wrong: a result that claims success and is not exact, or an error
    that does not say what happened."""
    if pane_replaced and error is None and miss is not None:
        return CLEAR, f"its pane was replaced by a new server's: {miss.text}"
    if error is None and miss is not None and not miss.declared:
        return WRONG, f"not the exact result: {miss.text}"
    said = error if error is not None else miss.text if miss is not None else None
    if said is None:
        return EXACT, ""
    problem = unclear(said)
    if problem is not None:
        return WRONG, f"{problem}: {said[:300]!r}"
    return (CLEAR if near_fault else UNPROVOKED), said


def token_lines(token: str) -> list[str]:
    """What ``run_command``'s command prints for ``token``: it, and its ``cksum``."""
    data = f"{token}\n".encode()
    return [token, f"{posix_cksum(data)} {len(data)}"]


def posix_cksum(data: bytes) -> int:
    """POSIX ``cksum``'s CRC of ``data`` (its length appended, as cksum does)."""
    crc = 0
    length = len(data)
    tail = b""
    while length:
        tail += bytes([length & 0xFF])
        length >>= 8
    for byte in data + tail:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return ~crc & 0xFFFFFFFF


def check_command(payload: dict[str, Any], token: str, status: int) -> Miss | None:
    if payload.get("timed_out"):
        return Miss(f"timed out after {payload.get('elapsed_seconds')} s", declared=True)
    got = (payload.get("output"), payload.get("exit_status"))
    want = (token_lines(token), status)
    return None if got == want else Miss(f"{got!r}, not {want!r}", declared=False)


def check_fan_out(payload: dict[str, Any], token: str, hosts: list[str]) -> Miss | None:
    """Every host answered exactly the token with exit 0; a host's error or timeout is
    declared; anything else (a host missing, other output) is not."""
    answers = {entry.get("host"): entry for entry in payload.get("results", [])}
    if sorted(answers) != sorted(hosts):
        return Miss(f"hosts {sorted(answers)}, not {sorted(hosts)}", declared=False)
    wrong, declared = [], []
    for host in hosts:
        entry = answers[host]
        if entry.get("error") is not None:
            declared.append(f"{host}: {entry['error']}")
        elif entry.get("timed_out"):
            declared.append(f"{host}: timed out")
        elif (entry.get("output"), entry.get("exit_status")) != ([token], 0):
            wrong.append(f"{host}: {entry.get('output')!r} exit {entry.get('exit_status')}")
    if wrong:
        return Miss("; ".join(wrong), declared=False)
    return Miss("; ".join(declared), declared=True) if declared else None


def program_text(token: str, lines: int = PROGRAM_LINES) -> str:
    return "".join(f"{token}-{number:05d}\n" for number in range(1, lines + 1))


def check_program(text: str, expected: str, last: dict[str, Any] | None) -> Miss | None:
    """A program's output as read (``text``) against what it printed (``expected``),
    with its last read (None when a read failed before it ended): every byte returned
    must be the program's, in order; all of them unless the result says why not."""
    if not expected.startswith(text):
        at = next((i for i, (a, b) in enumerate(zip(text, expected, strict=False)) if a != b), None)
        at = min(len(text), len(expected)) if at is None else at
        return Miss(f"byte {at} differs: {text[at : at + 40]!r}", declared=False)
    if last is None:
        return Miss(f"{len(expected) - len(text)} bytes not read", declared=True)
    complete = (
        last.get("ended") and last.get("outcome") == "completed" and last.get("exitStatus") == 0
    )
    if complete and last.get("outputComplete"):
        if text != expected:
            return Miss(f"complete with {len(text)} of {len(expected)} bytes", declared=False)
        return None
    why = f"outcome {last.get('outcome')}, lostEnd {last.get('lostEnd')}"
    if complete and text != expected and not last.get("lostEnd"):
        return Miss(f"{why}: {len(text)} of {len(expected)} bytes", declared=False)
    return Miss(f"{why}: {len(expected) - len(text)} bytes not returned", declared=True)


@dataclass
class Window:
    """A fault: when it began, and when it was over (None while it lasts)."""

    kind: str
    start: float
    end: float | None = None


def near(windows: list[Window], start: float, end: float, grace: float = GRACE) -> bool:
    """Whether a call that ran from ``start`` to ``end`` overlapped a fault, or the
    ``grace`` seconds after one."""
    return any(
        start <= (w.end if w.end is not None else end) + grace and end >= w.start for w in windows
    )


# --- the tally ------------------------------------------------------------------------


@dataclass
class Tally:
    calls: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    wrong: list[str] = field(default_factory=list)
    unprovoked: list[str] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)  # clear errors' texts, shortened
    program_bytes: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, outcome: str, reason: str) -> None:
        self.calls[kind][outcome] += 1
        if outcome in (WRONG, UNPROVOKED):
            (self.wrong if outcome == WRONG else self.unprovoked).append(f"{kind}: {reason}")
            print(f"{outcome.upper()} {kind}: {reason[:400]}", file=sys.stderr, flush=True)
        elif outcome == CLEAR:
            self.errors[f"{kind}: {shortened(reason)}"] += 1


def shortened(text: str) -> str:
    """An error's first line without its ids and numbers, so alike errors count together."""
    text = text.strip().split("\n")[0]
    text = re.sub(r"%\d+|p[0-9a-f]{12}|\b[0-9a-f]{8,}\b|sk\w+|/tmp/\S+|\d+(\.\d+)?", "N", text)
    return text[:160]


# --- the machinery around schemux -----------------------------------------------------


@dataclass(frozen=True)
class Holdings:
    rss_mb: float
    fds: int
    threads: int


def holdings(pid: int) -> Holdings:
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return Holdings(
        rss_mb=int(status["VmRSS"].split()[0]) / 1024,
        fds=len(os.listdir(f"/proc/{pid}/fd")),
        threads=int(status["Threads"]),
    )


def fd_kinds(pid: int) -> dict[str, int]:
    """What a process's open file descriptors are: sockets, pipes, anonymous inodes by
    kind, devices, other files."""
    kinds: Counter[str] = Counter()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(("socket:", "pipe:")):
            kinds[target.split(":")[0]] += 1
        elif target.startswith("anon_inode:"):
            kinds[target] += 1
        elif target.startswith("/dev/"):
            kinds["device"] += 1
        else:
            kinds["file"] += 1
    return dict(sorted(kinds.items()))


def descendants(root: int) -> list[Any]:
    table = list(processes())
    found, frontier = [], {root}
    while frontier:
        children = [p for p in table if p.ppid in frontier]
        found += children
        frontier = {p.pid for p in children}
    return found


class Soak:
    """What the clients and the faults share: the session, the clients' panes (and
    their generation: a killed server's panes are replaced), the faults so far, the
    tally."""

    def __init__(self, client: Client, tmux: Tmux, pid: int) -> None:
        self.client, self.tmux, self.pid = client, tmux, pid
        self.panes: list[str] = []
        self.generation = 0
        self.panes_ready = asyncio.Event()
        self.busy = 0  # clients in the middle of a step
        self.idle = asyncio.Event()  # set while busy is 0
        self.idle.set()
        self.windows: list[Window] = []
        self.tally = Tally()
        self.fan_out = asyncio.Lock()  # two at once would find the agent shells busy
        self.stopping = asyncio.Event()
        self.hosts = ["here", "e0", "e1", "far"]
        self.serial = 0
        self.sent = 0  # tool calls sent, each of which the audit log must account for

    def token(self, client: int) -> str:
        self.serial += 1
        return f"sk{client}x{self.serial}x{random.randrange(16**6):06x}"

    async def make_panes(self, count: int) -> None:
        """The agent's pane first, made by schemux (a call with no target on a server
        without it types into the active pane of the last session, here a client's), then
        a session ``bench`` with a bash pane for each client."""
        deadline = time.monotonic() + HANG
        while True:
            self.sent += 1
            result = await self.client.call_tool("run_command", {"command": "true"})
            if not result.is_error:
                break
            if time.monotonic() > deadline:
                raise CallFailed(f"the agent's pane was not made: {error_text(result)}")
            await asyncio.sleep(1)
        first = await asyncio.to_thread(self.tmux.start)
        rest = [await asyncio.to_thread(self.tmux.new_pane) for _ in range(count - 1)]
        self.panes[:] = [first, *rest]
        self.generation += 1
        self.panes_ready.set()

    def outcome(
        self, kind: str, started: float, miss: Miss | None, error: str | None, generation: int
    ) -> str:
        """Judge and count one outcome."""
        close = near(self.windows, started, time.monotonic())
        outcome, reason = judge(miss, error, close, generation != self.generation)
        self.tally.add(kind, outcome, reason)
        return outcome

    async def call(
        self,
        kind: str,
        name: str,
        arguments: dict[str, Any],
        check: Callable[[dict[str, Any]], Miss | None] = lambda payload: None,
        generation: int | None = None,
    ) -> dict[str, Any] | None:
        """One tool call, judged and counted; its structured result when exact."""
        generation = self.generation if generation is None else generation
        started = time.monotonic()
        error, miss, payload = None, None, None
        self.sent += 1
        try:
            result = await asyncio.wait_for(self.client.call_tool(name, arguments), HANG)
        except TimeoutError:
            self.tally.add(kind, WRONG, f"no answer within {HANG:g} s")
            return None
        except MCPError as failure:
            error = str(failure)
        except Exception as failure:
            self.tally.add(kind, WRONG, f"{type(failure).__name__}: {failure}")
            return None
        else:
            if result.is_error:
                error = error_text(result)
            else:
                content = result.structured_content
                payload = content if isinstance(content, dict) else {}
                miss = check(payload)
        outcome = self.outcome(kind, started, miss, error, generation)
        return payload if outcome == EXACT else None


# --- the clients ----------------------------------------------------------------------


async def command_step(soak: Soak, index: int) -> bool:
    token = soak.token(index)
    status = soak.serial % 4
    command = f"printf '%s\\n' {token}; printf '%s\\n' {token} | cksum; sh -c 'exit {status}'"
    arguments = {"command": command, "pane_id": soak.panes[index], "timeout": 60}
    checked = await soak.call(
        "run_command", "run_command", arguments, lambda p: check_command(p, token, status)
    )
    return checked is not None


async def program_step(soak: Soak, index: int) -> bool:
    token = soak.token(index)
    expected = program_text(token)
    argv = ["seq", "-f", f"{token}-%05g", "1", str(PROGRAM_LINES)]
    started = await soak.call("start_program", "start_program", {"argv": argv})
    soak.tally.program_bytes["expected"] += len(expected)
    if started is None:
        soak.tally.program_bytes["not started, said why"] += len(expected)
        return False
    began = time.monotonic()
    text, cursor, last = "", None, None
    while time.monotonic() < began + HANG:
        arguments: dict[str, Any] = {"programId": started["programId"], "timeoutMs": 10_000}
        if cursor is not None:
            arguments["cursor"] = cursor
        page = await soak.call("read_program", "read_program", arguments)
        if page is None:
            break
        text += page.get("text", "")
        cursor = page.get("cursor")
        if page.get("ended"):
            last = page
            break
    miss = check_program(text, expected, last)
    if miss is not None:  # which program, and when: to find it in schemux's log and audit
        since = [f"{w.kind} {began - w.start:+.1f} s" for w in soak.windows[-2:]]
        miss = Miss(f"{started['programId']} ({', '.join(since)}): {miss.text}", miss.declared)
    soak.outcome("program_bytes", began, miss, None, soak.generation)
    if miss is None:
        soak.tally.program_bytes["returned exactly"] += len(expected)
    elif miss.declared:
        soak.tally.program_bytes["returned exactly"] += len(text)
        soak.tally.program_bytes["missing, said why"] += len(expected) - len(text)
    else:
        soak.tally.program_bytes["wrong"] += len(expected)
    return miss is None


async def keys_step(soak: Soak, index: int) -> bool:
    """send_keys, wait_for_text, the subscription's update, capture_pane and a read of the
    pane's screen, each for one token printed by the keys."""
    token, generation = soak.token(index), soak.generation
    pane = soak.panes[index]
    uri = pane_uri("here", pane)
    wanted = f"soak-{token}"
    began = time.monotonic()
    try:
        async with soak.client.listen(resource_subscriptions=[uri]) as updates:
            keys = f"sleep 0.2; printf '%s-%s\\n' soak {token}"
            sent = await soak.call(
                "send_keys", "send_keys", {"keys": keys, "pane_id": pane}, generation=generation
            )
            if sent is None:
                return False
            arguments = {"patterns": [wanted], "pane_id": pane, "timeout": 30}
            await soak.call("wait_for_text", "wait_for_text", arguments, found(wanted), generation)
            began = time.monotonic()
            try:
                await asyncio.wait_for(anext(updates), 30)
                soak.outcome("subscription", began, None, None, generation)
            except TimeoutError:
                miss = Miss("no update within 30 s", declared=False)
                soak.outcome("subscription", began, miss, None, generation)
    except MCPError as failure:
        soak.outcome("subscription", began, None, str(failure), generation)
        return False
    except Exception as failure:
        soak.tally.add("subscription", WRONG, f"{type(failure).__name__}: {failure}")
        return False
    captured = await soak.call(
        "capture_pane", "capture_pane", {"pane_id": pane}, shows(wanted), generation
    )
    began = time.monotonic()
    try:
        read = await asyncio.wait_for(soak.client.read_resource(uri), HANG)
    except MCPError as failure:
        soak.outcome("read_resource", began, None, str(failure), generation)
        return False
    except TimeoutError:
        soak.tally.add("read_resource", WRONG, f"no answer within {HANG:g} s")
        return False
    screen = "\n".join(getattr(part, "text", "") for part in read.contents).split("\n")
    shown = None if wanted in screen else Miss(f"{wanted} not in {screen[-5:]!r}", False)
    return soak.outcome("read_resource", began, shown, None, generation) == EXACT and (
        captured is not None
    )


def found(wanted: str) -> Callable[[dict[str, Any]], Miss | None]:
    def check(payload: dict[str, Any]) -> Miss | None:
        if payload.get("found") or payload.get("matched_at_entry"):
            return None
        if payload.get("outcome") == "timeout":
            return Miss(f"{wanted} not seen within the timeout", declared=True)
        return Miss(f"outcome {payload.get('outcome')}", declared=False)

    return check


def shows(wanted: str) -> Callable[[dict[str, Any]], Miss | None]:
    def check(payload: dict[str, Any]) -> Miss | None:
        rows = str(payload.get("result", "")).split("\n")
        return None if wanted in rows else Miss(f"{wanted} not in {rows[-5:]!r}", False)

    return check


async def fan_out_step(soak: Soak, index: int) -> bool:
    token = soak.token(index)
    arguments = {"command": f"printf '%s\\n' {token}", "timeout": FAN_OUT_TIMEOUT}
    async with soak.fan_out:
        checked = await soak.call(
            "run_command_on_hosts",
            "run_command_on_hosts",
            arguments,
            lambda p: check_fan_out(p, token, soak.hosts),
        )
    return checked is not None


async def client_loop(soak: Soak, index: int) -> None:
    """Rounds of every step until the soak ends; a second's pause after a step that was
    not exact, so that a client does not spin on a fault."""
    steps = [command_step, program_step, keys_step, fan_out_step]
    rounds = 0
    while not soak.stopping.is_set():
        for step in steps:
            if step is fan_out_step and rounds % 2 != index % 2:
                continue
            await soak.panes_ready.wait()
            soak.busy += 1
            soak.idle.clear()
            try:
                exact = await step(soak, index)
            finally:
                soak.busy -= 1
                if not soak.busy:
                    soak.idle.set()
            if not exact:
                await asyncio.sleep(1)
            if soak.stopping.is_set():
                return
        rounds += 1


# --- the faults -----------------------------------------------------------------------


class Faults:
    """Breaks one thing at a time, and mends it (a stop continued, a disk emptied, a
    killed tmux server started again with fresh panes) before it returns."""

    def __init__(
        self, soak: Soak, silent: ExecHost, socket: str, audit_dir: Path, ssh_config: Path
    ) -> None:
        self.soak, self.silent, self.socket = soak, silent, socket
        self.kinds = FAULTS
        self.audit_dir, self.ssh_config = audit_dir, ssh_config
        self.injected: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.stopped: list[int] = []  # pids to continue, whatever happens

    async def loop(self, every: float, until: float) -> None:
        """A fault every ``every`` seconds from now (the first after ``every``), the last
        at least ``every`` / 2 before ``until``."""
        began, turn = time.monotonic(), 0
        while (start := began + (turn + 1) * every) < until - every / 2:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self.soak.stopping.wait(), max(0.0, start - time.monotonic())
                )
                return
            kind = self.kinds[turn % len(self.kinds)]
            turn += 1
            window = Window(kind, time.monotonic())
            self.soak.windows.append(window)
            try:
                detail = await getattr(self, kind)()
            finally:
                window.end = time.monotonic()
                self.continue_stopped()
            (self.injected if detail else self.skipped)[kind] += 1
            print(f"fault {turn}: {kind}: {detail or 'nothing to break'}", flush=True)

    def continue_stopped(self) -> None:
        while self.stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.stopped.pop(), signal.SIGCONT)

    async def control_client(self) -> str | None:
        clients = [
            p.pid
            for p in descendants(self.soak.pid)
            if b"-C" in p.argv and b"attach-session" in p.argv
        ]
        if not clients:
            return None
        chosen = random.choice(clients)
        os.kill(chosen, signal.SIGKILL)
        return f"pid {chosen}, one of {len(clients)}"

    async def tmux_server(self) -> str | None:
        """SIGKILL of ``here``'s server while the clients work; then, once every step
        that began before has ended (a new server gives its panes the old ids, and a
        step still holding one would type into another client's pane), the server
        again with fresh panes."""
        pid = int(await asyncio.to_thread(self.soak.tmux.run, "display", "-p", "#{pid}"))
        self.soak.panes_ready.clear()
        os.kill(pid, signal.SIGKILL)
        await asyncio.to_thread(until_gone, pid)
        await self.soak.idle.wait()
        await self.soak.make_panes(len(self.soak.panes))
        return f"pid {pid}"

    async def ssh_master(self) -> str | None:
        masters = [
            p.pid
            for p in processes()
            if p.argv
            and Path(p.argv[0].decode()).name == "ssh"
            and str(self.ssh_config).encode() in p.argv
            and any(word in (b"-M", b"ControlMaster=yes") for word in p.argv)
        ]
        for pid in masters:
            os.kill(pid, signal.SIGKILL)
        return f"pids {masters}" if masters else None

    async def schemux_stopped(self) -> str | None:
        os.kill(self.soak.pid, signal.SIGSTOP)
        self.stopped.append(self.soak.pid)
        await asyncio.sleep(STOP_SECONDS)
        return f"{STOP_SECONDS:g} s"

    async def audit_full(self) -> str | None:
        filler = Path(f"/proc/{self.soak.pid}/root") / self.audit_dir.relative_to("/") / "filler"
        await asyncio.to_thread(fill, filler)
        try:
            await asyncio.sleep(HOLD_SECONDS)
        finally:
            filler.unlink(missing_ok=True)
        return f"{HOLD_SECONDS:g} s"

    async def host_silent(self) -> str | None:
        env = ["env", f"TMUX_TMPDIR={self.silent.directory}", "tmux", "-L", self.socket]
        shown = await asyncio.create_subprocess_exec(
            *env, "display", "-p", "#{pid}", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        output, _ = await shown.communicate()
        if shown.returncode:
            return None
        pid = int(output)
        os.kill(pid, signal.SIGSTOP)
        self.stopped.append(pid)
        await asyncio.sleep(HOLD_SECONDS)
        return f"{self.silent.name}'s server, pid {pid}, stopped {HOLD_SECONDS:g} s"


def until_gone(pid: int) -> None:
    while Path(f"/proc/{pid}").exists():
        time.sleep(0.05)


def fill(path: Path) -> None:
    """Write zeros to ``path`` until its filesystem is full."""
    chunk = bytes(1 << 20)
    with open(path, "wb") as file:
        while True:
            try:
                file.write(chunk)
                file.flush()
            except OSError:
                break
        with contextlib.suppress(OSError):
            while True:  # the last part of a page
                os.write(file.fileno(), b"\0" * 512)


# --- the run --------------------------------------------------------------------------


def audit_figures(pid: int, audit_dir: Path) -> dict[str, int]:
    """Records in schemux's audit log, its gap notices and the calls they say were lost,
    and lines that do not parse."""
    log = Path(f"/proc/{pid}/root") / audit_dir.relative_to("/") / "audit.jsonl"
    figures = Counter({"records": 0, "gap_notices": 0, "calls_not_recorded": 0, "broken": 0})
    for line in log.read_bytes().split(b"\n"):
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            figures["broken"] += 1
            continue
        if "gap" in record:
            figures["gap_notices"] += 1
            figures["calls_not_recorded"] += int(record["gap"])
        else:
            figures["records"] += 1
    return dict(figures)


def server_params(
    socket: str, audit_dir: Path, hosts: list[ExecHost], ssh_config: Path
) -> StdioServerParameters:
    """``schemux serve`` in a mount namespace of its own whose audit directory is a
    small tmpfs (the unshared mount namespace ends with it, and the tmpfs with it)."""
    mount = f'mount -t tmpfs -o size={AUDIT_FS_SIZE},mode=0700 tmpfs "$1" && shift && exec "$@"'
    named = ["here=local", *(f"{h.name}=exec:{h.prefix}" for h in hosts), f"far={ALIAS}"]
    serve = [sys.executable, "-m", "schemux", "serve", "--socket-name", socket]
    serve += ["--audit-log", str(audit_dir / "audit.jsonl")]
    return StdioServerParameters(
        command="unshare",
        args=["-m", "sh", "-c", mount, "sh", str(audit_dir), *serve],
        # not the repository root, where -m schemux would import the bare source directory
        cwd=Path(__file__).resolve().parent,
        env={
            "TMUX_TMPDIR": os.environ["TMUX_TMPDIR"],
            ENV_HOST: ";".join(named),
            ENV_SSH_CONFIG: str(ssh_config),
            "SCHEMUX_AUDIT_MAX_BYTES": str(AUDIT_MAX_BYTES),
        },
    )


def schemux_pid() -> int:
    found = [
        p.pid
        for p in processes()
        if p.ppid == os.getpid() and b"schemux" in p.argv and b"serve" in p.argv
    ]
    if len(found) != 1:
        raise RuntimeError(f"expected one schemux serve child, found {found}")
    return found[0]


@contextmanager
def directories() -> Iterator[dict[str, Path]]:
    root = Path(tempfile.mkdtemp(prefix="sxk", dir="/tmp"))  # short: socket paths
    made = {name: root / name for name in ("here", "far", "audit")}
    try:
        for path in made.values():
            path.mkdir(mode=0o700)
        yield made
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def soak(options: argparse.Namespace) -> dict[str, Any]:
    socket = f"schemux-soak-{os.getpid()}"
    problem = available()
    if problem is not None:
        raise RuntimeError(f"the ssh host needs the test sshd: {problem}")
    with ExitStack() as stack:
        where = stack.enter_context(directories())
        # the test sshd hands its sessions the TMUX_TMPDIR it started under: the ssh host's
        # tmux server is then in a directory of its own, not here's server seen twice
        os.environ["TMUX_TMPDIR"] = str(where["far"])
        ssh_config = stack.enter_context(ssh_server()).config
        stack.callback(
            subprocess.run,
            ["env", f"TMUX_TMPDIR={where['far']}", "tmux", "-L", socket, "kill-server"],
            capture_output=True,
        )
        os.environ["TMUX_TMPDIR"] = str(where["here"])
        tmux = Tmux(socket)
        stack.callback(tmux.kill)
        hosts = stack.enter_context(exec_hosts(2, socket, "e"))
        params = server_params(socket, where["audit"], hosts, ssh_config)
        async with Client(params, cache=None) as client:
            pid = schemux_pid()
            runner = Soak(client, tmux, pid)
            await runner.make_panes(options.clients)
            faults = Faults(runner, hosts[1], socket, where["audit"], ssh_config)
            faults.kinds = options.faults
            try:
                return await soak_with(runner, faults, options, where["audit"])
            finally:
                faults.continue_stopped()
    raise AssertionError("unreachable")


async def soak_with(
    runner: Soak, faults: Faults, options: argparse.Namespace, audit_dir: Path
) -> dict[str, Any]:
    # enough rounds that schemux holds as many ended programs as it keeps (32 by
    # default, their output open): from there on what it holds does not grow
    rounds = -(-(RETAINED_PROGRAMS + options.clients) // options.clients)
    print(f"warm-up: {rounds} rounds of every client", flush=True)
    for _ in range(rounds):
        await asyncio.gather(*(one_round(runner, index) for index in range(options.clients)))
    missed = runner.tally.wrong + runner.tally.unprovoked
    if missed:
        raise CallFailed(f"the warm-up was not exact: {'; '.join(missed)}")
    runner.tally = Tally()
    await asyncio.sleep(SETTLE)
    start, load_start = holdings(runner.pid), os.getloadavg()
    kinds_start = fd_kinds(runner.pid)
    began = time.monotonic()
    until = began + options.minutes * 60
    print(f"soak: {options.minutes:g} min, {options.clients} clients, start {start}", flush=True)
    clients = [asyncio.create_task(client_loop(runner, index)) for index in range(options.clients)]
    fault_loop = asyncio.create_task(faults.loop(options.fault_every, until))
    await asyncio.sleep(max(0.0, until - time.monotonic()))
    runner.stopping.set()
    await fault_loop
    await asyncio.gather(*clients)
    seconds = time.monotonic() - began
    await asyncio.sleep(SETTLE)
    end, load_end = holdings(runner.pid), os.getloadavg()
    kinds_end = fd_kinds(runner.pid)
    audit = audit_figures(runner.pid, audit_dir)
    audit["tool_calls_sent"] = runner.sent
    audit["unaccounted"] = runner.sent - audit["records"] - audit["calls_not_recorded"]
    tally = runner.tally
    return {
        "machine": machine_facts(),
        "minutes": seconds / 60,
        "clients": options.clients,
        "fault_every_s": options.fault_every,
        "load_average": {"start": load_start, "end": load_end},
        "calls": {kind: dict(counts) for kind, counts in sorted(tally.calls.items())},
        "totals": dict(sum(tally.calls.values(), Counter())),
        "faults": dict(faults.injected),
        "faults_with_nothing_to_break": dict(faults.skipped),
        "clear_errors": dict(tally.errors.most_common()),
        "wrong": tally.wrong,
        "unprovoked": tally.unprovoked,
        "program_bytes": dict(tally.program_bytes),
        "audit": audit,
        "resources": {"start": start.__dict__, "end": end.__dict__},
        "fd_kinds": {"start": kinds_start, "end": kinds_end},
    }


async def one_round(runner: Soak, index: int) -> None:
    await command_step(runner, index)
    await program_step(runner, index)
    await keys_step(runner, index)
    await fan_out_step(runner, index)


def bars(report: dict[str, Any]) -> list[Bar]:
    start, end = report["resources"]["start"], report["resources"]["end"]
    found = [
        Bar("wrong results", report["totals"].get(WRONG, 0), 0, ""),
        Bar("errors with no fault near", report["totals"].get(UNPROVOKED, 0), 0, ""),
        Bar("calls the audit log lost uncounted", report["audit"]["unaccounted"], 0, ""),
    ]
    for name in ("rss_mb", "fds", "threads"):
        change = (end[name] - start[name]) / start[name]
        found.append(Bar(f"{name} end / start - 1", change * 100, RESOURCE_BAR * 100, " %"))
    return found


def render(report: dict[str, Any]) -> str:
    totals = report["totals"]
    lines = [
        f"soak: {report['minutes']:.1f} min, {report['clients']} clients, a fault every "
        f"{report['fault_every_s']:g} s; load average {report['load_average']['start'][0]:.1f}"
        f" at start, {report['load_average']['end'][0]:.1f} at end",
        f"calls: {sum(totals.values())}: exact {totals.get(EXACT, 0)}, clear errors "
        f"{totals.get(CLEAR, 0)}, unprovoked errors {totals.get(UNPROVOKED, 0)}, wrong "
        f"{totals.get(WRONG, 0)}",
        f"  {'kind':22}{'calls':>7}{'exact':>8}{'clear':>8}{'unprov.':>9}{'wrong':>7}",
    ]
    for kind, counts in report["calls"].items():
        lines.append(
            f"  {kind:22}{sum(counts.values()):7}{counts.get(EXACT, 0):8}"
            f"{counts.get(CLEAR, 0):8}{counts.get(UNPROVOKED, 0):9}{counts.get(WRONG, 0):7}"
        )
    lines.append(
        f"faults: {report['faults']} (nothing to break: {report['faults_with_nothing_to_break']})"
    )
    lines.append(f"program bytes: {report['program_bytes']}")
    lines.append(f"audit log: {report['audit']}")
    lines.append("clear errors, most common first:")
    lines += [f"  {count:5}  {text}" for text, count in list(report["clear_errors"].items())[:15]]
    for name in ("wrong", "unprovoked"):
        if report[name]:
            lines.append(f"{name}:")
            lines += [f"  {text.splitlines()[0][:300]}" for text in report[name][:20]]
    start, end = report["resources"]["start"], report["resources"]["end"]
    lines.append(
        "schemux: " + ", ".join(f"{name} {start[name]:.1f} -> {end[name]:.1f}" for name in start)
    )
    lines.append(f"  fds by kind: {report['fd_kinds']['start']} -> {report['fd_kinds']['end']}")
    lines += ["bar", *(bar.line() for bar in bars(report))]
    return "\n".join(lines)


def fault_kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(kind.strip() for kind in text.split(",") if kind.strip())
    unknown = [kind for kind in kinds if kind not in FAULTS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"faults are some of {', '.join(FAULTS)}")
    return kinds


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--fault-every", type=float, default=60, help="seconds")
    parser.add_argument(
        "--faults",
        type=fault_kinds,
        default=FAULTS,
        help=f"the faults to take in turn, comma-separated (default all: {','.join(FAULTS)})",
    )
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    report = await soak(options)
    return publish(render(report), report, options.json, bars(report))


if __name__ == "__main__":
    run(lambda: asyncio.run(main()))
