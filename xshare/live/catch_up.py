"""The status line's catch-up: when it sees the transcript has grown past the ledger, start one detached
background update, since no hook may come to do it.

Claude Code writes the compaction summary after its last compaction hook (PreCompact, SessionStart
`compact` and PostCompact all fire before the `compact_boundary` row), and a `-p` run or a quick exit can
cancel the async Stop hook, so the ledger can stay one update behind until the next tool batch. The
status line itself must stay cheap: it only checks, without waiting, that no updater holds this
session's updater lock and starts `python -c ...` (the interpreter it runs under, with its site-packages
this time) in a new session; the updater takes that lock, runs the hook's own update and exits. So at
most one updater runs per session, and the tokenizer is only ever loaded in that child.

Stdlib only and import-light until `kick` decides to start one: the status line imports it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from xshare.state.paths import file_name, live_dir

# the updater's whole program: the package beside this file first, as bin/xshare does
_PROGRAM = "import sys; sys.path.insert(0, sys.argv[1]); from xshare.live.catch_up import main; main(sys.argv[2:])"


def updater_lock(session_id: str) -> Path:
    return live_dir() / f"{file_name(session_id)}.updater.lock"


def _busy(path: Path) -> bool:
    """True if another process holds the updater lock (checked without waiting, released at once)."""
    if not path.exists():
        return False
    try:
        import fcntl
    except ImportError:  # Windows: no cheap probe; the updater's own lock still keeps it to one
        return False
    with open(path, "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return False


def kick(session_id: str, transcript: str) -> bool:
    """Start a detached update of this session's ledger unless one is running; True if started."""
    if not session_id or not transcript.endswith(".jsonl") or _busy(updater_lock(session_id)):
        return False
    import subprocess

    package_parent = str(Path(__file__).resolve().parents[2])
    options: dict = {"start_new_session": True} if os.name != "nt" else {"creationflags": 0x00000008}
    try:
        subprocess.Popen([sys.executable, "-c", _PROGRAM, package_parent, session_id, transcript],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         close_fds=True, **options)
    except OSError:
        return False
    return True


def main(argv: list[str]) -> None:
    """The updater: one at a time per session (a second one exits at once), silent like the hook."""
    import json

    from xshare.live.hook import run_hook  # in the updater's own process, never the status line's
    from xshare.state.store import locked

    session_id, transcript = argv[0], argv[1]
    with locked(updater_lock(session_id), blocking=False) as acquired:
        if acquired:
            run_hook(json.dumps({"session_id": session_id, "transcript_path": transcript,
                                 "hook_event_name": "StatusLineCatchUp"}).encode())
