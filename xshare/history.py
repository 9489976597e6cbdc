"""xshare's own memory of every session it measured, so a report still counts a session after its
agent deleted the transcript (Claude Code keeps 30 days by default).

The history is one JSON-lines file under the state folder, appended to (the hook adds a line per
turn without rewriting anything) and rewritten whole when a report finds it much longer than the
sessions it holds. A line is a session row: counts, timestamps, ids, the model; never text or paths.
The last line for an agent+session id wins, unless an earlier line of the same tokenizer and method
had seen later activity (a stale live state arriving late).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from xshare.packed import PackedRows
from xshare.report import parse_time
from xshare.store import atomic_write, dumps, loads, locked, state_dir

# replay detail the report never reads after the family is complete: kept out to keep the file small
_LEFT_OUT = ("cost_state", "compaction_snapshots")
_COMPACT_ABOVE = 2.0  # lines per remembered session above which a report rewrites the file
_COMPACT_MIN_LINES = 500
_APPEND_EVERY = 10_000  # lines: a report adding many sessions appends them in parts, never all at once


def history_path() -> Path:
    return state_dir() / "history" / "sessions.jsonl"


def _lock_path() -> Path:
    return state_dir() / "history" / "sessions.lock"


def key(row: dict) -> tuple[str, str]:
    return (str(row.get("agent")), str(row.get("id")))


def slim(row: dict) -> dict:
    """The row as remembered: everything a report sums, nothing it does not."""
    return {name: value for name, value in row.items() if name not in _LEFT_OUT}


def _wins(old: dict, new: dict) -> bool:
    """A later line replaces an earlier one, unless both were counted alike and the earlier saw more."""
    if (old.get("tokenizer"), old.get("method")) != (new.get("tokenizer"), new.get("method")):
        return True
    before = parse_time(old.get("last_activity") or old.get("ended_at"))
    after = parse_time(new.get("last_activity") or new.get("ended_at"))
    return before is None or after is None or after >= before


def _parse(lines: Iterable[bytes]) -> tuple[dict[tuple[str, str], bytes], int]:
    """The remembered rows by key, each as its line, and how many lines the file holds (a torn last line
    is skipped). Lines, not dicts: a line is a third of its dict's memory."""
    rows: dict[tuple[str, str], bytes] = {}
    count = 0
    for line in lines:
        if not line.strip():
            continue
        count += 1
        try:
            row = loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            continue
        old = rows.get(key(row))
        if old is None or _wins(loads(old), row):
            rows[key(row)] = line.rstrip(b"\r\n")
    return rows, count


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


def _append(lines: list[bytes]) -> bool:
    """Append these lines (each ending in a newline) under the lock; False, said on stderr, if it failed."""
    try:
        with locked(_lock_path()), os.fdopen(os.open(history_path(), os.O_RDWR | os.O_APPEND | os.O_CREAT,
                                                     0o600), "a+b") as handle:  # private, as atomic_write's
            if handle.tell() and (handle.seek(handle.tell() - 1), handle.read(1))[1] != b"\n":
                handle.write(b"\n")  # a line torn by a crash must not swallow the next one
            handle.writelines(lines)
    except OSError as error:
        print(f"xshare: could not add to the history ({error.strerror or error}); these sessions are "
              "remembered only while their transcripts last", file=sys.stderr)
        return False
    return True


def remember(rows: Iterable[dict]) -> int:
    """Append these sessions' rows; returns how many were written. Never raises on a full or read-only
    disk: the report goes on, saying on stderr that the history could not be kept."""
    lines = [dumps(slim(row)) + b"\n" for row in rows if isinstance(row.get("id"), str)]
    return len(lines) if lines and _append(lines) else 0


def recall() -> Remembered:
    """Every remembered session's row by agent+session id, compacting the file when it has grown."""
    try:
        with locked(_lock_path()):
            try:
                handle = open(history_path(), "rb")
            except FileNotFoundError:
                return Remembered({})
            with handle:  # a line at a time: the file is never whole in memory
                rows, count = _parse(handle)
            if count > _COMPACT_MIN_LINES and count > _COMPACT_ABOVE * len(rows):
                atomic_write(history_path(), (line + b"\n" for line in rows.values()))
            return Remembered(rows)
    except OSError as error:
        print(f"xshare: could not read the history ({error.strerror or error}); only sessions whose "
              "transcripts exist are counted", file=sys.stderr)
        return Remembered({})


def keep(measured: Iterable[dict]) -> Remembered:
    """Remember the sessions just measured whose row is new or changed; returns the remembered sessions
    that were not among them (those a report may count from the history), so no line is held twice."""
    remembered = recall()
    changed: list[bytes] = []
    failed = False
    for row in measured:
        if not isinstance(row.get("id"), str):
            continue
        slimmed, line = slim(row), remembered.lines.pop(key(row), None)
        if line is None or loads(line) != slimmed:
            changed.append(dumps(slimmed) + b"\n")
        if len(changed) >= _APPEND_EVERY and not failed:
            failed = not _append(changed)
            changed = []
    if changed and not failed:
        _append(changed)
    return remembered


def gone_sessions(measured: Iterable[dict], remembered: Remembered,
                  tokenizer: str) -> tuple[PackedRows, PackedRows]:
    """Remembered sessions no transcript or database holds any more: those counted with `tokenizer`,
    and those counted with another (never pooled with them); packed, as the history holds them."""
    present = {key(row) for row in measured}
    same, other = PackedRows(), PackedRows()
    for found, line in remembered.lines.items():
        if found not in present:
            (same if loads(line).get("tokenizer") == tokenizer else other).items.append(line)
    return same, other
