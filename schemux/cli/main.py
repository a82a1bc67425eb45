"""The ``schemux`` command: ``serve`` (stdio or streamable HTTP), ``call``, ``tools``,
``doctor``, ``audit`` and ``replay``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from schemux import __version__, logs
from schemux.audit.log import check_file as check_audit_file
from schemux.cli.environment import help_text
from schemux.cli.start_notice import TERMINAL_HINT, same_server_lines, start_line
from schemux.config import SCHEMA_MODES, SettingOptions
from schemux.errors import ConfigError, SchemuxError, TmuxUnavailable
from schemux.generated.tool_facts import FAMILIES, ON_REQUEST_FAMILIES
from schemux.hosts import Host
from schemux.hosts.kinds import host_for
from schemux.hosts.programs.gate import check_gate_setting
from schemux.http.config import HttpConfig, http_config_from
from schemux.serving.binding import ToolBinding
from schemux.serving.selection import select

if TYPE_CHECKING:
    from schemux.serving.state import ServingState

Bindings = dict[str, ToolBinding]
T = TypeVar("T")


def build_parser() -> argparse.ArgumentParser:
    tmux_options = argparse.ArgumentParser(add_help=False)
    tmux_options.add_argument(
        "-L", "--socket-name", help="tmux server socket name (env SCHEMUX_SOCKET_NAME)"
    )
    tmux_options.add_argument(
        "-S", "--socket-path", help="tmux server socket path (env SCHEMUX_SOCKET_PATH)"
    )
    tmux_options.add_argument(
        "--ssh",
        metavar="DEST",
        help="the tmux server is on host DEST, reached with OpenSSH (env SCHEMUX_SSH)",
    )
    tmux_options.add_argument(
        "--ssh-config",
        metavar="FILE",
        help="with --ssh, ssh's config file (ssh -F; env SCHEMUX_SSH_CONFIG)",
    )
    tmux_options.add_argument(
        "--exec",
        dest="exec_prefix",
        metavar="PREFIX",
        help="the tmux server is where PREFIX runs commands, split as a shell would: "
        "'docker exec -i CTR', 'kubectl exec -i POD --' (env SCHEMUX_EXEC)",
    )
    tmux_options.add_argument(
        "--host",
        dest="hosts",
        action="append",
        default=[],
        metavar="NAME=DEST",
        help="serve the host NAME too (repeatable): DEST as --ssh takes it, 'local' (this "
        "machine) or 'exec:PREFIX' (as --exec takes it); with several hosts, each tool takes "
        "'host' (env SCHEMUX_HOST, one a line or ';'-separated)",
    )
    tmux_options.add_argument(
        "--hosts",
        dest="hosts_file",
        metavar="FILE",
        help="serve the hosts of the TOML file FILE: [hosts.NAME] tables of kind, "
        "destination or prefix, ssh_config, groups (env SCHEMUX_HOSTS)",
    )
    tmux_options.add_argument(
        "--default-host",
        metavar="NAME",
        help="the host of a call that names none (env SCHEMUX_DEFAULT_HOST; default the "
        "first configured)",
    )
    tmux_options.add_argument(
        "--max-connecting",
        type=int,
        metavar="N",
        help="at most N hosts connecting at once (env SCHEMUX_MAX_CONNECTING, default 8)",
    )
    tmux_options.add_argument(
        "--wait-ceiling",
        type=float,
        metavar="SECONDS",
        help="longest wait any call may make; larger timeouts are clamped to it "
        "(env SCHEMUX_WAIT_CEILING, default 120)",
    )
    tool_options = argparse.ArgumentParser(add_help=False)
    tool_options.add_argument(
        "--tools",
        metavar="NAMES",
        help=f"serve only these tools or families ({', '.join(FAMILIES)}), comma-separated, "
        f"or all (env SCHEMUX_TOOLS; default every family but {', '.join(ON_REQUEST_FAMILIES)})",
    )
    tool_options.add_argument(
        "--schemas",
        choices=SCHEMA_MODES,
        help="how tools/list serves the schemas: projected (what every model provider "
        "accepts, with each outputSchema), compact (projected without outputSchema), exact "
        "(the contracts), openai-strict (for OpenAI's strict mode, with each outputSchema) "
        "(env SCHEMUX_SCHEMAS; default projected)",
    )
    tool_options.add_argument(
        "--exact-schemas",
        action="store_const",
        const="exact",
        dest="schemas",
        help="the same as --schemas exact (env SCHEMUX_EXACT_SCHEMAS=1)",
    )
    recording = recording_options()
    documented: dict[str, Any] = {
        "epilog": help_text(),
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }
    parser = argparse.ArgumentParser(
        prog="schemux",
        description="A schema-first MCP server for tmux (Linux). An MCP client starts "
        "'schemux serve'; 'schemux call' tries one tool from a shell.",
        **documented,
    )
    parser.add_argument("--version", action="version", version=f"schemux {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    http_parser = argparse.ArgumentParser(add_help=False)
    http_parser.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead (HOST defaults to "
        "127.0.0.1; any other needs a token)",
    )
    http_parser.add_argument(
        "--token-file",
        metavar="FILE",
        help="with --http, require 'Authorization: Bearer <the file's first line>' "
        "(env SCHEMUX_HTTP_TOKEN)",
    )
    http_parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="with --http, also accept requests naming HOST or HOST:PORT in Host/Origin "
        "(repeatable; env SCHEMUX_ALLOWED_HOSTS, comma-separated)",
    )
    commands.add_parser(
        "serve",
        parents=[tmux_options, tool_options, http_parser, recording],
        help="serve MCP over stdio (default) or HTTP",
        **documented,
    )
    call = commands.add_parser(
        "call",
        parents=[tmux_options, tool_options, recording],
        help="run one tool in-process and print its result once (its structured content "
        "as JSON; an error's text on stderr, exit status 1)",
        **documented,
    )
    call.add_argument("tool", help="tool name, e.g. run_command")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as JSON")
    commands.add_parser(
        "tools",
        parents=[tool_options],
        help="list every tool: family, bytes of its tools/list entry, served, summary",
    )
    commands.add_parser(
        "doctor",
        parents=[tmux_options, tool_options, http_parser, recording],
        help="check what serving with these options needs, one line each, with the fix; "
        "exits 1 when something blocks serving",
        **documented,
    )
    reader = commands.add_parser(
        "audit", help="print the audit log: one line per tool call, oldest first"
    )
    reader.add_argument(
        "-f", "--follow", action="store_true", help="then print each call as it is recorded"
    )
    reader.add_argument(
        "--since",
        metavar="WHEN",
        help="only calls from WHEN on: 10m, 2h, 1d ago, today, yesterday, or an ISO time",
    )
    reader.add_argument(
        "--audit-log", metavar="FILE", help="read FILE (env SCHEMUX_AUDIT_LOG; default the state's)"
    )
    replay = commands.add_parser(
        "replay", help="play a recording (a program's or an agent's call) in this terminal"
    )
    replay.add_argument(
        "ref",
        metavar="REF",
        help="the recording: its id (as schemux audit shows it), its tmux:// resource URI, "
        "or a .cast file",
    )
    replay.add_argument(
        "--speed", type=float, default=1.0, help="play this many times faster (default 1)"
    )
    replay.add_argument(
        "--idle-limit",
        type=float,
        metavar="SECONDS",
        help="wait at most SECONDS between events (default: as recorded)",
    )
    replay.add_argument(
        "--audit-log",
        metavar="FILE",
        help="the recordings beside FILE (env SCHEMUX_AUDIT_LOG; default the state's)",
    )
    return parser


def recording_options() -> argparse.ArgumentParser:
    """What is recorded of the server's work: the audit log, and its own log."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--audit-log",
        metavar="FILE",
        help="record each tool call in FILE (env SCHEMUX_AUDIT_LOG; default "
        "$XDG_STATE_HOME/schemux/audit.jsonl)",
    )
    options.add_argument(
        "--no-audit", action="store_true", help="record no tool call (env SCHEMUX_NO_AUDIT=1)"
    )
    options.add_argument(
        "--audit-redact",
        action="store_true",
        help="record command, keys, input and argv by length and SHA-256 only "
        "(env SCHEMUX_AUDIT_REDACT=1)",
    )
    options.add_argument(
        "--no-record",
        action="store_true",
        help="record no program and no call driving the agent's pane in asciicast files "
        "beside the audit log (env SCHEMUX_NO_RECORD=1)",
    )
    options.add_argument(
        "--policy",
        metavar="FILE",
        help="what the agent may run and type where, and what is asked first: a TOML "
        "policy file (env SCHEMUX_POLICY; SECURITY.md)",
    )
    options.add_argument(
        "--mask-secrets",
        action="store_true",
        help="mask credentials in results, resources and the audit log "
        "(env SCHEMUX_MASK_SECRETS=1)",
    )
    options.add_argument(
        "--log-level",
        choices=logs.LEVELS,
        help="the server's own log (env SCHEMUX_LOG_LEVEL; default warning)",
    )
    options.add_argument(
        "--log-file",
        metavar="FILE",
        help="append the server's log to FILE, not stderr (env SCHEMUX_LOG_FILE)",
    )
    return options


