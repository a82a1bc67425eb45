"""The policy file's decisions on a tool call, at the serving layer: the commands a call
carries matched against the rules before any tmux work (``policy.rules``), and a call the
policy asks about put to the person by MCP form-mode elicitation, nothing sent to tmux
before their answer.

A client of MCP 2026-07-28 that declares elicitation is answered ``input_required``: the
question embedded, and a ``requestState`` that binds the answer to this tool and these
exact arguments (sealed and expiring, by the SDK's ``RequestStateBoundary``); its retry
carries the answer. A call run as a task (``serving.tasks``) asks through its task: the
task says ``input_required`` with the same question until ``tasks/update`` answers it.
A handshake-era client is sent ``elicitation/create`` and the call waits for the answer.
A client that cannot elicit is refused, told how to allow the command instead. Every
decision goes on the call's audit record (``note_policy``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from schemux.errors import PolicyDenied
from schemux.policy.rules import Policy, Verdict, command_texts

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from schemux.audit.log import CallRecord
    from schemux.domain.fleet import Fleet
    from schemux.serving.tasks import TaskInput

# the key of the one input request an approval sends
APPROVAL_KEY = "schemux_approval"
_STATE_KIND = "schemux-approval/1"
Answer = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Approval:
    """What a call may do after the policy's rules: ``refusal`` (a message; the call is
    refused), ``ask`` (the question to put to the person first) or neither (it goes on;
    ``approved`` when the person already said yes to it or a rule allows it: a watched
    pane is then not asked about; the write scope holds all the same)."""

    refusal: str | None = None
    ask: str | None = None
    approved: bool = False  # by the person, or by a rule that allows it


class PolicyGate:
    """The policy of one running server, applied to its calls (owned by its
    ``ServingState``; stateless but for the policy)."""

    def __init__(self, policy: Policy, fleet: Fleet, default_host: str) -> None:
        self.policy = policy
        self.fleet = fleet
        self.default_host = default_host

    def before_work(
        self,
        tool: str,
        arguments: dict[str, Any],
        params: types.CallToolRequestParams,
        notes: CallRecord,
    ) -> Approval:
        """The rules' say on a call, and the person's answer when ``params`` is a retry
        carrying one for these arguments; noted on the call's record."""
        answer = self.answer_in(tool, arguments, params)
        if answer is not None:
            notes.note_policy("ask", answer=answer)
            if answer != "accept":
                return Approval(refusal=self.declined(tool, answer))
            return Approval(approved=True)
        verdict = self.verdict(tool, arguments)
        if verdict is None:
            return Approval()
        notes.note_policy(verdict.action, rule=verdict.rule.line)
        if verdict.action == "deny":
            return Approval(refusal=self.denied(tool, verdict))
        if verdict.action == "ask":
            return Approval(ask=self.question(tool, arguments, verdict.command, verdict))
        return Approval(approved=True)  # an allow rule: a watched pane is not asked about

    def verdict(self, tool: str, arguments: dict[str, Any]) -> Verdict | None:
        texts = command_texts(tool, arguments)
        if not texts:
            return None
        verdicts = [self.policy.verdict(tool, host, texts) for host in self.hosts(arguments)]
        # of several hosts, the strictest: deny, then ask, then allow
        found = [verdict for verdict in verdicts if verdict is not None]
        for action in ("deny", "ask", "allow"):
            for verdict in found:
                if verdict.action == action:
                    return verdict
        return None

    def hosts(self, arguments: dict[str, Any]) -> list[str]:
        """The hosts a call runs on, as its arguments name them (the default host when
        they name none; one the fleet does not know, by its name, as routing refuses it)."""
        named = arguments.get("hosts")
        group = arguments.get("group")
        host = arguments.get("host")
        try:
            if isinstance(named, list) or isinstance(group, str):
                names = named if isinstance(named, list) else None
                return self.fleet.select(names, group if isinstance(group, str) else None)
        except Exception:  # routing refuses it with its own message, later
            return [str(name) for name in named] if isinstance(named, list) else []
        return [host] if isinstance(host, str) else [self.default_host]

    def answer_in(
        self, tool: str, arguments: dict[str, Any], params: types.CallToolRequestParams
    ) -> Answer | None:
        """The person's answer a 2026-07-28 retry carries, when its state was minted for
        this tool and these arguments (anything else is no answer: asked again)."""
        responses = params.input_responses or {}
        response = responses.get(APPROVAL_KEY)
        if not isinstance(response, types.ElicitResult) or params.request_state is None:
            return None
        if params.request_state != self.state(tool, arguments):
            return None
        return _answer(response)

    def state(self, tool: str, arguments: dict[str, Any]) -> str:
        """What a retry must echo: this tool and the digest of these exact arguments."""
        canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=True, default=repr)
        digest = hashlib.sha256(f"{tool}\0{canonical}".encode()).hexdigest()
        return json.dumps({"kind": _STATE_KIND, "tool": tool, "arguments": digest})

    async def ask(
        self,
        ctx: ServerRequestContext[Any],
        tool: str,
        arguments: dict[str, Any],
        question: str,
        notes: CallRecord,
        *,
        in_task: TaskInput | None = None,
    ) -> types.InputRequiredResult | Answer | None:
        """Put ``question`` to the person: through the call's task when it runs as one
        (``in_task``: input_required until ``tasks/update`` answers), as an
        ``input_required`` result for a 2026-07-28 client, else by ``elicitation/create``;
        their answer (None when the client cannot be asked)."""
        capabilities = ctx.session.client_capabilities
        if in_task is not None:  # the request's own declaration: the task outlives it
            capabilities = _declared(ctx)
        elicitation = None if capabilities is None else capabilities.elicitation
        if elicitation is None or (elicitation.form is None and elicitation.url is not None):
            notes.note_policy("ask", answer="not asked")
            return None
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=question, requested_schema=_schema())
        )
        if in_task is not None:
            wire = request.model_dump(by_alias=True, mode="json", exclude_none=True)
            responses = await in_task({APPROVAL_KEY: wire})
            try:
                answer = _answer(types.ElicitResult.model_validate(responses[APPROVAL_KEY]))
            except ValidationError:  # an answer schemux cannot read approves nothing
                answer = "cancel"
            notes.note_policy("ask", answer=answer)
            return answer
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return types.InputRequiredResult(
                input_requests={APPROVAL_KEY: request},
                request_state=self.state(tool, arguments),
            )
        result = await ctx.session.elicit_form(question, _schema(), ctx.request_id)
        answer = _answer(result)
        notes.note_policy("ask", answer=answer)
        return answer

    def question(
        self, tool: str, arguments: dict[str, Any], command: str, verdict: Verdict | None
    ) -> str:
        """What the person is shown: the tool, where it runs, the exact command, why."""
        where = ", ".join(
            f"{name} {arguments[name]}"
            for name in ("paneId", "pane_id", "session_name", "session_id", "window_id", "host")
            if isinstance(arguments.get(name), str)
        )
        hosts = self.hosts(arguments)
        why = verdict.rule.describe() if verdict is not None else "the policy"
        return (
            f"schemux: the agent asks to call {tool}"
            f"{' in ' + where if where else ''} on {', '.join(hosts)}:\n\n{command}\n\n"
            f"{why} asks you first (policy file {self.policy.path}). Approve it once?"
        )

    def denied(self, tool: str, verdict: Verdict) -> str:
        return PolicyDenied(
            f"{tool} refused by the policy: {verdict.rule.describe()} matched "
            f"{verdict.command!r}; nothing was run",
            suggestion="do it another way, or ask the person to change that rule in "
            + self.policy.path,
        ).render()

    def declined(self, tool: str, answer: str) -> str:
        said = "declined" if answer == "decline" else "dismissed the question"
        return PolicyDenied(
            f"{tool}: the person {said}; nothing was run",
            suggestion="do not retry it unchanged; ask the person what they want instead",
        ).render()

    def cannot_ask(self, tool: str, why: str) -> str:
        return PolicyDenied(
            f"{tool} needs the person's approval ({why}), and this MCP client cannot ask "
            "them (it declares no form elicitation); nothing was run",
            suggestion=(
                "ask the person to run it themselves, or to allow it in the policy file "
                f'{self.policy.path} with an [[rules]] table whose action is "allow" '
                'placed before the rule that asks (or watched = "allow")'
            ),
        ).render()


def _declared(ctx: ServerRequestContext[Any]) -> types.ClientCapabilities | None:
    """The capabilities this request's own ``_meta`` declares (2026-07-28); None when it
    declares none readable."""
    declared = (ctx.meta or {}).get(types.CLIENT_CAPABILITIES_META_KEY)
    try:
        return types.ClientCapabilities.model_validate(declared)
    except ValidationError:
        return None


def _schema() -> dict[str, Any]:
    """What the person is shown, as a form: one yes or no (a new dict each request)."""
    approve = {
        "type": "boolean",
        "title": "Run it",
        "description": "Let the agent do exactly this, once",
        "default": False,
    }
    return {"type": "object", "properties": {"approve": approve}, "required": ["approve"]}


def _answer(result: types.ElicitResult) -> Answer:
    """accept only with the form's ``approve`` true (or no content: a client that shows a
    confirmation only)."""
    if result.action != "accept":
        return result.action
    content = result.content or {}
    return "accept" if content.get("approve", True) is True else "decline"
