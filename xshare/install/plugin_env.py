"""The Claude Code plugin's own Python environment: tiktoken and orjson in a venv under ${CLAUDE_PLUGIN_DATA}.

The hooks start with whatever `python3` is on the PATH; on Debian, Ubuntu and Homebrew that interpreter
has no tiktoken and refuses `pip install` (PEP 668). Claude Code's convention for plugin dependencies is to
install them into ${CLAUDE_PLUGIN_DATA} at SessionStart and to compare a copy of the manifest to notice a
new version. Here that copy is a stamp inside the env (plugin version, requirements, Python version); it is
written last, inside a temporary folder that is then renamed into place, so a half-built env is never used.

This module says where the env lives, whether it is ready and what it must hold; `plugin_env_build`
builds it. `bin/xshare` calls `ready_python()` on every run (two stats) and re-executes itself under the
env's interpreter when there is one (plugin_python). Stdlib only, nothing but os and sys at import time,
and runnable by old interpreters (see plugin_python): bin/xshare imports this before choosing one.

It also finds the Pythons new enough to run xshare (`newer_pythons`, for plugin_python and plugin_uv)
and logs a line at most once a day (`log_once`).

What the env holds is requirements.txt beside pyproject.toml: exact versions with the hash of every file,
installed with pip's --require-hashes, so a new upstream release never runs in a hook unannounced.
"""

import os
import sys

ENV_NAME = "venv"
STAMP = "xshare-env.json"  # inside the env: present only once the env is complete
FAILED = "venv-failed.json"  # in the data folder: the last failed build, to hold back retries
SET_ASIDE = "xshare-env.unusable.json"  # the stamp, renamed when the env's interpreter could not start
REQUIREMENTS = "requirements.txt"  # in the plugin root: the pinned, hashed requirements
UV_FAILED = "python-failed.json"  # in the data folder: the last failed attempt to install a Python with uv
UV_BUILDING = "python.building"  # in the data folder while plugin_uv installs a Python
BUILD_LOG = "venv-build.log"  # the last build's full output (the hook log gets one line)
RETRY_AFTER = 24 * 3600
BUILD_TIMEOUT = 900  # seconds for the whole build: venv creation plus pip
ACTIVE = "XSHARE_PLUGIN_ENV"  # set by bin/xshare when it switches interpreter, so it never switches twice
OFF = "XSHARE_NO_PLUGIN_ENV"  # =1: never build or use the env (you manage python3's packages yourself)
# the Pythons xshare runs on, newest first; requirements.txt has wheels for each (tests/install/test_plugin_python.py)
VERSIONS = ("3.15", "3.14", "3.13", "3.12", "3.11", "3.10")
# beside the PATH: Homebrew (Apple silicon, then Intel and most other installers) and python.org's
USUAL_DIRS = ("/opt/homebrew/bin", "/usr/local/bin")
FRAMEWORKS = "/Library/Frameworks/Python.framework/Versions"
SEARCH = "XSHARE_PYTHON_SEARCH"  # folders (os.pathsep-separated) searched instead of the usual ones
UV_PYTHONS = "python"  # in the plugin data folder: where plugin_uv has uv install a Python
LOGGED_NOTE = "plugin-env-note.txt"  # in the state folder's logs: the last line log_once wrote
NOTE_EVERY = 24 * 3600  # log_once repeats the same line at most once a day


def disabled() -> bool:
    return os.environ.get(OFF) == "1"


def package_root() -> str:
    """The folder holding the xshare package (the plugin root when running from the plugin)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # xshare/install/ -> ..


def plugin_root() -> str:
    """The plugin whose manifest decides what the env holds: Claude Code's ${CLAUDE_PLUGIN_ROOT}, else ours."""
    named = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if named and os.path.isfile(os.path.join(named, ".claude-plugin", "plugin.json")):
        return named
    return package_root()


def data_dir(root: "str | None" = None) -> "str | None":
    """${CLAUDE_PLUGIN_DATA}, or where Claude Code puts it for a plugin in its cache.

    Hooks get the variable; the Bash tool (where the model or /exploration-share runs bin/xshare) does not
    reliably, so for a marketplace install it is derived from the cache layout
    `<config>/plugins/cache/<marketplace>/<plugin>/<version>` -> `<config>/plugins/data/<plugin>-<marketplace>`
    (the id `plugin@marketplace` with every character outside [A-Za-z0-9_-] as `-`). Anywhere else (a
    checkout, a --plugin-dir session outside a hook) there is no env and python3 is used.
    """
    named = os.environ.get("CLAUDE_PLUGIN_DATA")
    if named:
        return named
    parts = os.path.abspath(root or package_root()).split(os.sep)
    if len(parts) >= 5 and parts[-4] == "cache" and parts[-5] == "plugins":
        plugin_id = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "-"
                            for c in f"{parts[-2]}@{parts[-3]}")
        return os.sep.join([*parts[:-4], "data", plugin_id])
    return None


def env_dir(data: str) -> str:
    return os.path.join(data, ENV_NAME)


def env_python(env: str) -> str:
    return os.path.join(env, "Scripts", "python.exe") if os.name == "nt" else os.path.join(env, "bin", "python")