def http_options(args: argparse.Namespace) -> HttpConfig | None:
    """The HTTP settings when ``serve --http`` was asked for; its options need it."""
    if getattr(args, "http", None):
        return http_config_from(
            os.environ, args.http, token_file=args.token_file, allowed_hosts=args.allow_host
        )
    if getattr(args, "token_file", None) or getattr(args, "allow_host", None):
        raise ConfigError("--token-file and --allow-host apply to --http only")
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="schemux: %(levelname)s %(message)s")
    if args.command == "doctor":
        return run_doctor(args)
    if args.command == "audit":
        return run_audit(args)
    if args.command == "replay":
        return run_replay(args)
    from schemux.generated.bindings import BINDINGS

    host: Host | None = None  # made once the settings are known; the ServingState owns it
    try:
        settings = setting_options(args).settings(os.environ)
        check_gate_setting(settings.program_gate)
        if args.command in ("serve", "call"):
            logs.configure(os.environ, args.log_level, args.log_file)
            check_audit_file(settings.audit)
        selected = select(BINDINGS, settings.tools, several_hosts=settings.several_hosts)
        http = http_options(args) if args.command == "serve" else None
        if settings.named_hosts:  # each host is connected at its first call
            names = [named.name for named in settings.fleet.hosts]
            tmux_version = f"{len(names)} hosts ({', '.join(names)})"
        else:
            host = host_for(settings.host_target)
            tmux_version = host.check_tmux() if args.command != "tools" else ""
        listener = http.listen() if http is not None else None
    except (ConfigError, TmuxUnavailable, SchemuxError) as error:
        print(f"schemux: {error}", file=sys.stderr)
        if host is not None:
            host.close()
        return 2
    if args.command == "tools":
        from schemux.serving.tool_listing import tool_table

        print(tool_table(BINDINGS, selected, mode=settings.schemas), end="")
        return 0
    # the tool context needs the MCP SDK, whose import takes about a second: loaded only
    # to serve or call, and before the start line, which announces a server that answers
    from schemux.serving.state import ServingState

    context = ServingState(settings, host)  # it owns the host; closed on every path below
    if args.command == "call":
        return anyio.run(
            _watching_children, call_once, context, selected, args.tool, args.arguments
        )
    if http is not None and listener is not None:
        serving = http.serving()
        print(
            start_line(settings, tmux_version, serving),
            *same_server_lines(settings),
            sep="\n",
            file=sys.stderr,
            flush=True,
        )
        anyio.run(_watching_children, serve_http, context, selected, http, listener)
    else:
        print(
            start_line(settings, tmux_version, "serving MCP on stdio"),
            *same_server_lines(settings),
            sep="\n",
            file=sys.stderr,
        )
        if sys.stdin.isatty():  # a person, not a client: say what this is
            print(TERMINAL_HINT, file=sys.stderr)
        sys.stderr.flush()
        anyio.run(_watching_children, serve_stdio, context, selected)
    return 0


