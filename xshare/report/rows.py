"""The per-session rows file: read it, merge newly measured sessions into it, write it whole.

A file the user names is written only if it is empty or a rows file already (its first line an xshare row):
a settings.json, a CSV or notes given to --rows by mistake are left as they are. Two `collect` runs on one
file merge one after the other, under a lock on the file itself, so neither loses the other's sessions."""

from __future__ import annotations

import errno
import sys
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from xshare.agents.common.packed import PackedRows
from xshare.measure.plausible import row_problem
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import session_time
from xshare.state.store import atomic_write, dumps, loads, locked_file, open_regular

NOT_ROWS = "it is not a rows file (its first line is no session row of xshare's); left as it is"
FIRST_LINE = 1 << 20  # a row is a few KB: a first line longer than this is no row


def write_rows(path: Path, rows: Iterable[SessionRow] | PackedRows) -> None:
    """One JSON line per session, replacing the file (atomically: a reader never sees half of it); its
    folder must exist, as for any path the user names. Written a row at a time, never whole in memory."""
    lines = ((item + b"\n" for item in rows.items) if isinstance(rows, PackedRows)
             else (dumps(row) + b"\n" for row in rows))
    atomic_write(path, lines, make_folders=False)


def not_rows(path: Path) -> str | None:
    """Why `path` must not be replaced by rows (NOT_ROWS), or None: missing, empty, or its first line is a
    session row (of any version: an agent and an id, whatever its figures)."""
    try:
        handle = open_regular(path)
    except FileNotFoundError:
        return None
    with handle:
        first = b""
        while not first.strip():
            first = handle.readline(FIRST_LINE)
            if not first:
                return None  # empty, or blank lines only
    try:
        row = loads(first)
    except ValueError:
        return NOT_ROWS
    is_row = isinstance(row, dict) and isinstance(row.get("agent"), str) and isinstance(row.get("id"), str)
    return None if is_row else NOT_ROWS


def merge_into(path: Path, measured: Iterable[SessionRow]) -> tuple[PackedRows, int, int]:
    """merge_packed() of the file and these rows, written back while no other run merges into it; the
    merged rows, how many added and how many replaced. OSError when it cannot be written (or has become
    something other than a rows file since it was checked)."""
    with locked_file(path):
        why = not_rows(path)
        if why:
            raise OSError(errno.EEXIST, why, str(path))
        merged, added, replaced = merge_packed(read_packed(path), measured)
        write_rows(path, merged)
    return merged, added, replaced


def read_rows(path: Path) -> list[SessionRow]:
    """The rows already recorded; a missing file is empty, a bad line (unreadable, or a row the report
    could not sum: plausible.row_problem) is skipped and reported, and left out of the file rewritten."""
    return list(read_packed(path))


def read_packed(path: Path) -> PackedRows:
    """read_rows(), each row kept as its line (a third of its dict's memory)."""
    rows, bad = PackedRows(), 0
    try:
        handle = open_regular(path)
    except FileNotFoundError:
        return rows
    with handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                row = loads(line)
            except ValueError:
                row = None
            if row_problem(row) is None:
                rows.items.append(line.rstrip(b"\r\n"))
            else:
                bad += 1
    if bad:
        print(f"xshare: rows file: {bad} unreadable line{'s' if bad != 1 else ''} dropped (not a row, or a row "
              "with impossible figures or wrong types)", file=sys.stderr)
    return rows


def _activity(row: SessionRow) -> datetime | None:
    """When a row's session last wrote; rows from before `last_activity` fall back to `ended_at`."""
    return session_time(row.get("last_activity")) or session_time(row.get("ended_at"))  # a 9999 row is replaced


def merge_rows(recorded: list[SessionRow], measured: Iterable[SessionRow]) -> tuple[list[SessionRow], int, int]:
    """Append new sessions and replace those that have written since their row was recorded.

    A recorded row with no activity time at all is replaced once more, so it gains one.
    Returns the merged rows, how many were added and how many replaced.
    """
    merged, added, replaced = merge_packed(PackedRows(dumps(row) for row in recorded), measured)
    return list(merged), added, replaced


def merge_packed(recorded: PackedRows, measured: Iterable[SessionRow]) -> tuple[PackedRows, int, int]:
    """merge_rows() over packed rows: only a row compared is decoded."""
    merged: dict[tuple, bytes] = {}
    for item, row in recorded.pairs():
        merged[(row.get("agent"), row["id"])] = item
    added = replaced = 0
    for row in measured:
        key = (row.get("agent"), row["id"])
        old = merged.get(key)
        if old is None:
            added += 1
        else:
            before, after = _activity(loads(old)), _activity(row)
            if before is not None and (after is None or after <= before):
                continue
            replaced += 1
        merged[key] = dumps(row)
    return PackedRows(merged.values()), added, replaced
