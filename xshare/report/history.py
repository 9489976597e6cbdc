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

A report keeps what it measured (`keep`), then notes in `kept.json` the file as it left it (device, inode,
size, modification time), a digest of the rows it kept and where the other sessions' lines lie: the next
report that measures the same rows, the file untouched, takes those lines without reading the rest (a
fifth of a warm report over two thousand sessions).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, Literal, NamedTuple

from xshare import METHOD_VERSION
from xshare.agents.common.packed import PackedRows
from xshare.measure.ids import normal_id
from xshare.measure.plausible import row_problem
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import session_time
from xshare.state.private import open_private
from xshare.state.store import atomic_write, dumps, loads, locked, open_regular, read_regular, state_dir

# replay detail the report never reads after the family is complete: kept out to keep the file small
_LEFT_OUT: tuple[Literal["cost_state"], Literal["compaction_snapshots"]] = ("cost_state", "compaction_snapshots")
_COMPACT_ABOVE = 2.0  # lines per remembered session above which a report rewrites the file
_COMPACT_MIN_LINES = 500
_APPEND_EVERY = 10_000  # lines: a report adding many sessions appends them in parts, never all at once


def history_path() -> Path:
    return state_dir() / "history" / "sessions.jsonl"


def _lock_path() -> Path:
    return state_dir() / "history" / "sessions.lock"


def _kept_path() -> Path:
    return state_dir() / "history" / "kept.json"


_KEPT_LAYOUT = 1


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


class Parsed(NamedTuple):
    rows: dict[tuple[str, str], bytes]  # the winning line of each session, without its newline
    places: dict[tuple[str, str], tuple[int, int]]  # where each winning line lies: offset, length
    line_count: int  # lines the file holds
    refused: int  # of them, lines with impossible figures or wrong types
    size: int  # bytes read


def _parse(lines: Iterable[bytes]) -> Parsed:
    """The remembered rows by key, each as its line (a third of its dict's memory) and where it lies, how
    many lines the file holds, and how many of them were refused (a torn last line, an append in progress,
    is skipped without counting: only a file's last line can lack its newline)."""
    rows: dict[tuple[str, str], bytes] = {}
    places: dict[tuple[str, str], tuple[int, int]] = {}
    count = refused = position = 0
    for line in lines:
        start, position = position, position + len(line)
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
            rows[key(row)] = kept = line.rstrip(b"\r\n")
            places[key(row)] = (start, len(kept))
    return Parsed(rows, places, count, refused, position)


class Remembered(Mapping):
    """Remembered sessions' rows by agent+session id, each decoded only when it is asked for; `parsed`: the
    file as read whole (None when it was compacted, or taken from kept.json)."""

    def __init__(self, lines: dict[tuple[str, str], bytes], parsed: Parsed | None = None) -> None:
        self.lines = lines
        self.parsed = parsed

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


def _read() -> Parsed:
    """_parse() of the file, a line at a time (never whole in memory); a missing file is empty."""
    try:
        handle = open_regular(history_path())
    except FileNotFoundError:
        return Parsed({}, {}, 0, 0, 0)
    with handle:
        return _parse(handle)


def recall() -> Remembered:
    """Every remembered session's row by agent+session id, compacting the file when it has grown."""
    try:
        parsed = _read()
        refused = parsed.refused
        if parsed.line_count > _COMPACT_MIN_LINES and parsed.line_count > _COMPACT_ABOVE * len(parsed.rows):
            del parsed  # one reading in memory at a time: the file is read again under the lock
            remembered = Remembered(_compact())
        else:
            remembered = Remembered(parsed.rows, parsed)
    except OSError as error:
        print(f"xshare: could not read the history ({error.strerror or error}); only sessions whose "
              "transcripts exist are counted", file=sys.stderr)
        return Remembered({})
    _say_refused(refused)
    return remembered


def _say_refused(refused: int) -> None:
    if refused:
        print(f"xshare: the history: {refused:,} line{'s' if refused != 1 else ''} with impossible figures or "
              "wrong types skipped", file=sys.stderr)


def _compact() -> dict[tuple[str, str], bytes]:
    """The file read again under the lock (so no append is lost) and rewritten with one line per session.
    A state folder that cannot be written keeps its longer file: reading it is all a report needs."""
    try:
        with locked(_lock_path()):
            rows = _read().rows
            atomic_write(history_path(), (line + b"\n" for line in rows.values()))
            return rows
    except OSError:
        return _read().rows


def keep(measured: Iterable[SessionRow]) -> Remembered:
    """Remember the sessions just measured whose row is new or changed; returns the remembered sessions
    that were not among them (those a report may count from the history), so no line is held twice."""
    digest = _digest(measured) if isinstance(measured, PackedRows) else None
    unchanged = _kept_before(digest) if digest else None
    if unchanged is not None:
        return unchanged
    remembered = recall()
    changed: list[bytes] = []
    failed = False
    added = 0
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
            added += sum(map(len, changed))
            changed = []
    if changed and not failed:
        failed = not _append(changed)
        added += sum(map(len, changed))
    if digest and not failed:
        _note_kept(digest, remembered, added)
    return remembered


def _digest(measured: PackedRows) -> str:
    """What `keep` depends on, in a few bytes: every row measured, in order, and how it keeps them."""
    return measured.digest(hashlib.blake2b(f"{_KEPT_LAYOUT} {METHOD_VERSION} {_LEFT_OUT}".encode(),
                                           digest_size=16)).hexdigest()


def _file_stamp() -> list[int] | None:
    try:
        status = os.stat(history_path())
    except OSError:
        return None
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns]


def _note_kept(digest: str, remembered: Remembered, added: int) -> None:
    """The file as `keep` left it and where the other sessions' lines lie, for the next report. Not noted
    when the file was compacted, or grew by more than this report added (another process appended)."""
    parsed, found = remembered.parsed, _file_stamp()
    if parsed is None or found is None or found[2] != parsed.size + added:
        return
    other = [[*session, *parsed.places[session]] for session in remembered.lines]
    note = {"layout": _KEPT_LAYOUT, "measured": digest, "file": found, "refused": parsed.refused, "other": other}
    try:
        atomic_write(_kept_path(), dumps(note))
    except OSError:
        pass  # the next report reads the file whole, as before


def _kept_before(digest: str) -> Remembered | None:
    """The remembered sessions not among those measured, when the last report kept these same rows and the
    file is as it left it: its lines, taken where they lie (None: keep reads the file)."""
    try:
        note = loads(read_regular(_kept_path()))
        if (not isinstance(note, dict) or note.get("layout") != _KEPT_LAYOUT or note.get("measured") != digest
                or note.get("file") != _file_stamp()):
            return None
        lines = {}
        with open_regular(history_path()) as handle:
            for agent, session, offset, length in note["other"]:
                handle.seek(offset)
                lines[(agent, session)] = line = handle.read(length)
                row = loads(line)  # checked as when the file is read whole: the note is input too
                if row_problem(row) is not None or key(row) != (agent, session):
                    return None
    except (OSError, ValueError, TypeError, KeyError):
        return None
    _say_refused(note.get("refused") or 0)
    return Remembered(lines)


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
