"""Setting up the plugin: its own Python env, an interpreter for old python3s, settings.json edits."""
