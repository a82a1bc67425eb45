"""A command in a pane's interactive shell, hooked or wrapped, its output read exactly."""
