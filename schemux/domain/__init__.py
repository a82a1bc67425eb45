"""What the tools do: captures, snapshots, waits, channels, fan-out, the call's context."""
