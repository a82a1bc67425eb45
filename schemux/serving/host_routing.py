"""Where one tool call runs when several hosts are configured: the hosts a tool's call may
name (``host_choice``), the call addressed to its host or to every host (``routed``), and
run there with its result stamped with its host (``HostRoute.run``); the argument and
stamp rules themselves are ``serving.host_addressing``'s. With one host the call runs as given.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from schemux.domain.call import Call
from schemux.domain.fleet import Fleet
from schemux.errors import SchemuxError
from schemux.generated.tool_facts import EVERY_HOST_LISTS, SEVERAL_HOSTS_TOOLS
from schemux.serving.binding import ToolBinding
from schemux.serving.host_addressing import HostChoice, addressed, merged, stamped
from schemux.serving.in_flight import CallsInFlight

logger = logging.getLogger("schemux")


def host_choice(fleet: Fleet, tool: str) -> HostChoice | None:
    """The hosts of ``fleet`` a call of ``tool`` may name: None with one (a call names
    none, as the contracts say), and for a tool that chooses its hosts in its own
    arguments (``SEVERAL_HOSTS_TOOLS``: run_command_on_hosts's ``hosts`` and ``group``)."""
    if not fleet.several or tool in SEVERAL_HOSTS_TOOLS:
        return None
    return HostChoice(fleet.names, fleet.default)


@dataclass(frozen=True)
class HostRoute:
    """One call's way: the ``call`` (on its host; on the default one for every host),
    its ``arguments`` as the contract reads them, whether it runs on ``every_host``, and
    whether its results are ``stamping`` (several hosts configured)."""

    call: Call
    arguments: dict[str, Any]
    every_host: bool = False
    stamping: bool = False

    async def run(
        self, binding: ToolBinding, calls: CallsInFlight, unreached: list[str]
    ) -> dict[str, Any]:
        """``binding``'s result on this route, run among ``calls`` (those in flight),
        stamped; every host's, merged, says each host that gave none in ``unreached``."""
        if self.every_host:
            return await calls.run(on_every_host(binding, self.call, self.arguments, unreached))
        async with self.call.scope.in_use():
            result = await calls.run(binding.call(self.call, self.arguments))
        return self.stamped(result)

    def stamped(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` (or an error envelope) with its references naming this route's host."""
        return stamped(result, self.call.host_name) if self.stamping else result


def routed(binding: ToolBinding, call: Call, arguments: dict[str, Any]) -> HostRoute:
    """The route of ``call`` of ``binding`` with ``arguments`` (as the wire gave them),
    its host noted in the call's audit record. SchemuxError (invalid arguments, naming
    the field) when they name no configured host or several
    (``serving.host_addressing.addressed``)."""
    choice = host_choice(call.fleet, binding.name)
    if choice is None:
        return HostRoute(call, arguments)
    every = binding.name in EVERY_HOST_LISTS
    address = addressed(arguments, choice, call.fleet.program_host, every)
    if address.host is None:
        if call.notes is not None:
            call.notes.note_hosts(choice.names)
        return HostRoute(call, address.arguments, every_host=True, stamping=True)
    if call.notes is not None:
        call.notes.note_hosts([address.host])
    return HostRoute(call.on(address.host), address.arguments, stamping=True)


async def on_every_host(
    binding: ToolBinding, call: Call, arguments: dict[str, Any], unreached: list[str]
) -> dict[str, Any]:
    """``binding``'s call on every host at once, the results merged (``host_addressing.
    merged``); a host that fails is left out and said in ``unreached``, one line each
    (all failing: the first host's error)."""

    async def on(name: str) -> dict[str, Any]:
        there = call.on(name)
        async with there.scope.in_use():
            return stamped(await binding.call(there, arguments), name)

    names = call.fleet.names
    outcomes = await asyncio.gather(*(on(name) for name in names), return_exceptions=True)
    results: list[dict[str, Any]] = []
    for name, outcome in zip(names, outcomes, strict=True):
        if isinstance(outcome, dict):
            results.append(outcome)
        elif isinstance(outcome, SchemuxError):
            unreached.append(f"host {name} is not listed: {outcome.render()}")
        elif isinstance(outcome, Exception):
            logger.error("%s on host %s failed", binding.name, name, exc_info=outcome)
            unreached.append(f"host {name} is not listed: {type(outcome).__name__}: {outcome}")
        else:
            raise outcome
    if not results:  # the default host's error, as a call naming no host would have had
        failure = outcomes[names.index(call.fleet.default)]
        assert isinstance(failure, BaseException)
        raise failure
    return merged(binding.name, results)
