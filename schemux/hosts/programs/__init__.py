"""The host side of programs: the gate a program's pane runs, where its files live."""
