"""Live parts: the Claude Code hook, its warm worker, the status line and its catch-up, the Hermes plugin."""
