"""This machine: /proc, tethered children, private files, and this process's identity."""
