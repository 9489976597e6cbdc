"""A Python for the plugin, installed with uv, on a machine that has none new enough (macOS's own python3
is 3.9 and there may be no Homebrew).

At SessionStart the hook, still on that old python3 (plugin_env.too_old), starts this detached: a
throwaway venv made by the old python3, uv installed into it from requirements-uv.txt (hash-checked, wheels
only), `uv python install` into the plugin data folder (`python/`, removed with the plugin's data; uv
checks the download against the checksum it carries and writes nothing outside that folder), then the
plugin's env built as usual by that Python (plugin_env_build). One try a day; a failure (no network, no
venv module) is one line in the hook log, and the status line keeps saying what is missing.

Runs on Python 3.7+ (plugin_python checks the version before importing it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from xshare.install import plugin_env
from xshare.install.plugin_env_build import PINNED, BuildError, run_step, writable_problem
from xshare.state.store import atomic_write, locked

PYTHON_VERSION = "3.13"  # what uv installs: requirements.txt has wheels for it on every platform uv serves
REQUIREMENTS = "requirements-uv.txt"  # in the plugin root
BOOTSTRAP = "uv-bootstrap"  # in the data folder while it runs: the throwaway venv holding uv
TIMEOUT = 1800  # seconds for uv, the Python's download and the env's build


def start_install(root: str | None = None) -> bool:
    """Start the detached install unless a Python 3.10+ is already there, one is being installed, or the
    last try failed less than a day ago. Returns whether it started one."""
    root = root or plugin_env.plugin_root()
    data = None if plugin_env.disabled() else plugin_env.data_dir(root)
    if not data or plugin_env.wanted(root) is None or not os.path.isfile(os.path.join(root, REQUIREMENTS)):
        return False
    if plugin_env.newer_pythons(data) or busy(data) or failed_recently(data):
        return False
    if writable_problem(data):
        return False  # the caller's one line says no Python was found; nothing could be installed here
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from xshare.install.plugin_uv import main; "
            "sys.exit(main(sys.argv[2:]))")
    atomic_write(Path(data) / plugin_env.UV_BUILDING, str(time.time()).encode())
    subprocess.Popen([sys.executable, "-c", code, plugin_env.package_root(), "install", root, data],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     close_fds=True, start_new_session=True)
    return True


def busy(data: str) -> bool:
    """An install started less than TIMEOUT ago (a marker older than that was left by a killed one)."""
    try:
        return time.time() - os.stat(os.path.join(data, plugin_env.UV_BUILDING)).st_mtime < TIMEOUT
    except OSError:
        return False


def failed_recently(data: str) -> bool:
    failure = plugin_env.read_json(os.path.join(data, plugin_env.UV_FAILED))
    return (isinstance(failure, dict) and isinstance(failure.get("time"), (int, float))
            and time.time() - failure["time"] < plugin_env.RETRY_AFTER)


def install(root: str, data: str) -> bool:
    """Install uv, a Python with it, then the env with that Python; True when the env is ready."""
    folder = Path(data)
    with locked(folder / "python.lock", blocking=False) as mine:
        if not mine:
            return False  # another install is running
        atomic_write(folder / plugin_env.UV_BUILDING, str(time.time()).encode())
        try:
            python = _install_python(root, folder)
            _build_env(python, root, data)
        except BuildError as error:
            _record_failure(folder, str(error))
            return False
        finally:
            shutil.rmtree(folder / BOOTSTRAP, ignore_errors=True)
            shutil.rmtree(folder / "uv-cache", ignore_errors=True)
            try:
                os.unlink(folder / plugin_env.UV_BUILDING)
            except OSError:
                pass
        try:
            os.unlink(folder / plugin_env.UV_FAILED)
        except OSError:
            pass
        return True


def _install_python(root: str, folder: Path) -> str:
    deadline = time.monotonic() + TIMEOUT
    bootstrap = folder / BOOTSTRAP
    shutil.rmtree(bootstrap, ignore_errors=True)
    with open(folder / plugin_env.BUILD_LOG, "w", encoding="utf-8") as log:
        run_step([sys.executable, "-m", "venv", str(bootstrap)], log, deadline,
                 "could not create a virtual environment for uv")
        run_step([plugin_env.env_python(str(bootstrap)), "-m", "pip", "install", "--quiet", "--no-input",
                  "--disable-pip-version-check", *PINNED, "-r", os.path.join(root, REQUIREMENTS)], log, deadline,
                 "pip could not install uv")
        uv = os.path.join(str(bootstrap), "Scripts" if os.name == "nt" else "bin", "uv")
        # --no-bin: nothing in ~/.local/bin; --no-config: the user's uv settings do not apply here
        run_step([uv, "python", "install", PYTHON_VERSION, "--no-bin", "--no-config", "--install-dir",
                  str(folder / plugin_env.UV_PYTHONS)], log, deadline,
                 f"uv could not install Python {PYTHON_VERSION}",
                 {"UV_CACHE_DIR": str(folder / "uv-cache"), "UV_NO_PROGRESS": "1"})
    found = plugin_env.newer_pythons(str(folder))
    if not found:
        raise BuildError(f"uv reported success but no python3.X is in {folder / plugin_env.UV_PYTHONS}")
    return found[0]


def _build_env(python: str, root: str, data: str) -> None:
    """The env, built by the new Python itself, so its stamp names the version the hooks will run."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from xshare.install.plugin_env_build import main; "
            "sys.exit(main(sys.argv[2:]))")
    try:
        done = subprocess.run([python, "-c", code, plugin_env.package_root(), "build", root, data],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=plugin_env.BUILD_TIMEOUT + 60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BuildError(f"the env could not be built with {python}: {error}") from error
    if done.returncode != 0:  # plugin_env_build logged its own line and holds its own retry back
        failure = plugin_env.last_failure(data) or {}
        raise BuildError(f"the env could not be built with {python}: {failure.get('reason', 'see the build log')}")


def _record_failure(folder: Path, reason: str) -> None:
    try:
        atomic_write(folder / plugin_env.UV_FAILED, json.dumps({"time": time.time(), "reason": reason}).encode())
    except OSError:
        pass
    retry = time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() + plugin_env.RETRY_AFTER))
    plugin_env.log_once(f"xshare: no Python 3.10+ here and installing one with uv failed ({reason}); next try "
                           f"after {retry}; full output in {folder / plugin_env.BUILD_LOG}")


def main(argv: list[str] | None = None) -> int:
    """`install PLUGIN_ROOT DATA_DIR`: what start_install runs detached."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["install"] and len(argv) == 3:
        return 0 if install(argv[1], argv[2]) else 1
    print("usage: python -m xshare.install.plugin_uv install PLUGIN_ROOT DATA_DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
