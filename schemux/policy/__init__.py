"""The policy file: which commands the agent may run, where it may type, what is asked first."""
