"""What one running server keeps across its calls: the domain's services, and serving's
own state (the calls in flight, the tasks, the client log, the audit log, the resource
watches)."""

from __future__ import annotations

from schemux.audit.log import AuditLog
from schemux.config import Settings
from schemux.domain.resource_watch import ResourceWatches
from schemux.domain.services import Services
from schemux.hosts import Host
from schemux.serving.approvals import PolicyGate
from schemux.serving.client_log import ClientLog
from schemux.serving.in_flight import CallsInFlight
from schemux.serving.tasks import ToolTasks
from schemux.serving.tools_list import ToolListings


class ServingState:
    """Shared by all requests of one running server, and closed with it: ``services``
    (what the tools share: hosts, cursors, waits, the reaper), ``resource_watches``
    (what resource subscriptions follow; one keeps its host connected), ``audit`` (one
    line per tool call), ``calls`` (the calls in flight), ``tasks`` (tool calls run as
    MCP tasks; none lives longer than the longest wait and a while), ``client_log``
    (the log sent to clients that set a level) and ``listings`` (tools/list's answers)."""

    def __init__(self, settings: Settings, host: Host | None = None) -> None:
        self.settings = settings
        self.resource_watches = ResourceWatches()
        self.services = Services(settings, host, held=self.resource_watches.watching_on)
        # the default host, as the audit log and resource URIs name it
        self.audit = AuditLog(settings.audit, self.services.host_name)
        self.calls = CallsInFlight()
        self.tasks = ToolTasks(self.calls, settings.wait_ceiling)
        self.client_log = ClientLog()
        # what tools/list serves, made once for every server and session of this state
        self.listings = ToolListings()
        # the policy file's decisions (None: no policy, every call goes on as asked)
        self.policy_gate = (
            None
            if settings.policy is None
            else PolicyGate(settings.policy, self.services.fleet, self.services.host_name)
        )

    async def close(self) -> None:
        """Every way schemux ends comes here. Cancel the calls in flight, those run as
        tasks first, and let their own cleanup run (a command interrupted, a program
        ended); end the resource watches; then the services (programs, control clients,
        connections, cursors); last, write out the audit log (the calls that ended as the
        server did are in it)."""
        try:
            await self.client_log.detach()
            await self.tasks.close()
            await self.calls.close()
            await self.resource_watches.close()
            await self.services.close()
        finally:
            await self.audit.close()