def setting_options(args: argparse.Namespace) -> SettingOptions:
    """The settings' options the command line gave (a command without one leaves it
    unset)."""
    given = {
        option.name: getattr(args, option.name)
        for option in dataclasses.fields(SettingOptions)
        if hasattr(args, option.name)
    }
    if "hosts" in given:
        given["hosts"] = tuple(given["hosts"])
    return SettingOptions(**given)


def run_doctor(args: argparse.Namespace) -> int:
    from schemux.cli.doctor import Options, diagnose, exit_status

    options = Options(
        setting_options(args),
        http=args.http,
        token_file=args.token_file,
        allowed_hosts=tuple(args.allow_host),
    )
    checks = diagnose(os.environ, options)
    print(f"schemux {__version__} doctor")
    for check in checks:
        print(check.line())
    return exit_status(checks)


def run_replay(args: argparse.Namespace) -> int:
    from schemux.audit.replay import find, play
    from schemux.config import audit_path

    try:
        if not args.speed > 0 or (args.idle_limit is not None and not args.idle_limit > 0):
            raise ConfigError("--speed and --idle-limit take a number greater than 0")
        path = find(args.ref, audit_path(os.environ, args.audit_log).parent)
        return play(path, sys.stdout, speed=args.speed, idle_limit=args.idle_limit)
    except ConfigError as error:
        print(f"schemux: {error}", file=sys.stderr)
        return 2


def run_audit(args: argparse.Namespace) -> int:
    from schemux.audit.reader import parse_since, print_log
    from schemux.config import audit_path

    try:
        since = None if args.since is None else parse_since(args.since)
        path = audit_path(os.environ, args.audit_log)
    except ConfigError as error:
        print(f"schemux: {error}", file=sys.stderr)
        return 2
    try:
        return print_log(path, since, args.follow, sys.stdout)
    except BrokenPipeError:  # | head: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _server(context: ServingState, bindings: Bindings) -> Any:
    from schemux.serving.server import build_server

    return build_server(context, bindings)


