"""Both gates speak one protocol: each is run here directly (no tmux), given its token table
through the one-shot FIFO, and its end marker is read back by the one verifier
(schemux.hosts.programs.gate); and which gate runs where, and the setting that forces one."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from schemux.cli.main import main
from schemux.config import Settings, settings_from
from schemux.errors import ConfigError
from schemux.hosts.programs import gate as program_gates
from schemux.hosts.programs.gate import PYTHON_GATE, Gate, check_gate_setting, choose_gate, scan
from schemux.hosts.programs.gate_process import RT_SIGACTION, TABLE_BYTES
from tests.support import require_tool

# what would change a Perl's or a Python's behaviour, were the gate to honour it
HOSTILE_ENVIRONMENT = {
    "PERL5OPT": "-MNo::Such::Module",
    "PERL5LIB": "/nonexistent",
    "PERLIO": ":utf8",
    "PERL_UNICODE": "SDA",
    "PYTHONPATH": "/nonexistent",
    "PYTHONSTARTUP": "/nonexistent",
    "PYTHONWARNINGS": "error",
}


def gates() -> list[Gate]:
    perl = program_gates.perl_gate()
    return [PYTHON_GATE, *([perl] if isinstance(perl, Gate) else [])]


# signals above 31 a parent may have ignored: glibc's own two (32 and 33, which its
# sigaction refuses to touch), the first and last realtime signals it offers, SIGRTMAX
IGNORED_ABOVE_31 = (32, 33, 34, 64)


def ignore_what_a_background_start_ignores() -> None:
    """The gate started as under ``nohup`` (SIGHUP ignored) in a background job (SIGINT
    and SIGQUIT), by a parent that ignores SIGPIPE and signals above 31 (seen: signal 32
    ignored on Python 3.13): none of it may reach the program, and the gate's own signals
    still work (SIGUSR1 releases it)."""
    for signum in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_IGN)
    for number in IGNORED_ABOVE_31:
        set_disposition(number, signal.SIG_IGN)


def set_disposition(signum: int, handler: signal.Handlers) -> None:
    """``handler`` for ``signum`` by the rt_sigaction system call itself: glibc's
    sigaction (Python's signal.signal) refuses glibc's own signals."""
    action = int(handler).to_bytes(8, sys.byteorder) + bytes(24)  # no flags, no mask
    libc = ctypes.CDLL(None, use_errno=True)
    number = RT_SIGACTION[os.uname().machine]
    if libc.syscall(number, signum, action, None, 8) != 0:
        raise OSError(ctypes.get_errno(), f"rt_sigaction({signum})")


def run_gate(
    gate: Gate, tmp_path: Path, argv: list[str], table: bytes | None = None
) -> tuple[bytes, int]:
    """The gate's terminal output up to its marker (then released), and its exit status."""
    os.mkfifo(tmp_path / "secret", 0o600)
    fifo = os.open(tmp_path / "secret", os.O_RDWR | os.O_NONBLOCK)
    table = os.urandom(TABLE_BYTES) if table is None else table
    command = gate.command(tmp_path, str(tmp_path), "", "", 0.5, {"GATE_TEST": "v"}, argv)
    # a relative directory in PATH: what Perl's taint checks call insecure runs all the same
    env = {"PATH": f".:{os.environ['PATH']}", **HOSTILE_ENVIRONMENT}
    gate_process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
        preexec_fn=ignore_what_a_background_start_ignores,
    )  # fmt: skip
    assert gate_process.stdout is not None
    try:
        os.write(fifo, table)
        output = b""
        while scan(output, table)[2] is None:  # until the genuine marker
            chunk = os.read(gate_process.stdout.fileno(), 65536)
            if not chunk:
                break
            output += chunk
        gate_process.send_signal(signal.SIGUSR1)
        code = gate_process.wait(timeout=10)
    finally:
        os.close(fifo)
        if gate_process.poll() is None:
            gate_process.kill()
            gate_process.wait()
    assert not (tmp_path / "secret").exists()  # one-shot: gone once read
    return output, code


@pytest.mark.parametrize("gate", gates(), ids=lambda gate: gate.kind)
@pytest.mark.parametrize(
    ("argv", "report", "says"),
    [
        (["sh", "-c", 'printf "%s" "$GATE_TEST"; exit 3'], (3, "x"), b"v"),
        (["sh", "-c", "kill -TERM $$"], (128 + signal.SIGTERM, "x"), b""),
        # no signal ignored (Python ignores SIGPIPE and SIGXFSZ for itself; the gate's
        # start ignored those of ignore_what_a_background_start_ignores)
        (["grep", "SigIgn", "/proc/self/status"], (0, "x"), b"SigIgn:\t0000000000000000\n"),
        (["sh", "-c", "printf '\\377;\\033]7777;schemux-end;0;x;00\\a'"], (0, "x"), b"\xff;"),
        (["no-such-program-here"], (127, "n"), b"no-such-program-here: not found\n"),
        (["/nonexistent/program"], (127, "n"), b"/nonexistent/program: No such file"),
        (["./plain"], (126, "n"), b"./plain: Permission denied"),
    ],
)
def test_each_gate_reports_its_program_by_the_table(
    gate: Gate, tmp_path: Path, argv: list[str], report: tuple[int, str], says: bytes
) -> None:
    (tmp_path / "plain").write_text("echo not executable\n")
    table = os.urandom(TABLE_BYTES)
    output, code = run_gate(gate, tmp_path, argv, table)
    data, held, found = scan(output, table)
    assert (found, held) == (report, b"")
    assert data.startswith(says)
    assert code == report[0]
    # another table (another program's) does not believe it
    assert scan(output, os.urandom(TABLE_BYTES))[2] is None


