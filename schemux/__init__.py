"""schemux: a schema-first, code-generated MCP server for tmux."""

__version__ = "0.1.0"