# a service manager's stop, C-c, a closed terminal or ssh session: each ends schemux as
# stdin's end does
SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
CLOSE_SECONDS = 3.0  # the programs' own ending is bounded at about two; this is a backstop


async def _watching_children(serve: Callable[..., Awaitable[T]], *args: object) -> T:
    """``serve(*args)`` on this event loop, its child processes watched by pidfds
    (``schemux.system.child_watching``): the loop's owner sets that up and takes it down."""
    from schemux.system.child_watching import pidfd_child_watching

    async with pidfd_child_watching():
        return await serve(*args)


async def serve_stdio(context: ServingState, bindings: Bindings) -> None:
    from schemux.serving.stdio import stdio_transport
    from schemux.serving.unreadable import answering_unreadable

    server = _server(context, bindings)

    async def leave() -> None:
        # the SDK's transport (stdin a terminal or a file) reads stdin in a thread blocked
        # in read(2), which no cancellation reaches: clean up, then leave without waiting
        await _close(context)
        sys.stdout.flush()
        os._exit(0)

    try:
        async with anyio.create_task_group() as group:

            def on_signal() -> None:
                group.start_soon(leave)

            group.start_soon(_on_signal, on_signal)
            async with (
                stdio_transport() as (read_stream, write_stream),
                answering_unreadable(read_stream, write_stream) as readable,
            ):
                await server.run(readable, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()  # stdin's end
    finally:
        await _close(context)


async def serve_http(
    context: ServingState, bindings: Bindings, http: HttpConfig, listener: socket.socket
) -> None:
    import uvicorn

    from schemux.http.guard import ConnectionGuard
    from schemux.http.security import secured_app
    from schemux.serving.page import page_app

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # schemux takes SIGTERM and SIGINT itself (uvicorn would raise them again
            # once it stopped, ending the process before the programs were cleaned up)
            yield

    # the page beside /mcp, behind the same token (http.signin)
    page, shown = page_app(context, signin=http.token is not None)
    app = secured_app(_server(context, bindings), http, page)
    guard = ConnectionGuard(http)
    config = uvicorn.Config(
        app,
        host=http.host,
        port=http.port,
        http=guard.protocol(),
        log_level="warning",
        timeout_graceful_shutdown=1,
        log_config=None,  # uvicorn's warnings go where the server's log goes (--log-file)
    )
    served = Server(config)

    def stop() -> None:
        shown.close()  # the pages' event streams end at once, not at uvicorn's grace
        served.should_exit = True

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_on_signal, stop)
            await served.serve(sockets=[listener])
            group.cancel_scope.cancel()
    finally:
        guard.close()
        await _close(context)


async def _on_signal(act: Callable[[], None]) -> None:
    with anyio.open_signal_receiver(*SHUTDOWN_SIGNALS) as received:
        async for _ in received:
            act()
            return


async def _close(context: ServingState) -> None:
    """Every exit path ends here: calls in flight cancelled and their cleanup done,
    programs ended (in parallel, trees and all), panes and the runtime directory removed,
    the ssh master ended, whatever cancelled the serving."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
        await context.close()


async def call_once(
    context: ServingState, bindings: Bindings, tool: str, raw_arguments: str
) -> int:
    from mcp import Client, MCPError
    from mcp_types import Implementation

    try:
        try:
            arguments = json.loads(raw_arguments)
        except json.JSONDecodeError as error:
            print(f"schemux: the arguments are not JSON: {error}", file=sys.stderr)
            return 2
        if not isinstance(arguments, dict):
            print("schemux: the arguments must be a JSON object", file=sys.stderr)
            return 2
        caller = Implementation(name="schemux call", version=__version__)  # as audited
        async with Client(_server(context, bindings), client_info=caller) as client:
            try:
                result = await client.call_tool(tool, arguments)
            except MCPError as error:
                print(f"schemux: {error.message}", file=sys.stderr)
                return 2
    finally:
        await context.close()
    print_result(result)
    return 1 if result.is_error else 0


def print_result(result: Any) -> None:
    """A tool's result (an MCP ``CallToolResult``) once: its structured content as JSON
    on stdout (the text a client also gets is the same JSON, not printed again), or its
    text; an error's text goes to stderr. Any other block (a note, an image) is printed
    as its JSON on stderr, after the result."""
    rest = list(result.content)
    if result.structured_content is not None:
        print(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
        rest = rest[1:]  # the same JSON as text
    else:
        texts = [block for block in rest if block.type == "text"]
        for block in texts:
            print(block.text, file=sys.stderr if result.is_error else sys.stdout)
        rest = [block for block in rest if block.type != "text"]
    for block in rest:
        if block.type == "text":
            print(block.text, file=sys.stderr)
        else:
            dumped = block.model_dump(mode="json", by_alias=True, exclude_none=True)
            print(json.dumps(dumped, ensure_ascii=False), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
