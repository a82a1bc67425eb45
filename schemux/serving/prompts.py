"""The prompts: ``prompts/list`` and ``prompts/get`` over what codegen wrote of them
(``generated/prompts.json``, from upstream's prompt list and schemux's overlay of each
prompt: ``codegen.prompts``).

A prompt is listed with its arguments whatever tools are served. ``prompts/get`` renders
its text, each ``{{argument}}`` the argument's value as a JSON literal (a string quoted
and escaped, so a value never breaks out of the call the text shows; a number argument
as the number it must be), an optional argument left out taking its default. A prompt
whose tools are not all served names none of them as if they were: its text says which
are not served and how to serve them (``--tools``, the family of each). A name no
prompt has, an argument the prompt does not take, a required one missing or a number
that is none is refused with ``INVALID_PARAMS``, naming it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from schemux.errors import PREVIEW_CHARACTERS, preview, shorten
from schemux.serving.binding import generated_json
from schemux.serving.selection import family_of

_PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


def serve_prompts(server: Server[Any], tools: Collection[str]) -> None:
    """Serve the prompts on ``server`` (which then declares the ``prompts`` capability),
    rendered for the served ``tools``."""
    prompts = {prompt["name"]: prompt for prompt in generated_json("prompts.json")["prompts"]}
    listed = types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name=prompt["name"],
                description=prompt["description"],
                arguments=[
                    types.PromptArgument(
                        name=argument["name"],
                        description=argument["description"],
                        required=argument["required"],
                    )
                    for argument in prompt["arguments"]
                ],
            )
            for prompt in prompts.values()
        ]
    )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return listed

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        prompt = prompts.get(params.name)
        if prompt is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown prompt: {shorten(params.name, PREVIEW_CHARACTERS)}; this server "
                f"serves {', '.join(prompts)}",
            )
        text = rendered(prompt, params.arguments or {}, tools)
        return types.GetPromptResult(
            description=prompt["description"],
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    server.add_request_handler("prompts/list", types.PaginatedRequestParams, list_prompts)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, get_prompt)


def rendered(prompt: Mapping[str, Any], given: Mapping[str, str], tools: Collection[str]) -> str:
    """The prompt's text for the arguments ``given`` (see the module's docstring); the
    text saying how to serve its tools when ``tools`` lacks one."""
    values = _values(prompt, given)
    missing = [tool for tool in prompt["needs"] if tool not in tools]
    if missing:
        return _how_to_serve(prompt["name"], missing)
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], prompt["text"])


def _values(prompt: Mapping[str, Any], given: Mapping[str, str]) -> dict[str, str]:
    """Each argument's value as the JSON literal the text takes; MCPError naming an
    argument that is unknown, missing, or not the number it must be."""
    arguments = {argument["name"]: argument for argument in prompt["arguments"]}
    unknown = [name for name in given if name not in arguments]
    if unknown:
        raise _invalid(
            f"{prompt['name']} has no argument {preview(unknown[0])} (its arguments: "
            f"{', '.join(arguments)})"
        )
    values = {}
    for name, argument in arguments.items():
        value = given.get(name, argument.get("default"))
        if value is None:
            raise _invalid(f"{prompt['name']}: {name} is required")
        if argument.get("number"):
            if not _is_number(value):
                raise _invalid(f"{prompt['name']}: {name} {preview(value)} is not a number")
            values[name] = value.strip()
        else:
            values[name] = json.dumps(value, ensure_ascii=False)
    return values


def _how_to_serve(name: str, missing: list[str]) -> str:
    tools = ", ".join(missing)
    families = sorted({family_of(tool) or tool for tool in missing})
    return (
        f"The prompt {name} works through {tools}, which this server does not serve as "
        f"it was started. Serve {'them' if len(missing) > 1 else 'it'} by naming "
        f"{', '.join(families)} in --tools (SCHEMUX_TOOLS) with the families you use, or "
        "with --tools all, then ask for the prompt again."
    )


def _is_number(text: str) -> bool:
    """Whether ``text`` is a finite JSON number."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _invalid(message: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, message)
