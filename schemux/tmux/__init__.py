"""Talking to one tmux server: commands, formats, references, and its control clients."""
