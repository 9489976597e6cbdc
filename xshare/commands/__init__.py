"""The `xshare` commands, one module per family (xshare/cli.py maps the names to them)."""
