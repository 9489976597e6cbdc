"""Hermes-Agent: its state.db sessions, read-only."""
