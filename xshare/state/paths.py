"""Where xshare keeps its own files: one directory the hook, the status line and the CLI all find
without help from the plugin system. Stdlib only and import-light: the status line imports it, and
plugin_python imports it on whatever old python3 started a hook (no `from __future__ import annotations`)."""

import errno
import os
import re
import sys
from pathlib import Path


class NoStateFolder(OSError):
    """No home folder to keep xshare's state in, and no $XSHARE_HOME: callers that can do without
    their state (the count store, the history) already go on after an OSError."""


# why an XSHARE_HOME is refused: a relative one would plant a state folder in whatever folder a command ran in
NOT_ABSOLUTE = "XSHARE_HOME is blank, relative or names the home of no such user: give a folder's full path"


class BadStateFolder(NoStateFolder):
    """$XSHARE_HOME is set but names no folder xshare can use as its own (blank, relative, ~nouser)."""


def home() -> "Path | None":
    """The user's home folder, or None where there is none to find: HOME unset and no passwd entry
    (cron, `docker --user 1234`). Every default under it is then simply not found."""
    try:
        found = Path.home()
    except (RuntimeError, KeyError, OSError):  # "Could not determine home directory."
        return None
    return None if str(found).startswith("~") else found  # older Pythons hand "~" back unexpanded


def expand(path: "str | Path") -> Path:
    """`path` with a leading ~ expanded; left as it is when there is no home to expand it to."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return Path(path)


def state_dir() -> Path:
    """$XSHARE_HOME if set, else the platform's per-user state directory; NoStateFolder when that
    needs a home folder and there is none."""
    explicit = os.environ.get("XSHARE_HOME")
    if explicit is not None:
        chosen = expand(explicit)
        if not explicit.strip() or not chosen.is_absolute():  # "~nouser" stays unexpanded, so relative
            raise BadStateFolder(errno.EINVAL, NOT_ABSOLUTE)
        return chosen
    xdg = os.environ.get("XDG_STATE_HOME") if sys.platform != "darwin" and os.name != "nt" else None
    xdg = xdg if xdg and os.path.isabs(xdg) else None  # the XDG spec: a relative path is invalid, ignored
    local = os.environ.get("LOCALAPPDATA") if os.name == "nt" else None
    if xdg:
        return Path(xdg) / "xshare"
    if local:
        return Path(local) / "xshare"
    user = home()
    if user is None:
        raise NoStateFolder(errno.ENOENT, "no home folder for xshare's state (HOME unset, no passwd entry)")
    if sys.platform == "darwin":
        return user / "Library" / "Application Support" / "xshare"
    if os.name == "nt":
        return user / "AppData" / "Local" / "xshare"
    return user / ".local" / "state" / "xshare"


def hook_log() -> Path:
    """Where the hook (and the plugin env's builder) write what went wrong; nothing else reads it."""
    return state_dir() / "logs" / "hook.log"


def live_dir() -> Path:
    return state_dir() / "live"


_ESCAPED_IN_NAME = re.compile(r"[^A-Za-z0-9._-]|^\.")  # and a leading dot: no hidden file, no `..`
LONGEST_NAME = 120  # an id's name before its suffix (.updater.lock, -2.html): well within 255 bytes


def _escaped(match: "re.Match") -> str:  # quoted: re.Match is 3.7+, and an old python3 imports this
    return "".join(f"~{byte:02X}" for byte in match.group().encode("utf-8", "surrogatepass"))


def file_name(session_id: str) -> str:
    """A session id as a file name, one id one name: a character outside [A-Za-z0-9._-] (a subagent id's
    slash) is ~ and its UTF-8 bytes in hex, so `team/a1` and `team_a1`, `отчёт` and `ошибк` keep names of
    their own; a name past LONGEST_NAME is its start, ~~ (which no escaped name holds) and a hash of the id."""
    name = _ESCAPED_IN_NAME.sub(_escaped, session_id) or "~"
    if len(name) <= LONGEST_NAME:
        return name
    import hashlib  # only for so long an id: the status line imports this module (hashlib costs it 7 ms)

    return f"{name[:80]}~~{hashlib.sha256(session_id.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"


def line_file(session_id: str) -> Path:
    """The small summary the status line renders (written by the hook after every update)."""
    return live_dir() / f"{file_name(session_id)}.line.json"


def html_file(session_id: str) -> Path:
    """Where a session's HTML summary is written (the status line and /exploration-share point at it)."""
    return state_dir() / "html" / f"{file_name(session_id)}.html"
