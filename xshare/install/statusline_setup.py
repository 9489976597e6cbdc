"""`xshare statusline install | remove | status`: edit Claude Code's settings the way a careful user would.

A plugin cannot declare a status line, so this writes `statusLine` into the user's settings.json: it
refuses to replace someone else's without --force, writes absolute paths (a shim or `~` would slow or
break every refresh), and remembers what it replaced so `remove` can put it back. The record is
written before the settings (without it, theirs could not come back); the file itself is handled by
settings_file (symlinks, read-only, mode, owner, first backup) and edited as text by settings_json.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import TypeGuard

from xshare.install import plugin_env, settings_file, settings_json
from xshare.install.settings_file import SettingsError
from xshare.state.paths import home as user_home
from xshare.state.paths import state_dir
from xshare.state.store import atomic_write, loads, read_json

MARKER = "statusline.py"  # a command that runs xshare's status line script is xshare's
# Claude Code re-renders the line on new messages only, so the figures a hook writes after a turn's last
# message would wait for the next turn; a timer picks them up. Measured on 2.1.332 (bench/statusline_refresh.py,
# README): idle Claude Code uses 0.84 s CPU a minute; a 2 s timer adds 1.6 s (0 of 12 turns still behind
# 3 s after the turn), 5 s adds 0.56 s (4 of 12 behind at 3 s, none at 6 s). 5 s: a third of the cost.
REFRESH_SECONDS = 5
RECORD_VERSION = 2  # 1: {"settings", "previous"} only
_ABSENT = object()


def settings_path() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").split(",")[0].strip()
    home = user_home()
    if configured:
        return Path(configured).expanduser() / "settings.json"
    if home is None:
        raise SettingsError("no home folder to find Claude Code's settings in (HOME is unset and this user has "
                            "no passwd entry); set CLAUDE_CONFIG_DIR")
    return home / ".claude" / "settings.json"


def _record_path() -> Path:
    return state_dir() / "statusline-install.json"


def script_path() -> Path:
    """The status line script, preferring a copy that survives plugin updates.

    Inside Claude Code's versioned plugin cache (plugins/cache/<marketplace>/<plugin>/<version>/) the
    path changes on every update; the marketplace clone (plugins/marketplaces/<marketplace>/) does not.
    """
    here = Path(__file__).resolve().parents[1] / "statusline.py"  # the entry point users' settings name
    parts = here.parts
    if "cache" in parts and "plugins" in parts:
        at = parts.index("cache")
        if at + 4 < len(parts) and parts[at - 1] == "plugins":
            stable = Path(*parts[: at - 1], "plugins", "marketplaces", parts[at + 1], *parts[at + 4 :])
            if stable.is_file():
                return stable
    return here


def command(line_format: str | None = None, line2: str | None = None, fields: str | None = None) -> str:
    """The status line's command as settings.json holds it; with `fields`, the fields-only form another
    program's custom-command widget runs (the same fast start)."""

    def quote(text: str) -> str:
        return '"' + text.replace("\\", "/").replace('"', '\\"') + '"'

    # the plugin's env when it is ready: under ${CLAUDE_PLUGIN_DATA}, it survives plugin updates
    parts = [quote(plugin_env.interpreter()), "-I", "-S", quote(str(script_path()))]
    if fields:
        return " ".join([*parts, "--fields", quote(fields)])
    if line_format:
        parts += ["--format", quote(line_format)]
    if line2:
        parts += ["--line2", quote(line2)]
    elif line2 == "":  # the second line switched off
        parts += ["--no-line2"]
    return " ".join(parts)


def _describe(entry: object) -> str:
    return str(entry.get("command", entry)) if isinstance(entry, dict) else str(entry)


def is_ours(entry: object) -> TypeGuard[dict]:
    return isinstance(entry, dict) and MARKER in str(entry.get("command", "")) and "xshare" in str(entry["command"])


def _load(configured: Path) -> tuple[Path, str | None, dict]:
    """The file to edit (a symlink's target), its text (None: no file yet) and what it holds."""
    target = settings_file.resolve(configured)
    text = settings_file.read(target)
    if text is None:
        return target, None, {}
    try:
        settings = loads(text)
    except (ValueError, RecursionError):
        settings = None
    if not isinstance(settings, dict):
        raise SettingsError(f"{configured} is not valid JSON; fix it first, xshare will not overwrite it")
    return target, text, settings


def _edit(text: str | None, settings: dict, value: object = _ABSENT, raw: str | None = None) -> str:
    """The settings text with statusLine set to `value` (or the JSON text `raw`), or removed, changing
    nothing else; a full rewrite only should the text edit not give the intended settings."""
    expected = {k: v for k, v in settings.items() if k != "statusLine"}
    if raw is not None:
        expected["statusLine"] = loads(raw)
    elif value is not _ABSENT:
        expected["statusLine"] = value
    if text is None:
        return settings_json.new_document("statusLine", expected["statusLine"])
    try:
        if raw is not None:
            edited = settings_json.set_raw(text, "statusLine", raw)
        elif value is not _ABSENT:
            edited = settings_json.set_value(text, "statusLine", value)
        else:
            edited = settings_json.delete(text, "statusLine")
        if loads(edited) == expected:
            return edited
    except (ValueError, IndexError, AttributeError, RecursionError):
        pass
    return json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


