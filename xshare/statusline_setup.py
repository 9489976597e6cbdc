"""`xshare statusline install | remove | status`: edit Claude Code's settings the way a careful user would.

A plugin cannot declare a status line, so this writes `statusLine` into the user's settings.json: it
refuses to replace someone else's without --force, backs the file up first, writes atomically with
absolute paths (a shim or `~` would slow or break every refresh), and remembers what it replaced so
`remove` can put it back.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

from xshare import plugin_env
from xshare.paths import state_dir
from xshare.store import atomic_write, read_json

MARKER = "statusline.py"  # a command that runs xshare's status line script is xshare's
# Claude Code re-renders the line on new messages only, so the figures a hook writes after a turn's last
# message would wait for the next turn; a timer picks them up. Measured on 2.1.332 (bench/statusline_refresh.py,
# README): idle Claude Code uses 0.84 s CPU a minute; a 2 s timer adds 1.6 s (0 of 12 turns still behind
# 3 s after the turn), 5 s adds 0.56 s (4 of 12 behind at 3 s, none at 6 s). 5 s: a third of the cost.
REFRESH_SECONDS = 5


def settings_path() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").split(",")[0].strip()
    base = Path(configured).expanduser() if configured else Path.home() / ".claude"
    return base / "settings.json"


def _record_path() -> Path:
    return state_dir() / "statusline-install.json"


def script_path() -> Path:
    """The status line script, preferring a copy that survives plugin updates.

    Inside Claude Code's versioned plugin cache (plugins/cache/<marketplace>/<plugin>/<version>/) the
    path changes on every update; the marketplace clone (plugins/marketplaces/<marketplace>/) does not.
    """
    here = Path(__file__).resolve().with_name("statusline.py")
    parts = here.parts
    if "cache" in parts and "plugins" in parts:
        at = parts.index("cache")
        if at + 4 < len(parts) and parts[at - 1] == "plugins":
            stable = Path(*parts[: at - 1], "plugins", "marketplaces", parts[at + 1], *parts[at + 4 :])
            if stable.is_file():
                return stable
    return here


def command(line_format: str | None = None, line2: str | None = None) -> str:
    def quote(text: str) -> str:
        return '"' + text.replace("\\", "/").replace('"', '\\"') + '"'

    # the plugin's env when it is ready: under ${CLAUDE_PLUGIN_DATA}, it survives plugin updates
    parts = [quote(plugin_env.interpreter()), "-I", "-S", quote(str(script_path()))]
    if line_format:
        parts += ["--format", quote(line_format)]
    if line2:
        parts += ["--line2", quote(line2)]
    return " ".join(parts)


def _describe(entry: object) -> str:
    return str(entry.get("command", entry)) if isinstance(entry, dict) else str(entry)


def is_ours(entry: object) -> bool:
    return isinstance(entry, dict) and MARKER in str(entry.get("command", "")) and "xshare" in str(entry["command"])


def _read_settings(path: Path) -> dict:
    if not path.exists():
        return {}
    data = read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not valid JSON; fix it first, xshare will not overwrite it")
    return data


def _write_settings(path: Path, settings: dict) -> None:
    if path.exists():
        shutil.copy2(path, path.with_name(path.name + ".xshare-backup"))
    atomic_write(path, (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def install(force: bool = False, line_format: str | None = None, line2: str | None = None) -> tuple[int, str]:
    path = settings_path()
    try:
        settings = _read_settings(path)
    except ValueError as error:
        return 1, str(error)
    current = settings.get("statusLine")
    record = read_json(_record_path())
    if current and not is_ours(current) and not force:
        return 1, (f"{path} already has a status line ({_describe(current)}). Re-run with --force to replace it; "
                   "`xshare statusline remove` would put it back.")
    previous = record.get("previous") if isinstance(record, dict) and is_ours(current) else current
    settings["statusLine"] = {"type": "command", "command": command(line_format, line2), "padding": 0,
                              "refreshInterval": REFRESH_SECONDS}
    _write_settings(path, settings)
    atomic_write(_record_path(), json.dumps({"settings": str(path), "previous": previous}).encode())
    kept = " (the previous one is kept for `remove`)" if previous else ""
    return 0, f"installed in {path}{kept}: {settings['statusLine']['command']}"


def remove() -> tuple[int, str]:
    record = read_json(_record_path())
    path = Path(record["settings"]) if isinstance(record, dict) and record.get("settings") else settings_path()
    try:
        settings = _read_settings(path)
    except ValueError as error:
        return 1, str(error)
    if not is_ours(settings.get("statusLine")):
        return 0, f"xshare's status line is not installed in {path}; nothing changed"
    previous = record.get("previous") if isinstance(record, dict) else None
    if previous:
        settings["statusLine"] = previous
    else:
        settings.pop("statusLine", None)
    _write_settings(path, settings)
    _record_path().unlink(missing_ok=True)
    return 0, f"removed from {path}" + ("; the previous status line is back" if previous else "")


def status() -> tuple[int, str]:
    path = settings_path()
    try:
        current = _read_settings(path).get("statusLine")
    except ValueError as error:
        return 1, str(error)
    if not is_ours(current):
        other = f" (another status line is set: {_describe(current)})" if current else ""
        return 0, f"not installed in {path}{other}"
    words = shlex.split(current["command"])
    missing = [word for word in words[:1] + [w for w in words if w.endswith(MARKER)] if not Path(word).exists()]
    health = f" — but {', '.join(missing)} is missing: run install again" if missing else ""
    return 0, f"installed in {path}: {current['command']}\n{_interpreter_note(words[0])}{health}"


def _interpreter_note(python: str) -> str:
    """Which Python the status line runs with; it needs only the standard library, so any will do."""
    env = Path(python).parent.parent
    if (env / plugin_env.STAMP).is_file():
        return f"interpreter: {python} (xshare's plugin environment in {env.parent})"
    state = "exists" if Path(python).exists() else "does not exist"
    return f"interpreter: {python} ({state}; the status line needs only the standard library)"
