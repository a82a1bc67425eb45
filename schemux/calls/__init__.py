"""What one call carries that every layer may see: its progress, result links and MCP session."""