@pytest.mark.parametrize("gate", gates(), ids=lambda gate: gate.kind)
def test_a_script_without_an_interpreter_line(gate: Gate, tmp_path: Path) -> None:
    """Perl's exec is execvp(3), which runs such a file with /bin/sh, as a shell does;
    Python's os.execvpe reports it cannot be run."""
    script = tmp_path / "script"
    script.write_text("echo from sh; exit 4\n")
    script.chmod(0o700)
    table = os.urandom(TABLE_BYTES)
    output, code = run_gate(gate, tmp_path, [str(script)], table)
    data, _, found = scan(output, table)
    if gate.kind == "perl":
        assert (data, found, code) == (b"from sh\n", (4, "x"), 4)
    else:
        assert (data, found, code) == (f"{script}: Exec format error\n".encode(), (126, "n"), 126)


@pytest.mark.parametrize("gate", gates(), ids=lambda gate: gate.kind)
def test_a_gate_given_up_on_runs_nothing(gate: Gate, tmp_path: Path) -> None:
    """schemux closed the FIFO before writing: the gate exits 125, the program never ran."""
    os.mkfifo(tmp_path / "secret", 0o600)
    command = gate.command(tmp_path, str(tmp_path), "", "", 0.5, {}, ["touch", "RAN"])
    fifo = os.open(tmp_path / "secret", os.O_RDWR | os.O_NONBLOCK)
    gate_process = subprocess.Popen(command, stdout=subprocess.PIPE)
    os.write(fifo, b"short")
    os.close(fifo)
    assert gate_process.wait(timeout=10) == 125
    assert not (tmp_path / "RAN").exists()


def test_the_perl_gate_is_clean_under_warnings() -> None:
    require_tool("perl")
    perl = program_gates.perl_gate()
    if not isinstance(perl, Gate):
        pytest.skip(perl)  # the architecture's system call numbers
    checked = subprocess.run(
        [perl.prefix[0], "-w", "-c", str(program_gates.PERL_GATE)], capture_output=True
    )
    assert checked.stderr == f"{program_gates.PERL_GATE} syntax OK\n".encode()


def test_auto_takes_perl_where_it_runs_else_python(monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose_gate("python") is PYTHON_GATE
    if isinstance(program_gates.perl_gate(), Gate):
        assert choose_gate("auto").kind == "perl"
        assert choose_gate("auto").prefix[-1] in {"157,14,128,13", "167,135,137,134"}
    monkeypatch.setattr("platform.machine", lambda: "sparc64")
    assert choose_gate("auto") is PYTHON_GATE
    with pytest.raises(ValueError, match="'sparc64' are not known"):
        choose_gate("perl")
    monkeypatch.undo()
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert choose_gate("auto") is PYTHON_GATE
    with pytest.raises(ValueError, match="no perl on PATH"):
        choose_gate("perl")


def test_the_gate_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings_from({}).program_gate == "auto"
    assert settings_from({"SCHEMUX_PROGRAM_GATE": " Python "}).program_gate == "python"
    for bad in ("ruby", "perl;x", "-1"):
        with pytest.raises(
            ConfigError, match=r"SCHEMUX_PROGRAM_GATE=.*expected auto or perl or python"
        ):
            settings_from({"SCHEMUX_PROGRAM_GATE": bad})
    with pytest.raises(ConfigError, match="SCHEMUX_PROGRAM_GATE='bash'"):
        Settings(program_gate="bash")  # type: ignore[arg-type]
    monkeypatch.setattr("shutil.which", lambda name: None)
    forced = settings_from({"SCHEMUX_PROGRAM_GATE": "perl"})  # a value: checked at start
    with pytest.raises(ConfigError, match=r"SCHEMUX_PROGRAM_GATE=perl: .*no perl on PATH"):
        check_gate_setting(forced.program_gate)
    check_gate_setting(settings_from({}).program_gate)  # and programs get the Python gate


def test_schemux_does_not_start_with_a_forced_gate_that_cannot_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SCHEMUX_PROGRAM_GATE", "perl")
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert main(["tools"]) == 2
    assert "SCHEMUX_PROGRAM_GATE=perl: the Perl gate cannot run here" in capsys.readouterr().err


def test_the_gates_know_the_same_rt_sigaction() -> None:
    """The Python gate's rt_sigaction numbers are the Perl gate's (its last)."""
    assert {
        machine: numbers[-1] for machine, numbers in program_gates.PERL_SYSCALLS.items()
    } == RT_SIGACTION
