"""xshare's own memory of every session it measured, so a report still counts a session after its
agent deleted the transcript (Claude Code keeps 30 days by default).

The history is one JSON-lines file under the state folder, appended to (the hook adds a line per
turn without rewriting anything) and rewritten whole when a report finds it much longer than the
sessions it holds. A line is a session row: counts, timestamps, ids, the model; never text or paths.
The last line for an agent+session id wins, unless an earlier line of the same tokenizer and method
had seen later activity (a stale live state arriving late).

The file is input like any other: a line a report could not sum (plausible.row_problem) is skipped and
reported, never fatal. Reading takes no lock (appends are whole lines, a rewrite is a rename), so a
read-only state folder still gives every remembered session; adding and rewriting lock.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from xshare.ids import normal_id
from xshare.plausible import row_problem
from xshare.store import atomic_write, dumps, loads, locked, read_regular, state_dir
from xshare.timestamps import session_time

# replay detail the report never reads after the family is complete: kept out to keep the file small
_LEFT_OUT = ("cost_state", "compaction_snapshots")
_COMPACT_ABOVE = 2.0  # lines per remembered session above which a report rewrites the file
_COMPACT_MIN_LINES = 500


def history_path() -> Path:
    return state_dir() / "history" / "sessions.jsonl"


def _lock_path() -> Path:
    return state_dir() / "history" / "sessions.lock"


def key(row: dict) -> tuple[str, str]:
    """A session's key; its id as a file would hold it, so a live row and a remembered one match."""
    return (str(row.get("agent")), normal_id(str(row.get("id"))))


def slim(row: dict) -> dict:
    """The row as remembered: everything a report sums, nothing it does not."""
    return {name: value for name, value in row.items() if name not in _LEFT_OUT}


def _wins(old: dict, new: dict) -> bool:
    """A later line replaces an earlier one, unless both were counted alike and the earlier saw more."""
    if (old.get("tokenizer"), old.get("method")) != (new.get("tokenizer"), new.get("method")):
        return True
    before = session_time(old.get("last_activity") or old.get("ended_at"))  # a line dated 9999 never wins
    after = session_time(new.get("last_activity") or new.get("ended_at"))
    return before is None or after is None or after >= before


def _parse(data: bytes) -> tuple[dict[tuple[str, str], dict], int, int]:
    """The remembered rows by key, how many lines the file holds, and how many of them were refused
    (a torn last line, an append in progress, is skipped without counting)."""
    rows: dict[tuple[str, str], dict] = {}
    lines = refused = 0
    pieces = data.splitlines()
    for index, line in enumerate(pieces):
        if not line.strip():
            continue
        lines += 1
        try:
            row = loads(line)
        except ValueError:
            row = None
        if row_problem(row) is not None:
            torn = row is None and index == len(pieces) - 1 and not data.endswith(b"\n")
            refused += 0 if torn else 1
            continue
        old = rows.get(key(row))
        if old is None or _wins(old, row):
            rows[key(row)] = row
    return rows, lines, refused


def remember(rows: Iterable[dict]) -> int:
    """Append these sessions' rows; returns how many were written. Never raises on a full or read-only
    disk: the report goes on, saying on stderr that the history could not be kept."""
    lines = [dumps(slim(row)) + b"\n" for row in rows if isinstance(row.get("id"), str)]
    if not lines:
        return 0
    data = b"".join(lines)
    try:
        with locked(_lock_path()), _open_for_append() as handle:
            if handle.tell() and (handle.seek(handle.tell() - 1), handle.read(1))[1] != b"\n":
                data = b"\n" + data  # a line torn by a crash must not swallow the next one
            handle.write(data)
    except OSError as error:
        print(f"xshare: could not add to the history ({error.strerror or error}); these sessions are "
              "remembered only while their transcripts last", file=sys.stderr)
        return 0
    return len(lines)


def _open_for_append() -> BinaryIO:
    """The history file, created private (as atomic_write's); a FIFO or device in its place is refused
    (O_NONBLOCK: opening a FIFO would otherwise wait)."""
    fd = os.open(history_path(), os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o600)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return os.fdopen(fd, "a+b")


def recall() -> dict[tuple[str, str], dict]:
    """Every remembered session's row by agent+session id, compacting the file when it has grown."""
    try:
        data = read_regular(history_path())
    except FileNotFoundError:
        return {}
    except OSError as error:
        print(f"xshare: could not read the history ({error.strerror or error}); only sessions whose "
              "transcripts exist are counted", file=sys.stderr)
        return {}
    rows, lines, refused = _parse(data)
    if refused:
        print(f"xshare: the history: {refused:,} line{'s' if refused != 1 else ''} with impossible figures or "
              "wrong types skipped", file=sys.stderr)
    if lines > _COMPACT_MIN_LINES and lines > _COMPACT_ABOVE * len(rows):
        _compact()
    return rows


def _compact() -> None:
    """Rewrite the file with one line per session: read again under the lock, so no append is lost. A
    state folder that cannot be written keeps its longer file; reading it is all a report needs."""
    with contextlib.suppress(OSError), locked(_lock_path()):
        rows = _parse(read_regular(history_path()))[0]
        atomic_write(history_path(), b"".join(dumps(row) + b"\n" for row in rows.values()))


def keep(measured: list[dict]) -> dict[tuple[str, str], dict]:
    """Remember the sessions just measured whose row is new or changed; returns the whole history."""
    remembered = recall()
    changed = [slim(row) for row in measured if remembered.get(key(row)) != slim(row)]
    remember(changed)
    remembered.update((key(row), row) for row in changed)
    return remembered


def gone_sessions(measured: list[dict], remembered: dict[tuple[str, str], dict],
                  tokenizer: str) -> tuple[list[dict], list[dict]]:
    """Remembered sessions no transcript or database holds any more: those counted with `tokenizer`,
    and those counted with another (never pooled with them)."""
    present = {key(row) for row in measured}
    gone = [row for found, row in remembered.items() if found not in present]
    return ([row for row in gone if row.get("tokenizer") == tokenizer],
            [row for row in gone if row.get("tokenizer") != tokenizer])
