"""Pictures of panes: their cells read from tmux, drawn as PNG or SVG (pure)."""
