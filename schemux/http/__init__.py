"""Serving over streamable HTTP: the settings, who may call, connections held to time."""
