"""The name Hermes loads xshare's plugin by: the entry point `hermes_agent.plugins` -> `xshare.hermes_plugin`
(pyproject.toml), already recorded in users' Hermes installs. The plugin is xshare/live/hermes_plugin.py;
importing this does nothing more than importing that (Hermes then calls `register(ctx)`)."""

from xshare.live.hermes_plugin import register

__all__ = ["register"]
