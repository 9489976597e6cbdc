"""Where xshare keeps its own files: one directory the hook, the status line and the CLI all find
without help from the plugin system. Stdlib only and import-light: the status line imports it, and
plugin_python imports it on whatever old python3 started a hook (no `from __future__ import annotations`)."""

import os
import re
import sys
from pathlib import Path


def state_dir() -> Path:
    """$XSHARE_HOME if set, else the platform's per-user state directory."""
    explicit = os.environ.get("XSHARE_HOME")
    if explicit:
        return Path(explicit).expanduser()
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "xshare"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / "xshare"
    return Path(os.environ.get("XDG_STATE_HOME") or home / ".local" / "state") / "xshare"


def hook_log() -> Path:
    """Where the hook (and the plugin env's builder) write what went wrong; nothing else reads it."""
    return state_dir() / "logs" / "hook.log"


def live_dir() -> Path:
    return state_dir() / "live"


def file_name(session_id: str) -> str:
    """A session id as a file name (subagent ids hold a slash)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", session_id)


def line_file(session_id: str) -> Path:
    """The small summary the status line renders (written by the hook after every update)."""
    return live_dir() / f"{file_name(session_id)}.line.json"


def html_file(session_id: str) -> Path:
    """Where a session's HTML summary is written (the status line and /exploration-share point at it)."""
    return state_dir() / "html" / f"{file_name(session_id)}.html"
