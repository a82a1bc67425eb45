"""Finding the pane a call means, typing into it, and holding it for one caller."""
