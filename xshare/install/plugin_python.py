"""Which Python runs the plugin's entry points (bin/xshare, the hook, the status line script).

They start with whatever `python3` is on the PATH: 3.9 on macOS without Homebrew, 3.6 on RHEL 8, while
xshare needs 3.10. So before importing anything else they call `switch()`: the plugin's env when it is
ready, else this interpreter when it is new enough, else the newest python3.X found on the PATH, in
Homebrew's and python.org's usual folders, or installed by the plugin itself with uv (plugin_uv; the
search is plugin_env.newer_pythons). When none exists, `too_old()` says so in one line and exits, never
a traceback.

This file, plugin_env and paths must run on old interpreters: no `from __future__ import annotations`
(3.7), annotations quoted, nothing but os and sys at import time (the status line imports this);
tests/install/test_plugin_python.py runs them on every old Python it finds and checks them with vermin.
"""

import os
import sys

from xshare.install import plugin_env

# the files an old python3 runs, relative to the plugin root; .ci/run and tests/install/test_plugin_python.py check
# them with vermin: the first up to choosing an interpreter (3.6, RHEL 8's python3, must get its one line),
# the others installing a Python with uv on macOS's own 3.9
STARTS_ON_OLD = ("bin/xshare", "statusline/statusline.py", "xshare/__init__.py", "xshare/install/plugin_python.py",
                 "xshare/install/plugin_env.py", "xshare/state/paths.py")
BUILDS_ON_OLD = ("xshare/install/plugin_uv.py", "xshare/install/plugin_env_build.py", "xshare/state/store.py")
MINIMUM = (3, 10)


def new_enough(version_info: "tuple" = tuple(sys.version_info)) -> bool:
    return tuple(version_info[:2]) >= MINIMUM


def _exec(python: str, script: str, flags: "list[str]") -> None:
    """Replace this process with `python script args`; returns only if that interpreter cannot start."""
    command = [python, *flags, script, *sys.argv[1:]]
    if os.name == "nt":  # execv on Windows starts a second process and returns at once
        import subprocess

        sys.exit(subprocess.call(command))
    os.execv(python, command)


def switch(script: str, flags: "list[str] | None" = None) -> None:
    """Re-run `script` under the best interpreter: the plugin's env, else this one if new enough, else the
    newest python3.X found. Returns when this interpreter is to run it (or none better can start)."""
    if os.environ.get(plugin_env.ACTIVE):
        return  # switched once already: never twice, whatever the new interpreter reports
    flags = flags or []
    data = None if plugin_env.disabled() else plugin_env.data_dir()
    python = plugin_env.ready_python()
    if python and data and os.path.realpath(sys.prefix) != os.path.realpath(plugin_env.env_dir(data)):
        os.environ[plugin_env.ACTIVE] = python
        try:
            _exec(python, script, flags)
        except OSError:
            # the env's interpreter exists but cannot start (wrong architecture, not executable): set it
            # aside so the next SessionStart rebuilds it, and go on without it
            plugin_env.set_aside(data)
        del os.environ[plugin_env.ACTIVE]
    if new_enough():
        return
    for python in plugin_env.newer_pythons(data):
        os.environ[plugin_env.ACTIVE] = python
        try:
            _exec(python, script, flags)
        except OSError:
            continue
    os.environ.pop(plugin_env.ACTIVE, None)


def version_text() -> str:
    return "{}.{}.{}".format(*sys.version_info[:3])


def missing_line() -> str:
    """What is missing, in one line, and what the plugin does about it."""
    where = "python3.10 to python3.15 on the PATH, in {} or {}".format(", ".join(plugin_env.USUAL_DIRS),
                                                                         plugin_env.FRAMEWORKS)
    text = "xshare needs Python 3.10 or newer; {} is {} and none was found ({})".format(
        sys.executable or "python3", version_text(), where)
    data = None if plugin_env.disabled() else plugin_env.data_dir()
    state = _uv_state(data)
    if state == "building":
        return text + "; the plugin is installing one with uv in the background"
    if state:
        return text + f"; installing one with uv failed ({state}); install Python 3.10+ (python.org, or brew install " \
                      "python@3.13)"
    return text + "; install Python 3.10+ (python.org, or brew install python@3.13)"


def status_line() -> str:
    """The status line's form of missing_line(): short enough for one line under the prompt."""
    data = None if plugin_env.disabled() else plugin_env.data_dir()
    state = _uv_state(data)
    text = "xshare: needs Python 3.10+ (python3 is {})".format(".".join(version_text().split(".")[:2]))
    if state == "building":
        return text + "; installing one with uv…"
    return text + "; install one (python.org, or brew install python@3.13)"


def _uv_state(data: "str | None") -> "str | None":
    """'building' while plugin_uv works, its failure reason once it failed, else None."""
    if not data:
        return None
    failure = plugin_env.read_json(os.path.join(data, plugin_env.UV_FAILED))
    if isinstance(failure, dict) and failure.get("reason"):
        return str(failure["reason"])[:200]
    return "building" if os.path.exists(os.path.join(data, plugin_env.UV_BUILDING)) else None


def too_old(command: "list[str]") -> int:
    """No Python 3.10+ to run under: one line where the caller looks, never a traceback.

    The hook logs the line once a day (not once per tool batch), starts plugin_uv at SessionStart and exits
    0; the status line shows a short form; the slash command prints it; the CLI prints it on stderr, exit 1.
    """
    if command[:1] == ["hook"]:
        if _hook_event() == "SessionStart":
            _start_uv()
        plugin_env.log_once(missing_line())
        return 0
    line = missing_line()
    if command[:1] == ["statusline-render"]:
        print(status_line())
        return 0
    if command[:1] == ["slash"]:
        print(line)
        return 0
    print(line, file=sys.stderr)
    return 1


def _hook_event() -> "str | None":
    import json

    try:
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
    except (OSError, ValueError, AttributeError):
        return None
    return payload.get("hook_event_name") if isinstance(payload, dict) else None


def _start_uv() -> None:
    """Have uv install a Python for the plugin (plugin_uv, which itself needs 3.7: older ones only log)."""
    try:
        from xshare.install import plugin_uv

        plugin_uv.start_install()
    except Exception as error:  # the line logged below says what is missing; this says why uv did not start
        plugin_env.log_once(f"xshare: could not start installing a Python with uv: {error!r}")
