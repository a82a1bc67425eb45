"""Serving MCP: the server, tool bindings, validation, resources, calls routed to hosts."""
