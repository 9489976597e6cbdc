"""xshare: the exploration share of a coding agent's prompt-token bill."""

__version__ = "0.1.0"

# Bumped whenever a change to the method can move a number: cached rows and saved
# live states made under another method version are recomputed, never mixed.
METHOD_VERSION = 8
