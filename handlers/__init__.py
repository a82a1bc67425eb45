"""One module per tool, each with ``async def handle(ctx, request) -> result``.

Handlers are typed against the models in ``schemux.generated.models``; codegen binds a
tool to its handler when ``handlers/<tool>.py`` exists.
"""
