"""The MCP server: tools/list serves the tool documents, tools/call runs the pipeline.

Every call: validate the arguments against the tool's inputSchema (before any tmux
work); run the handler; validate its result against the outputSchema; answer with
``structuredContent`` and the same JSON as text. A handler whose contract describes its
failures as results (an error envelope) raises ``FailedResult`` with one: it is checked
and sent the same way, with ``isError`` set. Whatever goes wrong becomes a tool
result with ``isError``; the server itself keeps serving. A call whose request carries a
progressToken gets progress notifications while its handler waits (``progress``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from jsonschema.exceptions import ValidationError, best_match
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from schemux import __version__, progress
from schemux.binding import ToolBinding
from schemux.context import ToolContext
from schemux.errors import FailedResult, ToolError

logger = logging.getLogger("schemux")


def describe_violation(error: ValidationError, root: str = "(arguments)") -> str:
    """``timeout: 'x' is not of type 'number' (rule: type)``, naming the field by its path.

    Where no ``oneOf``/``anyOf`` branch matched and none fits better than the others,
    each branch's own closest failure is named ("form 2: 'cursor' is a required
    property"), so the caller learns which field to change for the form it meant.
    """
    where = _path(error) or root
    if error.validator in ("oneOf", "anyOf") and error.context:
        by_branch: dict[Any, list[ValidationError]] = {}
        for failure in error.context:
            by_branch.setdefault(failure.relative_schema_path[0], []).append(failure)
        forms = [
            f"form {index + 1}: {describe_violation(closest)}"
            for index, closest in enumerate(best_match(f) for f in by_branch.values())
            if closest is not None
        ]
        return f"{where}: matches none of the allowed forms (rule: {error.validator}); " + (
            "; ".join(forms)
        )
    return f"{where}: {error.message} (rule: {error.validator})"


def _path(error: ValidationError) -> str:
    return "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
    ).lstrip(".")


def tool_result(payload: Mapping[str, Any], *, is_error: bool = False) -> types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=dict(payload),
        is_error=is_error,
    )


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


async def call_bound_tool(
    binding: ToolBinding, context: ToolContext, arguments: dict[str, Any]
) -> types.CallToolResult:
    """The whole pipeline for one call; never raises except on cancellation."""
    violation = best_match(binding.input_validator.iter_errors(arguments))
    if violation is not None:
        return error_result(
            f"Invalid arguments for {binding.name}: {describe_violation(violation)}"
        )
    failed = False
    try:
        result = await binding.call(context, arguments)
    except FailedResult as failure:
        # the contract's own error object: checked and sent like a result, marked failed
        failed = True
        result = failure.result.model_dump(mode="json", by_alias=True, exclude_unset=True)
    except ToolError as error:
        return error_result(error.render())
    except Exception as error:
        logger.exception("%s failed unexpectedly", binding.name)
        return error_result(
            f"{binding.name} failed unexpectedly: {type(error).__name__}: {error} "
            "(details are in the server's log)"
        )
    broken = best_match(binding.output_validator.iter_errors(result))
    if broken is not None:
        violation = describe_violation(broken, root="(result)")
        logger.error(
            "server bug: %s returned a result that breaks its outputSchema: %s; result: %r",
            binding.name,
            violation,
            result,
        )
        return error_result(
            f"{binding.name} produced a result that breaks its own contract ({violation}); "
            "this is a schemux bug, and it was logged"
        )
    return tool_result(result, is_error=failed)


def build_server(context: ToolContext, bindings: Mapping[str, ToolBinding]) -> Server[Any]:
    tools = [types.Tool.model_validate(dict(binding.document)) for binding in bindings.values()]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        binding = bindings.get(params.name)
        if binding is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        async with progress.reporting(ctx.session.report_progress):
            return await call_bound_tool(binding, context, dict(params.arguments or {}))

    return Server(
        "schemux",
        version=__version__,
        instructions="Run commands and programs in tmux panes and read what they print.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
