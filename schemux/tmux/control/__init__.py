"""tmux control-mode clients: the engine per server, its connection, framing, attacher."""
