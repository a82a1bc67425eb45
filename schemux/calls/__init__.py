"""What one tool call carries: its progress, its result links, the MCP session it came from."""
