"""Starting the background pass (sessions/prefill.py) from Claude Code's SessionStart hook and Hermes's
plugin load: one detached process at the lowest CPU and I/O priority, so that the first report a user runs
reads warm caches.

Cheap where it is asked: one small JSON read (the stamp) and, at most once per REFRESH, a process started
that checks the history and returns at once when nothing changed or another pass runs. Off with
XSHARE_NO_BACKGROUND=1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from xshare.sessions.prefill import read_stamp, setup

REFRESH = 3600.0  # seconds after a pass before another may look for what changed
_IOPRIO_SYSCALL = {"x86_64": 251, "aarch64": 30, "arm64": 30, "i686": 289, "armv7l": 314, "ppc64le": 273,
                   "riscv64": 30, "s390x": 282}  # ioprio_set's number by machine (Linux)
_IDLE_IO = 3 << 13  # IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT
_MAC_THROTTLE = (0, 0, 3)  # setiopolicy_np(IOPOL_TYPE_DISK, IOPOL_SCOPE_PROCESS, IOPOL_THROTTLE)


def disabled() -> bool:
    return os.environ.get("XSHARE_NO_BACKGROUND", "") not in ("", "0")


def due(now: float | None = None) -> bool:
    """No pass yet with this setup, or the last one is over REFRESH old."""
    stamp = read_stamp()
    at = stamp.get("at")
    if stamp.get("setup") != setup() or not isinstance(at, (int, float)):
        return True
    return (now or time.time()) - at >= REFRESH


def start() -> bool:
    """Start the pass, detached, when it is due and not turned off; whether one was started."""
    if disabled() or not due():
        return False
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = "import sys; sys.path.insert(0, sys.argv[1]); from xshare.live.background import main; sys.exit(main())"
    flags = 0
    if sys.platform == "win32":  # a statement, not an expression, so the type checker skips it elsewhere
        flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
    subprocess.Popen([sys.executable, "-c", code, package], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, close_fds=True, creationflags=flags,
                     start_new_session=sys.platform != "win32")  # outlives `claude -p`'s hook teardown
    return True


def lower_priority() -> None:
    """The lowest CPU priority and the idle I/O class, as far as the system allows; silently as is elsewhere."""
    try:
        os.nice(19 - os.nice(0))
    except (AttributeError, OSError):  # Windows has no nice: the process was started detached, that is all
        pass
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        if sys.platform.startswith("linux"):
            number = _IOPRIO_SYSCALL.get(os.uname().machine)
            if number is not None:
                libc.syscall(number, 1, 0, _IDLE_IO)  # IOPRIO_WHO_PROCESS, this process
        elif sys.platform == "darwin":
            libc.setiopolicy_np(*_MAC_THROTTLE)
    except (OSError, AttributeError, TypeError):  # no libc to ask, or too old a system: CPU nice only
        pass


def main() -> int:
    """The detached process: never prints; what went wrong goes to the hook's log."""
    from xshare.live.log import log_exception

    try:
        lower_priority()
        from xshare.sessions.prefill import run_pass

        run_pass()
    except Exception:  # a failed pass costs only a cold first report; the log says why
        log_exception()
    return 0
