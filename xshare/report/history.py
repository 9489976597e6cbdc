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

import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, Literal

from xshare.agents.common.packed import PackedRows
from xshare.measure.ids import normal_id
from xshare.measure.plausible import row_problem
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import session_time
from xshare.state.private import open_private
from xshare.state.store import atomic_write, dumps, loads, locked, open_regular, state_dir

# replay detail the report never reads after the family is complete: kept out to keep the file small
_LEFT_OUT: tuple[Literal["cost_state"], Literal["compaction_snapshots"]] = ("cost_state", "compaction_snapshots")
_COMPACT_ABOVE = 2.0  # lines per remembered session above which a report rewrites the file
_COMPACT_MIN_LINES = 500
_APPEND_EVERY = 10_000  # lines: a report adding many sessions appends them in parts, never all at once


def history_path() -> Path:
    return state_dir() / "history" / "sessions.jsonl"


def _lock_path() -> Path:
    return state_dir() / "history" / "sessions.lock"


def key(row: SessionRow) -> tuple[str, str]:
    """A session's key; its id as a file would hold it, so a live row and a remembered one match."""
    return (str(row.get("agent")), normal_id(str(row.get("id"))))


def slim(row: SessionRow) -> SessionRow:
    """The row as remembered: everything a report sums, nothing it does not."""
    kept = row.copy()
    for name in _LEFT_OUT:
        kept.pop(name, None)
    return kept


def _wins(old: dict, new: dict) -> bool:
    """A later line replaces an earlier one, unless both were counted alike and the earlier saw more."""
    if (old.get("tokenizer"), old.get("method")) != (new.get("tokenizer"), new.get("method")):
        return True
    before = session_time(old.get("last_activity") or old.get("ended_at"))  # a line dated 9999 never wins
    after = session_time(new.get("last_activity") or new.get("ended_at"))
    return before is None or after is None or after >= before


def _parse(lines: Iterable[bytes]) -> tuple[dict[tuple[str, str], bytes], int, int]:
    """The remembered rows by key, each as its line (a third of its dict's memory), how many lines the file
    holds, and how many of them were refused (a torn last line, an append in progress, is skipped without
    counting: only a file's last line can lack its newline)."""
    rows: dict[tuple[str, str], bytes] = {}
    count = refused = 0
    for line in lines:
        if not line.strip():
            continue
        count += 1
        try:
            row = loads(line)
        except ValueError:
            row = None
        if row_problem(row) is not None:
            refused += 0 if row is None and not line.endswith(b"\n") else 1
            continue
        old = rows.get(key(row))
        if old is None or _wins(loads(old), row):
            rows[key(row)] = line.rstrip(b"\r\n")
    return rows, count, refused


class Remembered(Mapping):
    """Remembered sessions' rows by agent+session id, each decoded only when it is asked for."""

    def __init__(self, lines: dict[tuple[str, str], bytes]) -> None:
        self.lines = lines

    def __getitem__(self, found: tuple[str, str]) -> dict:
        return loads(self.lines[found])

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.lines)

    def __len__(self) -> int:
        return len(self.lines)


def _open_for_append() -> BinaryIO:
    """The history file, created private (as atomic_write's); a FIFO or device in its place is refused
    (O_NONBLOCK: opening a FIFO would otherwise wait), and so is a link (open_private)."""
    fd = open_private(history_path(), os.O_RDWR | os.O_APPEND | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return os.fdopen(fd, "a+b")


def _append(lines: list[bytes]) -> bool:
    """Append these lines (each ending in a newline) under the lock; False, said on stderr, if it failed."""
    try:
        with locked(_lock_path()), _open_for_append() as handle:
            if handle.tell() and (handle.seek(handle.tell() - 1), handle.read(1))[1] != b"\n":
                handle.write(b"\n")  # a line torn by a crash must not swallow the next one
            handle.writelines(lines)
    except OSError as error:
        print(f"xshare: could not add to the history ({error.strerror or error}); these sessions are "
              "remembered only while their transcripts last", file=sys.stderr)
        return False
    return True


def remember(rows: Iterable[SessionRow]) -> int:
    """Append these sessions' rows; returns how many were written. Never raises on a full or read-only
    disk: the report goes on, saying on stderr that the history could not be kept."""
    lines = [dumps(slim(row)) + b"\n" for row in rows if isinstance(row.get("id"), str)]
    return len(lines) if lines and _append(lines) else 0


def _read() -> tuple[dict[tuple[str, str], bytes], int, int]:
    """_parse() of the file, a line at a time (never whole in memory); a missing file is empty."""
    try:
        handle = open_regular(history_path())
    except FileNotFoundError:
        return {}, 0, 0
    with handle:
        return _parse(handle)


def recall() -> Remembered:
    """Every remembered session's row by agent+session id, compacting the file when it has grown."""
    try:
        rows, count, refused = _read()
        if count > _COMPACT_MIN_LINES and count > _COMPACT_ABOVE * len(rows):
            del rows  # one reading in memory at a time: the file is read again under the lock
            rows = _compact()
    except OSError as error:
        print(f"xshare: could not read the history ({error.strerror or error}); only sessions whose "
              "transcripts exist are counted", file=sys.stderr)
        return Remembered({})
    if refused:
        print(f"xshare: the history: {refused:,} line{'s' if refused != 1 else ''} with impossible figures or "
              "wrong types skipped", file=sys.stderr)
    return Remembered(rows)


def _compact() -> dict[tuple[str, str], bytes]:
    """The file read again under the lock (so no append is lost) and rewritten with one line per session.
    A state folder that cannot be written keeps its longer file: reading it is all a report needs."""
    try:
        with locked(_lock_path()):
            rows = _read()[0]
            atomic_write(history_path(), (line + b"\n" for line in rows.values()))
            return rows
    except OSError:
        return _read()[0]


def keep(measured: Iterable[SessionRow]) -> Remembered:
    """Remember the sessions just measured whose row is new or changed; returns the remembered sessions
    that were not among them (those a report may count from the history), so no line is held twice."""
    remembered = recall()
    changed: list[bytes] = []
    failed = False
    kept: set[tuple[str, str]] = set()
    for row in measured:
        if not isinstance(row.get("id"), str) or key(row) in kept:
            continue  # of two sessions one id names (two roots' transcript.jsonl), the first is remembered
        kept.add(key(row))
        slimmed, line = slim(row), remembered.lines.pop(key(row), None)
        if line is None or loads(line) != slimmed:
            changed.append(dumps(slimmed) + b"\n")
        if len(changed) >= _APPEND_EVERY and not failed:
            failed = not _append(changed)
            changed = []
    if changed and not failed:
        _append(changed)
    return remembered


def gone_sessions(measured: Iterable[SessionRow], remembered: Remembered,
                  tokenizer: str) -> tuple[PackedRows, PackedRows]:
    """Remembered sessions no transcript or database holds any more: those counted with `tokenizer`,
    and those counted with another (never pooled with them); packed, as the history holds them."""
    present = {key(row) for row in measured}
    same, other = PackedRows(), PackedRows()
    for found, line in remembered.lines.items():
        if found not in present:
            (same if loads(line).get("tokenizer") == tokenizer else other).items.append(line)
    return same, other
