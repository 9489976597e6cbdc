"""The name Hermes loads xshare's plugin by: the entry point `hermes_agent.plugins` -> `xshare.hermes_plugin`
(pyproject.toml), already recorded in users' Hermes installs. Hermes calls `register(ctx)`; the plugin is
xshare/live/hermes_plugin.py, given the CLI to run for `hermes xshare ARGS` from here, the entry points'
layer (the plugin's own layer sits below the CLI)."""

from xshare.live import hermes_plugin as plugin


def register(ctx) -> None:
    plugin.register(ctx, run_cli)


def run_cli(argv: list[str]) -> int:
    """`xshare ARGS`, as `hermes xshare ARGS` runs it; the CLI is imported only then."""
    from xshare.cli import main

    return main(argv)
