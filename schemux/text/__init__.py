"""Pure text: what a program wrote to its terminal, and a pane's screen as rows."""
