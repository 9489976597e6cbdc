"""Building the plugin's env (see plugin_env): started at SessionStart, run in a detached process.

One build at a time (a lock in the data folder; a second one waits, then finds the env current). The env
is made in a temporary folder, its stamp written last, and renamed into place, so `bin/xshare` sees either
the old complete env or the new complete one. The previous env stays in use until that rename. A failure
writes one line to the hook log, the full output to venv-build.log, and a failure stamp that holds back
retries for a day (or until the plugin's version changes).
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
from xshare.state.paths import hook_log
from xshare.state.private import append_text
from xshare.state.store import atomic_write, locked

_PIP_FLAGS = ["--quiet", "--disable-pip-version-check", "--no-input", "--retries", "2", "--timeout", "30"]
# exactly the pinned files: every one hash-checked, wheels only (an sdist's build step would run code whose
# build dependencies pip does not hash-check), no dependency the file does not list
PINNED = ["--require-hashes", "--no-deps", "--only-binary=:all:"]


class BuildError(Exception):
    """A build step failed; the message is the one line the hook log gets."""


def start_build(root: str | None = None) -> bool:
    """At SessionStart: when the env is missing or stale (and did not just fail), start a detached build
    that outlives this hook (`claude -p` kills async hooks at teardown). Returns whether one was started."""
    root = root or plugin_env.plugin_root()
    data = None if plugin_env.disabled() else plugin_env.data_dir(root)
    want = plugin_env.wanted(root) if data else None
    if not data or not want or plugin_env.is_current(data, want) or plugin_env.failed_recently(data, want):
        return False
    unwritable = writable_problem(data)
    if unwritable:
        plugin_env.log_once(f"xshare: the plugin environment cannot be built: {unwritable}; xshare keeps running with "
                 f"{sys.executable} (characters / 4 without tiktoken)")
        return False
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from xshare.install.plugin_env_build import main; "
            "sys.exit(main(sys.argv[2:]))")
    flags = 0
    if sys.platform == "win32":  # a statement, not an expression, so the type checker skips it elsewhere
        flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
    subprocess.Popen([sys.executable, "-c", code, plugin_env.package_root(), "build", root, data],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     close_fds=True, creationflags=flags, start_new_session=sys.platform != "win32")
    return True


def writable_problem(data: str) -> str | None:
    """Why the data folder cannot hold a build (read-only, not a folder), or None. Tried, not judged by
    the permission bits: root may write anyway, a read-only mount refuses even root."""
    probe = Path(data) / f".xshare-write-test-{os.getpid()}"
    try:
        Path(data).mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        return f"{data} is not writable ({error.strerror or error})"
    return None


def build(root: str, data: str) -> bool:
    """Build the env for the plugin at `root` into `data` unless it is current; True when it is ready."""
    want = plugin_env.wanted(root)
    if want is None:
        return False
    folder = Path(data)
    with locked(folder / "venv.lock"):
        if plugin_env.is_current(data, want):
            return True  # another build finished while this one waited for the lock
        if plugin_env.failed_recently(data, want):
            return False
        _remove_leftovers(folder)  # from a build that was killed; safe, we hold the lock
        temporary = folder / f"{plugin_env.ENV_NAME}.tmp-{os.getpid()}"
        try:
            _make_env(temporary, root, want, folder / plugin_env.BUILD_LOG)
        except BuildError as error:
            shutil.rmtree(temporary, ignore_errors=True)
            _record_failure(folder, want, str(error))
            return False
        _swap_in(temporary, Path(plugin_env.env_dir(data)))
        (folder / plugin_env.FAILED).unlink(missing_ok=True)
        return True


def _make_env(target: Path, root: str, want: dict, log_path: Path) -> None:
    deadline = time.monotonic() + plugin_env.BUILD_TIMEOUT
    with open(log_path, "w", encoding="utf-8") as log:
        run_step([sys.executable, "-m", "venv", str(target)], log, deadline, "could not create a virtual environment")
        python = plugin_env.env_python(str(target))
        requirements = os.path.join(root, plugin_env.REQUIREMENTS)
        run_step([python, "-m", "pip", "install", *_PIP_FLAGS, *PINNED, "-r", requirements], log, deadline,
             "pip could not install " + " ".join(want["requirements"]))
    # written last: only a complete env has a stamp
    atomic_write(target / plugin_env.STAMP, json.dumps(want).encode())


def run_step(command: list[str], log, deadline: float, what: str, extra_env: dict | None = None) -> None:
    """Run one build step with its output in `log`; BuildError (one line) if it fails or overruns."""
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra_env or {})
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                              timeout=max(1.0, deadline - time.monotonic()), check=False)
    except subprocess.TimeoutExpired as error:
        raise BuildError(f"{what}: gave up after {plugin_env.BUILD_TIMEOUT} s") from error
    except OSError as error:
        raise BuildError(f"{what}: {error}") from error
    if done.returncode != 0:
        log.flush()
        raise BuildError(f"{what}: {_last_line(Path(log.name))}")


def _last_line(path: Path) -> str:
    """The last line of the build log worth quoting (pip's ERROR line, venv's complaint)."""
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return "see the build log"
    useful = [line for line in lines if line and not line.startswith("$ ")]
    errors = [line for line in useful if line.startswith("ERROR")]
    return (errors or useful or ["exit status not 0"])[-1][:300]


def _swap_in(new: Path, env: Path) -> None:
    """Replace the env by the new one with renames; the old one is removed once nothing points at it.
    (A hook running under the old env right now keeps its open files; one that imports later may fail
    once and the next call catches up: the ledger is incremental.)"""
    old = env.with_name(f"{env.name}.old-{os.getpid()}")
    if env.exists():
        os.replace(env, old)
    os.replace(new, env)
    shutil.rmtree(old, ignore_errors=True)


def _remove_leftovers(folder: Path) -> None:
    for leftover in folder.glob(f"{plugin_env.ENV_NAME}.tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    for leftover in folder.glob(f"{plugin_env.ENV_NAME}.old-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _record_failure(folder: Path, want: dict, reason: str) -> None:
    atomic_write(folder / plugin_env.FAILED, json.dumps({"want": want, "time": time.time(), "reason": reason}).encode())
    retry = time.strftime("%Y-%m-%d %H:%M", time.localtime(time.time() + plugin_env.RETRY_AFTER))
    line = (f"{time.strftime('%Y-%m-%dT%H:%M:%S')} plugin env not built ({reason}); xshare keeps running with "
            f"{sys.executable} (characters / 4 without tiktoken); next try after {retry} or on a new plugin "
            f"version; full output in {folder / plugin_env.BUILD_LOG}")
    try:  # exactly one line, whatever pip said; private, as the hook's own lines
        append_text(hook_log(), " ".join(line.split()) + "\n")
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    """`python -m xshare.install.plugin_env_build status [PLUGIN_ROOT]` says where the env is and whether it is
    ready; `build PLUGIN_ROOT DATA_DIR` builds it in the foreground (what start_build runs detached)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["build"] and len(argv) == 3:
        return 0 if build(argv[1], argv[2]) else 1
    if argv[:1] == ["status"] and len(argv) <= 2:
        root = argv[1] if len(argv) == 2 else plugin_env.plugin_root()
        data = plugin_env.data_dir(root)
        python = plugin_env.ready_python(root)
        print(f"plugin data: {data or 'none (not an installed plugin and CLAUDE_PLUGIN_DATA is unset)'}")
        print(f"environment: {python + ' (ready)' if python else 'not ready; xshare runs with ' + sys.executable}")
        failed = plugin_env.last_failure(data) if data else None
        if failed and failed.get("reason"):
            print(f"last build failed: {failed['reason']}")
        return 0
    print("usage: python -m xshare.install.plugin_env_build status [PLUGIN_ROOT] | build PLUGIN_ROOT DATA_DIR",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
