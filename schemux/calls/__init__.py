"""State of the calls in flight: tasks, progress, result links, MCP sessions, client logs."""
