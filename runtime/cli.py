"""The ``schemux`` command: ``serve`` (stdio or streamable HTTP) and ``call``."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import anyio

from schemux import __version__
from schemux.config import ConfigError, Settings, settings_from
from schemux.context import ToolContext
from schemux.tmux import TmuxUnavailable, check_tmux


def build_parser() -> argparse.ArgumentParser:
    tmux_options = argparse.ArgumentParser(add_help=False)
    tmux_options.add_argument(
        "-L", "--socket-name", help="tmux server socket name (env SCHEMUX_SOCKET_NAME)"
    )
    tmux_options.add_argument(
        "-S", "--socket-path", help="tmux server socket path (env SCHEMUX_SOCKET_PATH)"
    )
    tmux_options.add_argument(
        "--wait-ceiling",
        type=float,
        metavar="SECONDS",
        help="longest wait any call may make; larger timeouts are clamped to it "
        "(env SCHEMUX_WAIT_CEILING, default 120)",
    )
    parser = argparse.ArgumentParser(
        prog="schemux", description="A schema-first MCP server for tmux."
    )
    parser.add_argument("--version", action="version", version=f"schemux {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", parents=[tmux_options], help="serve MCP over stdio (default) or HTTP"
    )
    serve.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead (HOST defaults to 127.0.0.1)",
    )
    call = commands.add_parser(
        "call", parents=[tmux_options], help="run one tool in-process and print its result"
    )
    call.add_argument("tool", help="tool name, e.g. run_command")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as JSON")
    return parser


def parse_http_address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--http {value!r}: expected [HOST:]PORT with a port from 1 to 65535")
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="schemux: %(levelname)s %(message)s")
    try:
        settings = settings_from(
            os.environ,
            socket_name=args.socket_name,
            socket_path=args.socket_path,
            wait_ceiling=args.wait_ceiling,
        )
        http = parse_http_address(args.http) if getattr(args, "http", None) else None
        check_tmux()
    except (ConfigError, TmuxUnavailable) as error:
        print(f"schemux: {error}", file=sys.stderr)
        return 2
    if args.command == "call":
        return anyio.run(call_once, settings, args.tool, args.arguments)
    if http is not None:
        anyio.run(serve_http, settings, *http)
    else:
        anyio.run(serve_stdio, settings)
    return 0


def _server(context: ToolContext) -> Any:
    from schemux.generated.bindings import BINDINGS
    from schemux.server import build_server

    return build_server(context, BINDINGS)


SHUTDOWN_SIGNALS = (signal.SIGTERM, signal.SIGINT)
CLOSE_SECONDS = 3.0  # the programs' own ending is bounded at about two; this is a backstop


async def serve_stdio(settings: Settings) -> None:
    from mcp.server.stdio import stdio_server

    context = ToolContext(settings)
    server = _server(context)

    async def leave() -> None:
        # the transport reads stdin in a thread blocked in read(2), which no cancellation
        # reaches: clean up, then leave without waiting for it
        await _close(context)
        sys.stdout.flush()
        os._exit(0)

    try:
        async with anyio.create_task_group() as group:

            def on_signal() -> None:
                group.start_soon(leave)

            group.start_soon(_on_signal, on_signal)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()  # stdin's end
    finally:
        await _close(context)


async def serve_http(settings: Settings, host: str, port: int) -> None:
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # schemux takes SIGTERM and SIGINT itself (uvicorn would raise them again
            # once it stopped, ending the process before the programs were cleaned up)
            yield

    context = ToolContext(settings)
    app = _server(context).streamable_http_app(host=host)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=1
    )
    http = Server(config)

    def stop() -> None:
        http.should_exit = True

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_on_signal, stop)
            await http.serve()
            group.cancel_scope.cancel()
    finally:
        await _close(context)


async def _on_signal(act: Callable[[], None]) -> None:
    with anyio.open_signal_receiver(*SHUTDOWN_SIGNALS) as received:
        async for _ in received:
            act()
            return


async def _close(context: ToolContext) -> None:
    """Every exit path ends here: programs ended (in parallel, trees and all), panes and
    the runtime directory removed, whatever cancelled the serving."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
        await context.close()


async def call_once(settings: Settings, tool: str, raw_arguments: str) -> int:
    from mcp import Client, MCPError

    try:
        arguments = json.loads(raw_arguments)
    except json.JSONDecodeError as error:
        print(f"schemux: the arguments are not JSON: {error}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("schemux: the arguments must be a JSON object", file=sys.stderr)
        return 2
    context = ToolContext(settings)
    try:
        async with Client(_server(context)) as client:
            try:
                result = await client.call_tool(tool, arguments)
            except MCPError as error:
                print(f"schemux: {error.message}", file=sys.stderr)
                return 2
    finally:
        await context.close()
    print(
        json.dumps(
            result.model_dump(mode="json", by_alias=True, exclude_none=True),
            indent=2,
            ensure_ascii=False,
        )
    )
    return 1 if result.is_error else 0


if __name__ == "__main__":
    sys.exit(main())