def ready_python(root: "str | None" = None) -> "str | None":
    """The env's interpreter when the env is complete and its interpreter still exists, else None."""
    data = None if disabled() else data_dir(root)
    if not data:
        return None
    env = env_dir(data)
    python = env_python(env)
    # exists() follows the venv's symlink: a base Python removed by an upgrade makes the env not ready
    return python if os.path.exists(os.path.join(env, STAMP)) and os.path.exists(python) else None


def interpreter(root: "str | None" = None) -> str:
    """The Python xshare should run under: the plugin's env when ready, else the current one."""
    return ready_python(root) or sys.executable


def wanted(root: str) -> "dict | None":
    """What the env must hold for the plugin at `root`: its version, its pinned requirements (and the
    file's digest, so a changed hash rebuilds too), this Python's version. None when the plugin files are
    missing or unreadable (then no env is built)."""
    import hashlib
    import json

    try:
        with open(os.path.join(root, ".claude-plugin", "plugin.json"), encoding="utf-8") as handle:
            version = json.load(handle).get("version")
        with open(os.path.join(root, REQUIREMENTS), "rb") as handle:
            raw = handle.read()
        requirements = pins(raw.decode("utf-8"))
    except (OSError, ValueError, AttributeError):
        return None
    if not requirements:
        return None
    return {"version": version, "requirements": requirements, "lock": hashlib.sha256(raw).hexdigest()[:16],
            "python": "{}.{}".format(*sys.version_info[:2])}


def pins(text: str) -> "list[str]":
    """The `name==version` of every requirement in a pip requirements file (hashes and comments left out);
    empty when any requirement is not an exact pin, so nothing unpinned is ever installed."""
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        words = line.split("#", 1)[0].split()
        if not words or words[0].startswith("-"):
            continue
        name, equals, version = words[0].partition("==")
        if not equals or not name or not version or "--hash=sha256:" not in line:
            return []
        found.append(words[0])
    return found


def read_json(path: str) -> object:
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def last_failure(data: str) -> "dict | None":
    """The failure stamp: what the failed build wanted, when, and why."""
    failed = read_json(os.path.join(data, FAILED))
    return failed if isinstance(failed, dict) else None


def is_current(data: str, want: dict) -> bool:
    """The env is complete and was built for exactly what the plugin wants now."""
    env = env_dir(data)
    return os.path.exists(env_python(env)) and read_json(os.path.join(env, STAMP)) == want


def failed_recently(data: str, want: dict) -> bool:
    """A build for the same wants failed less than a day ago: wait before trying again."""
    import time

    failed = last_failure(data)
    return (failed is not None and failed.get("want") == want
            and isinstance(failed.get("time"), (int, float)) and time.time() - failed["time"] < RETRY_AFTER)


def set_aside(data: str) -> None:
    """The env's interpreter exists but cannot start: rename its stamp, so it is no longer ready and the
    next SessionStart rebuilds it (is_current is then false)."""
    env = env_dir(data)
    try:
        os.replace(os.path.join(env, STAMP), os.path.join(env, SET_ASIDE))
    except OSError:
        pass  # another hook did it first, or the folder is read-only: either way not used this run


def search_dirs(data: "str | None") -> "list[str]":
    """Where to look for python3.X: the PATH, the usual folders (or $XSHARE_PYTHON_SEARCH), the plugin's own."""
    folders = [folder for folder in os.environ.get("PATH", "").split(os.pathsep) if folder]
    extra = os.environ.get(SEARCH)
    if extra is not None:
        folders += [folder for folder in extra.split(os.pathsep) if folder]
    else:
        folders += list(USUAL_DIRS) + [os.path.join(FRAMEWORKS, version, "bin") for version in VERSIONS]
    if data:
        installed = os.path.join(data, UV_PYTHONS)
        try:
            names = sorted(os.listdir(installed), reverse=True)
        except OSError:
            names = []
        folders += [os.path.join(installed, name, "bin") for name in names]
    return folders


def newer_pythons(data: "str | None" = None) -> "list[str]":
    """Executable python3.X files, X >= 10, newest version first (the name says the version: no probe)."""
    if os.name == "nt":  # hooks there run the `py` launcher's choice; nothing to search
        return []
    found, seen = [], set()
    folders = search_dirs(data)
    for version in VERSIONS:
        for folder in folders:
            path = os.path.join(folder, "python" + version)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                real = os.path.realpath(path)
                if real not in seen:
                    seen.add(real)
                    found.append(path)
    return found


def log_once(line: str) -> None:
    """Append `line` to the hook log unless the same line was logged less than a day ago."""
    import time

    from xshare.state.paths import hook_log

    log = str(hook_log())
    note = os.path.join(os.path.dirname(log), LOGGED_NOTE)
    try:
        with open(note, encoding="utf-8") as handle:
            if handle.read() == line and time.time() - os.stat(note).st_mtime < NOTE_EVERY:
                return
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "a", encoding="utf-8") as handle:
            handle.write("{} {}\n".format(time.strftime("%Y-%m-%dT%H:%M:%S"), line))
        with open(note, "w", encoding="utf-8") as handle:
            handle.write(line)
    except OSError:
        pass  # an unwritable state folder: nothing more to do from a hook
