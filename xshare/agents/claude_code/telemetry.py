"""Claude Code's telemetry settings, as the hook needs them: Claude Code passes its hooks none of the OTEL_*
variables it exports its own metrics with (seen with 2.1.332: the hook's environment keeps only
CLAUDE_CODE_ENABLE_TELEMETRY), so the hook reads them where a team sets them, the `env` of its settings files.

Read at a turn's end only, when the hook may export (live/hook.py); stdlib only, a few small files.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# where an administrator's settings live (they win over everyone's)
MANAGED = {"darwin": "/Library/Application Support/ClaudeCode/managed-settings.json",
           "win32": "C:\\Program Files\\ClaudeCode\\managed-settings.json"}
MANAGED_LINUX = "/etc/claude-code/managed-settings.json"
LARGEST = 1 << 20  # bytes of a settings file: anything larger is no settings file


def settings_files(cwd: str | None) -> list[Path]:
    """Claude Code's settings files, the weakest first: the user's, the project's, the project's local,
    the managed."""
    config = os.environ.get("CLAUDE_CONFIG_DIR", "").split(",")[0].strip()
    user = Path(config).expanduser() if config else Path.home() / ".claude"
    files = [user / "settings.json"]
    if cwd:
        files += [Path(cwd) / ".claude" / "settings.json", Path(cwd) / ".claude" / "settings.local.json"]
    return [*files, Path(MANAGED.get(sys.platform, MANAGED_LINUX))]


def telemetry_env(cwd: str | None) -> dict[str, str]:
    """The OTEL_* and CLAUDE_CODE_ENABLE_TELEMETRY entries of the settings files' `env`, a stronger file's
    winning; a file missing, unreadable or not JSON is passed over."""
    found: dict[str, str] = {}
    for path in settings_files(cwd):
        try:
            with open(path, "rb") as handle:
                settings = json.loads(handle.read(LARGEST + 1)[:LARGEST])
        except (OSError, ValueError):
            continue
        env = settings.get("env") if isinstance(settings, dict) else None
        for name, value in (env.items() if isinstance(env, dict) else ()):
            if isinstance(name, str) and (name.startswith("OTEL_") or name == "CLAUDE_CODE_ENABLE_TELEMETRY"):
                found[name] = str(value)
    return found
