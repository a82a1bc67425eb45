"""call_read_tools_batch: several read-only tools called in turn, each through the whole
pipeline of a call of its own (libtmux-mcp's call_read_tools_batch; which tools, and how,
``schemux.serving.read_tools``): each operation's result, the counts, and where a failure
stopped the batch (on_error ``stop``)."""

from __future__ import annotations

import time

from schemux.domain.call import Call
from schemux.errors import SchemuxError
from schemux.generated.models.call_read_tools_batch import (
    CallReadToolsBatchInput,
    CallReadToolsBatchOutput,
    Result,
)


async def handle(call: Call, request: CallReadToolsBatchInput) -> CallReadToolsBatchOutput:
    if call.tools is None:
        raise SchemuxError("no tool can be called from here", code="refused")
    results: list[Result] = []
    stopped_at = None
    for index, operation in enumerate(request.operations):
        started = time.monotonic()
        answer = await call.tools.call(call, operation.tool, operation.arguments or {})
        results.append(
            Result(
                index=index,
                tool=operation.tool,
                success=not answer.failed,
                error=answer.text if answer.failed else None,
                content=answer.content,
                structured_content=answer.structured,
                elapsed_seconds=round(time.monotonic() - started, 3),
            )
        )
        if answer.failed and request.on_error == "stop" and index < len(request.operations) - 1:
            stopped_at = index
            break
    failed = sum(not result.success for result in results)
    return CallReadToolsBatchOutput(
        results=results, succeeded=len(results) - failed, failed=failed, stopped_at=stopped_at
    )