def _what_was_there(configured: Path, text: str | None, current: object, record: dict | None) -> dict:
    """What remove needs to undo this install: the state before xshare's FIRST install, verbatim."""
    if not is_ours(current):
        raw = settings_json.raw_value(text, "statusLine") if text is not None else None
        return {"settings": str(configured), "previous_known": True, "previous": current, "previous_text": raw,
                "original_known": True, "original": text}
    if record and record["settings"] == str(configured) and record["previous_known"]:
        return {key: value for key, value in record.items() if key != "written"}
    # ours already, and the record of what it replaced is gone: nobody knows what was there
    return {"settings": str(configured), "previous_known": False, "previous": None, "previous_text": None,
            "original_known": False, "original": None}


def _load_record() -> dict | None:
    """xshare's install record, older versions' included ({"settings", "previous"} only)."""
    record = read_json(_record_path())
    if not isinstance(record, dict) or not isinstance(record.get("settings"), str):
        return None
    if record.get("version") == RECORD_VERSION:
        return record
    previous = record.get("previous")  # version 1 could hold xshare's own line: not a previous one
    known = not is_ours(previous)
    return {"settings": record["settings"], "previous_known": known, "previous": previous if known else None,
            "previous_text": None, "original_known": False, "original": None, "written": None}


def _save_record(record: dict | None, raw: bytes | None = None) -> None:
    """Write the record (or put back the raw bytes of the one before it, or none)."""
    if record is not None:
        raw = json.dumps({"version": RECORD_VERSION, **record}, ensure_ascii=False).encode()
    if raw is None:
        _record_path().unlink(missing_ok=True)
        return
    atomic_write(_record_path(), raw)


def _record_bytes() -> bytes | None:
    try:
        return _record_path().read_bytes()
    except OSError:
        return None


def install(force: bool = False, line_format: str | None = None, line2: str | None = None) -> tuple[int, str]:
    try:
        configured = settings_path()
        target, text, settings = _load(configured)
        current = settings.get("statusLine")
        if current and not is_ours(current) and not force:
            return 1, (f"{configured} already has a status line ({_describe(current)}). Re-run with --force to "
                       "replace it; `xshare statusline remove` would put it back.")
        settings_file.check_writable(target)
    except SettingsError as error:
        return 1, str(error)
    entry = {"type": "command", "command": command(line_format, line2), "padding": 0,
             "refreshInterval": REFRESH_SECONDS}
    new_text = _edit(text, settings, value=entry)
    record = _what_was_there(configured, text, current, _load_record()) | {"written": new_text}
    before = _record_bytes()
    try:  # the record first: were settings written and it lost, remove could not put theirs back
        _save_record(record)
    except OSError as error:
        return 1, (f"cannot write xshare's install record in {state_dir()} ({settings_file.why(error)}); "
                   f"{configured} not changed")
    try:
        settings_file.write(target, new_text, backup=not is_ours(current))
    except OSError as error:
        _save_record(None, before)
        return 1, f"cannot write {target} ({settings_file.why(error)}); nothing changed"
    kept = " (the previous one is kept for `remove`)" if record["previous"] else ""
    return 0, f"installed in {configured}{kept}: {entry['command']}"


def _undo(text: str, settings: dict, record: dict | None) -> tuple[str | None, str]:
    """The settings text without xshare's line, and what that did, in words."""
    if record and record["original_known"] and text == record["written"]:
        if record["original"] is None:
            return None, " (xshare had created the file; it is gone again)"
        back = "; the previous status line is back" if record["previous_text"] is not None else ""
        return record["original"], back + " (the file is byte for byte as before install)"
    if record and record["previous_known"]:
        if record["previous_text"] is not None:
            return _edit(text, settings, raw=record["previous_text"]), "; the previous status line is back"
        if record["previous"] is not None:
            return _edit(text, settings, value=record["previous"]), "; the previous status line is back"
        return _edit(text, settings), ""
    return _edit(text, settings), "; no previous status line was recorded, so none was put back"


def remove() -> tuple[int, str]:
    record = _load_record()
    try:
        configured = Path(record["settings"]) if record else settings_path()
        target, text, settings = _load(configured)
        if not is_ours(settings.get("statusLine")):
            return 0, f"xshare's status line is not installed in {configured}; nothing changed"
        settings_file.check_writable(target)
    except SettingsError as error:
        return 1, str(error)
    assert text is not None  # a file that holds xshare's status line
    new_text, done = _undo(text, settings, record)
    try:
        if new_text is None:
            target.unlink()
        else:
            settings_file.write(target, new_text)
    except OSError as error:
        return 1, f"cannot write {target} ({settings_file.why(error)}); nothing changed"
    _record_path().unlink(missing_ok=True)
    backup = target.with_name(target.name + settings_file.BACKUP_SUFFIX)
    if "no previous" in done and backup.is_file():
        done += f" ({backup.name} holds the file as it was before xshare's first install)"
    return 0, f"removed from {configured}{done}"


def status() -> tuple[int, str]:
    try:
        path = settings_path()
        current = _load(path)[2].get("statusLine")
    except SettingsError as error:
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
