"""The Claude Code plugin's own Python environment: tiktoken and orjson in a venv under ${CLAUDE_PLUGIN_DATA}.

The hooks start with whatever `python3` is on the PATH; on Debian, Ubuntu and Homebrew that interpreter
has no tiktoken and refuses `pip install` (PEP 668). Claude Code's convention for plugin dependencies is to
install them into ${CLAUDE_PLUGIN_DATA} at SessionStart and to compare a copy of the manifest to notice a
new version. Here that copy is a stamp inside the env (plugin version, requirements, Python version); it is
written last, inside a temporary folder that is then renamed into place, so a half-built env is never used.

This module says where the env lives, whether it is ready and what it must hold; `plugin_env_build`
builds it. `bin/xshare` calls `ready_python()` on every run (two stats) and re-executes itself under the
env's interpreter when there is one. Stdlib only, and nothing but os and sys at import time: bin/xshare
imports this before choosing its interpreter.
"""

from __future__ import annotations

import os
import sys

ENV_NAME = "venv"
STAMP = "xshare-env.json"  # inside the env: present only once the env is complete
FAILED = "venv-failed.json"  # in the data folder: the last failed build, to hold back retries
BUILD_LOG = "venv-build.log"  # the last build's full output (the hook log gets one line)
RETRY_AFTER = 24 * 3600
BUILD_TIMEOUT = 900  # seconds for the whole build: venv creation plus pip
ACTIVE = "XSHARE_PLUGIN_ENV"  # set by bin/xshare when it switches interpreter, so it never switches twice
OFF = "XSHARE_NO_PLUGIN_ENV"  # =1: never build or use the env (you manage python3's packages yourself)


def disabled() -> bool:
    return os.environ.get(OFF) == "1"


def package_root() -> str:
    """The folder holding the xshare package (the plugin root when running from the plugin)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plugin_root() -> str:
    """The plugin whose manifest decides what the env holds: Claude Code's ${CLAUDE_PLUGIN_ROOT}, else ours."""
    named = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if named and os.path.isfile(os.path.join(named, ".claude-plugin", "plugin.json")):
        return named
    return package_root()


def data_dir(root: str | None = None) -> str | None:
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


def ready_python(root: str | None = None) -> str | None:
    """The env's interpreter when the env is complete and its interpreter still exists, else None."""
    data = None if disabled() else data_dir(root)
    if not data:
        return None
    env = env_dir(data)
    python = env_python(env)
    # exists() follows the venv's symlink: a base Python removed by an upgrade makes the env not ready
    return python if os.path.exists(os.path.join(env, STAMP)) and os.path.exists(python) else None


def interpreter(root: str | None = None) -> str:
    """The Python xshare should run under: the plugin's env when ready, else the current one."""
    return ready_python(root) or sys.executable


def wanted(root: str) -> dict | None:
    """What the env must hold for the plugin at `root`: its version, its requirements, this Python's
    version. None when the plugin files are missing or unreadable (then no env is built)."""
    import json

    try:
        with open(os.path.join(root, ".claude-plugin", "plugin.json"), encoding="utf-8") as handle:
            version = json.load(handle).get("version")
        requirements = _requirements(os.path.join(root, "pyproject.toml"))
    except (OSError, ValueError, AttributeError):
        return None
    if not requirements:
        return None
    return {"version": version, "requirements": requirements, "python": "{}.{}".format(*sys.version_info[:2])}


def _requirements(pyproject: str) -> list[str]:
    """[project] dependencies from pyproject.toml: tomllib when there is one (3.11+), else the one array."""
    with open(pyproject, "rb") as handle:
        raw = handle.read()
    try:
        import tomllib
    except ImportError:  # Python 3.10: the array is a plain list of quoted strings
        import re

        found = re.search(rb"(?m)^dependencies\s*=\s*\[(.*?)\]", raw, re.S)
        return [item.decode() for item in re.findall(rb'"([^"]+)"', found.group(1))] if found else []
    dependencies = tomllib.loads(raw.decode("utf-8")).get("project", {}).get("dependencies", [])
    return [item for item in dependencies if isinstance(item, str)]


def _read_json(path: str) -> object:
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def last_failure(data: str) -> dict | None:
    """The failure stamp: what the failed build wanted, when, and why."""
    failed = _read_json(os.path.join(data, FAILED))
    return failed if isinstance(failed, dict) else None


def is_current(data: str, want: dict) -> bool:
    """The env is complete and was built for exactly what the plugin wants now."""
    env = env_dir(data)
    return os.path.exists(env_python(env)) and _read_json(os.path.join(env, STAMP)) == want


def failed_recently(data: str, want: dict) -> bool:
    """A build for the same wants failed less than a day ago: wait before trying again."""
    import time

    failed = last_failure(data)
    return (failed is not None and failed.get("want") == want
            and isinstance(failed.get("time"), (int, float)) and time.time() - failed["time"] < RETRY_AFTER)
