"""The MCP server: tools/list serves the tool documents, tools/call runs the pipeline.

Every call: validate the arguments against the tool's inputSchema (before any tmux
work); run the handler; validate its result against the outputSchema; answer with
``structuredContent`` and the same JSON as text. Whatever goes wrong becomes a tool
result with ``isError``; the server itself keeps serving. Errors are rendered here, per
contract family. A ``SchemuxError`` is its text (message and suggestion). The exception
is a tool whose contract describes failures as results (the ``tmux_*`` envelope,
``ToolBinding.error_envelope``) that failed in the call's tmux work, carrying the
call's effects (``schemux.domain.failures``). Its error is the envelope, checked against
the outputSchema and sent like a result, with ``isError`` set. A call whose request carries a
progressToken gets progress notifications while its handler waits (``progress``). Every
call, refused or not, is a line in the audit log (``audit``). A result whose text was cut
links to the resource holding all of it (``calls.result_links``); the resources themselves
are ``resources``'s. Each call's handler is given the call (``schemux.domain.call.Call``):
its host, its progress, its links, its audit record, its MCP session and what it may do
on the tmux servers it uses. A call of a tool that may run as a task, from a client that
declares the tasks extension, is answered at once with a task that runs the same
pipeline (``tasks``). The prompts are ``prompts``'s.
With several hosts, a call runs on the host its arguments name (``serving.host_routing``).
Under a policy file, a call is refused or put to the person first (``serving.approvals``),
and with ``--mask-secrets`` its result's secrets are masked (``text.secrets``).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pydantic_core
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError

from schemux import __version__
from schemux.audit.log import CallRecord
from schemux.calls import progress
from schemux.calls.progress import Progress
from schemux.calls.result_media import Media
from schemux.calls.sessions import session_of
from schemux.domain.call import Call
from schemux.errors import (
    INTERNAL_ERROR,
    INVALID_ARGUMENTS,
    POLICY_DENIED,
    PREVIEW_CHARACTERS,
    UNKNOWN_TOOL,
    ApprovalNeeded,
    SchemuxError,
    bounded_message,
    shorten,
)
from schemux.generated.tool_facts import TASK_TOOLS
from schemux.serving.arguments import text_violation, unknown_arguments
from schemux.serving.binding import ToolBinding
from schemux.serving.host_routing import host_choice, routed
from schemux.serving.instructions import instructions
from schemux.serving.prompts import serve_prompts
from schemux.serving.read_tools import ServedReadTools
from schemux.serving.resources import serve_resources
from schemux.serving.state import ServingState
from schemux.serving.tools_list import ListingAnswers

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

    from schemux.serving.tasks import CallHandler, TaskInput

logger = logging.getLogger("schemux")

# What to give instead of a value a bound refuses, by the bound's keyword
_WANTED = MappingProxyType(
    {
        "minimum": "give {} or more",
        "exclusiveMinimum": "give more than {}",
        "maximum": "give {} or less",
        "exclusiveMaximum": "give less than {}",
        "minItems": "give at least {} item{}",
        "maxItems": "give at most {} item{}",
    }
)


# How each kind of media a handler attaches (``calls.result_media``) is sent, by the
# first part of its MIME type: a new kind is a line here.
_MEDIA_BLOCKS: Mapping[str, Callable[[str, str], types.ContentBlock]] = MappingProxyType(
    {
        "image": lambda mime, data: types.ImageContent(type="image", data=data, mime_type=mime),
        "audio": lambda mime, data: types.AudioContent(type="audio", data=data, mime_type=mime),
    }
)


def media_block(media: Media) -> types.ContentBlock:
    """``media`` as the MCP content block its MIME type calls for, its bytes in base64."""
    kind = media.mime_type.partition("/")[0]
    return _MEDIA_BLOCKS[kind](media.mime_type, base64.b64encode(media.data).decode("ascii"))


def describe_violation(error: ValidationError, root: str = "(arguments)") -> str:
    """``timeout: 'x' is not of type 'number' (rule: type)``, naming the field by its path.

    A value out of a bound says what to give (``timeout: 0 is less than or equal to the
    minimum of 0; give more than 0 (rule: exclusiveMinimum)``); arguments a ``not``
    refuses, that schema's ``description`` (jsonschema's own message quotes both whole).
    Arguments that match none of a ``oneOf``/``anyOf``'s forms get each form's own
    reason, so the caller learns what a form forbids (``'track' was unexpected``)."""
    from jsonschema.exceptions import best_match

    path = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
    ).lstrip(".")
    where = path or root
    if error.validator in ("oneOf", "anyOf") and error.context:
        reasons: dict[int, list[ValidationError]] = {}
        for reason in error.context:
            reasons.setdefault(int(reason.relative_schema_path[0]), []).append(reason)
        described = {
            form: describe_violation(best_match(found), root) for form, found in reasons.items()
        }
        forms_given = error.validator_value
        count = len(forms_given) if isinstance(forms_given, list) else len(reasons)
        if count == 1:
            return described[0]
        forms = "; ".join(f"form {form + 1}: {text}" for form, text in sorted(described.items()))
        return f"{where}: matches none of the {count} forms (rule: {error.validator}): {forms}"
    refused = error.validator_value if error.validator == "not" else None
    if isinstance(refused, Mapping) and isinstance(refused.get("description"), str):
        return f"{where}: {refused['description']} (rule: not)"
    message = bounded_message(error.message, error.instance)
    wanted = _WANTED.get(str(error.validator))
    if wanted is not None:
        bound = error.validator_value
        message += "; " + wanted.format(json.dumps(bound), "" if bound == 1 else "s")
    return f"{where}: {message} (rule: {error.validator})"


def json_text(value: Any) -> str:
    """``value`` as compact JSON text: pydantic-core writes it at about a third of the
    json module's CPU (0.05 ms against 0.12 for a page of program output, made on every
    read_program) and without the spaces after separators a model would read. A lone
    surrogate, which is not UTF-8, goes to the json module, which escapes it."""
    try:
        return pydantic_core.to_json(value).decode("utf-8")
    except pydantic_core.PydanticSerializationError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tool_result(
    payload: Mapping[str, Any], *, is_error: bool = False, wrapped: bool = False
) -> types.CallToolResult:
    """``payload`` as structuredContent and as text; a ``wrapped`` value (FastMCP's
    ``{"result": value}``) is its value in the text, a string as itself, as FastMCP
    sends it."""
    value = payload["result"] if wrapped and "result" in payload else payload
    text = value if isinstance(value, str) else json_text(value)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=dict(payload),
        is_error=is_error,
    )


def masked_result(result: types.CallToolResult) -> types.CallToolResult:
    """``result`` with the secrets in its text and structured content masked
    (``text.secrets``), and a last line saying how many there were."""
    from schemux.text.secrets import mask_text, mask_value

    count = 0
    content: list[Any] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            masked = mask_text(item.text)
            count += masked.count
            item = item.model_copy(update={"text": masked.text})
        content.append(item)
    structured = result.structured_content
    if structured is not None:
        structured, _ = mask_value(structured)  # the same secrets as its text's
    if count:
        content.append(
            types.TextContent(type="text", text=f"schemux masked {count} secret(s) in this result")
        )
    return result.model_copy(update={"content": content, "structured_content": structured})


def error_result(message: str, code: str, notes: CallRecord | None) -> types.CallToolResult:
    """The failure as text with ``isError``; the call's audit record ``notes`` takes its
    code."""
    if notes is not None:
        notes.note_outcome(code)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


async def call_bound_tool(
    binding: ToolBinding,
    state: ServingState,
    arguments: dict[str, Any],
    call: Call | None = None,
) -> types.CallToolResult:
    """The whole pipeline for one ``call`` (made on the default host; routed here; when
    None, a call of its own: no MCP session, no audit record); never raises except on
    cancellation."""
    # jsonschema is imported at the first call: start-up and tools/list need none of it
    from jsonschema.exceptions import best_match

    if call is None:
        call = Call(state.services, state.services.scope)
    notes = call.notes
    arguments = binding.wire_arguments(arguments, state.settings.schemas)
    try:
        route = routed(binding, call, arguments)
    except SchemuxError as error:
        return error_result(
            f"Invalid arguments for {binding.name}: {error.message}", INVALID_ARGUMENTS, notes
        )
    arguments = route.arguments
    unknown = unknown_arguments(binding.name, arguments, binding.declared_arguments)
    if unknown is not None:
        return error_result(
            f"Invalid arguments for {binding.name}: {unknown}", INVALID_ARGUMENTS, notes
        )
    violation = best_match(binding.input_validator.iter_errors(arguments))
    if violation is not None:
        return error_result(
            f"Invalid arguments for {binding.name}: {describe_violation(violation)}",
            INVALID_ARGUMENTS,
            notes,
        )
    unsendable = text_violation(binding.name, arguments, binding.declared_arguments)
    if unsendable is not None:
        return error_result(
            f"Invalid arguments for {binding.name}: {unsendable}", INVALID_ARGUMENTS, notes
        )
    failed = False
    unreached: list[str] = []  # of every host's answer: the hosts that gave none
    try:
        result = await route.run(binding, state.calls, unreached)
    except ApprovalNeeded:  # the person is asked by the caller (serving.approvals)
        raise
    except SchemuxError as error:
        if error.effects is None or not binding.error_envelope:
            return error_result(error.render(), error.code, notes)
        # the contract's own error object: checked and sent like a result, marked failed
        if notes is not None:
            notes.note_outcome(error.code)
        failed = True
        result = route.stamped(error.envelope())
    except Exception as error:
        logger.exception("%s failed unexpectedly", binding.name)
        return error_result(
            f"{binding.name} failed unexpectedly: {type(error).__name__}: {error} "
            "(details are in the server's log)",
            INTERNAL_ERROR,
            notes,
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
            "this is a schemux bug, and it was logged",
            INTERNAL_ERROR,
            notes,
        )
    answer = tool_result(result, is_error=failed, wrapped=binding.wraps_result)
    answer.content += [types.TextContent(type="text", text=text) for text in unreached]
    return answer


def build_server(state: ServingState, bindings: Mapping[str, ToolBinding]) -> Server[Any]:
    """A server of ``bindings`` (the selected tools) over ``state``: tools/list serves
    each one as the settings' schema mode says, with the advice that names only served
    tools (and, with several hosts, the ``host`` each call may name)."""
    mode = state.settings.schemas
    fleet = state.services.fleet
    listing = state.listings.listing(
        bindings,
        mode,
        lambda: (
            binding.served_document(mode, bindings, host_choice(fleet, binding.name))
            for binding in bindings.values()
        ),
    )

    read_tools = ServedReadTools(state, bindings, call_bound_tool)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        # what the SDK answers a tools/list ListingAnswers leaves to it with
        return listing.result()

    def bound(name: str, notes: CallRecord) -> ToolBinding:
        binding = bindings.get(name)
        if binding is None:
            notes.note_outcome(UNKNOWN_TOOL)
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool: {shorten(name, PREVIEW_CHARACTERS)}; this server serves "
                f"{', '.join(bindings)}",
            )
        return binding

    async def answered(
        binding: ToolBinding, call: Call, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        """The call's result: the pictures it shows first, then its text, then a link
        to each resource that holds text it cut; its secrets masked when the settings
        say so."""
        try:
            result = await call_bound_tool(binding, state, arguments, call)
        finally:
            call.permits.end()  # what it left running (a program) is its no more
        if state.settings.mask_secrets:
            result = masked_result(result)
        if not result.is_error:
            result.content[:0] = [media_block(media) for media in call.media]
            result.content += [
                types.ResourceLink(
                    type="resource_link",
                    uri=link.uri,
                    name=link.name,
                    description=link.description,
                    mime_type="text/plain",
                )
                for link in call.links
            ]
        return result

    def call_of(
        ctx: ServerRequestContext[Any], notes: CallRecord, reporting: Progress | None = None
    ) -> Call:
        """The call a request makes, on the default host until it is routed; without
        ``reporting``, it tells the caller no progress."""
        services = state.services
        return Call(
            services,
            services.scope,
            session=session_of(ctx),
            notes=notes,
            progress=Progress() if reporting is None else reporting,
            tools=read_tools,
        )

    async def governed(
        ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
        binding: ToolBinding,
        call: Call,
        *,
        in_task: TaskInput | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The call under the policy (``serving.approvals``): refused, or put to the
        person (through its task when ``in_task``), before any tmux work; a pane the
        person watches is asked about once the handler has found it, before any key
        (``domain.write_policy``)."""
        gate = state.policy_gate
        notes = call.notes
        arguments = dict(params.arguments or {})
        if gate is None or notes is None:
            return await answered(binding, call, arguments)
        decided = gate.before_work(binding.name, arguments, params, notes)
        if decided.refusal is not None:
            return error_result(decided.refusal, POLICY_DENIED, notes)
        question = decided.ask
        approved = decided.approved
        while True:
            if question is not None:
                asked = await gate.ask(
                    ctx, binding.name, arguments, question, notes, in_task=in_task
                )
                if isinstance(asked, types.InputRequiredResult):
                    return asked
                if asked is None:
                    return error_result(
                        gate.cannot_ask(binding.name, question), POLICY_DENIED, notes
                    )
                if asked != "accept":
                    return error_result(gate.declined(binding.name, asked), POLICY_DENIED, notes)
                approved = True
            try:
                return await answered(
                    binding, dataclasses.replace(call, approved=approved), arguments
                )
            except ApprovalNeeded as needed:
                notes.note_policy("ask", reason="watched")
                question = gate.question(binding.name, arguments, needed.question, None)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, notes: CallRecord
    ) -> types.CallToolResult | types.InputRequiredResult:
        binding = bound(params.name, notes)
        async with progress.reporting(ctx.session.report_progress) as reporting:
            call = call_of(ctx, notes, reporting)
            return await governed(ctx, params, binding, call)

    def in_task(ask: TaskInput) -> CallHandler:
        """The call run in a task whose client ``ask`` puts the policy's questions to."""

        async def call_tool_in_task(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, notes: CallRecord
        ) -> types.CallToolResult | types.InputRequiredResult:
            # no progress: the request was answered with the task (the extension sends
            # none); no input_required result either: the task asks (input_required)
            binding = bound(params.name, notes)
            return await governed(ctx, params, binding, call_of(ctx, notes), in_task=ask)

        return state.audit.recording(call_tool_in_task)

    server: Server[Any] = Server(
        "schemux",
        version=__version__,
        instructions=instructions(bindings),
        on_list_tools=list_tools,
    )
    # not on_set_logging_level=: the SDK warns of its deprecation (2026-07-28) on each start
    server.add_request_handler(
        "logging/setLevel", types.SetLevelRequestParams, state.client_log.set_level
    )
    state.tasks.serve(
        server,
        (name for name in TASK_TOOLS if name in bindings),
        blocking=state.audit.recording(call_tool),
        in_task=in_task,
    )
    if state.policy_gate is not None:  # a retry's requestState sealed, bound, expiring
        server.middleware.append(
            RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience="schemux")
        )
    serve_resources(server, state, bindings)
    serve_prompts(server, bindings)
    server.middleware.append(ListingAnswers(server, listing))  # innermost: the SDK's last
    return server
