"""What measuring Claude Code's transcripts came to, kept whole: a report over the same files as the last one, none
changed, takes it in one read instead of checking every entry of the rows cache, settling copies and completing
families again (a third of a repeated report over two thousand transcripts).

One file: a header line (layout, method, tokenizer, the stamp of the files measured: each one's path, size and
modification time, in a digest; and the rows cache's device, inode, size and time), a line of what settling
decided (the calls each file holds that another file bills, the files that only copy another's session, the
problems of the files read), a line of each row's times as the report's window places it (measure/row.py
PLACED_BY: the window need not decode the rows), then one line per row as the report passes them on: completed
with their families' unrecorded calls, copies left out. Any other files (one more, one grown, one gone), another
tokenizer or method, a rows cache written since, or a file that does not read whole: not taken, and the rows
cache answers as before.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from xshare import METHOD_VERSION
from xshare.agents.claude_code import rows_cache
from xshare.measure.row import PLACED_BY
from xshare.state.store import atomic_write, dumps, loads, open_regular, state_dir

_LAYOUT = 1


class Outcome(NamedTuple):
    rows: list[bytes]  # each row's JSON, in the files' order
    copied: dict[str, frozenset[int]]  # path key -> the calls (digests) it holds that another file bills
    copy_files: frozenset[str]  # path keys of the files that only copy another file's session
    problems: Counter  # the problems of the files read, and the copies counted once
    places: list[list | None] | None = None  # each row's PLACED_BY values (kept: taken from the rows when None)


def outcome_file() -> Path:
    return state_dir() / "cache" / "claude-outcome.jsonl"


def _header(tokenizer: str, stamp: str, cache: list[int] | None, rows: int) -> bytes:
    """`stamp`: the files measured (rows_cache.files_stamp); `cache`: the rows cache beside it (_rows_cache_stamp)."""
    return dumps({"layout": _LAYOUT, "method": METHOD_VERSION, "tokenizer": tokenizer, "files": stamp,
                  "cache": cache, "rows": rows})


def _rows_cache_stamp() -> list[int] | None:
    """The rows cache as the outcome was made beside it (device, inode, size, time): the outcome is a view of that
    cache, so a cache deleted or written since (an upgrade, another report) leaves it out of date."""
    try:
        status = os.stat(rows_cache.cache_file())
    except OSError:
        return None
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns]


def recall(tokenizer: str, stamp: str) -> Outcome | None:
    """The outcome kept for exactly these files (their stamp) with this tokenizer; None for any other. Read a line
    at a time: the rows are held once, as the report holds them, never the file whole beside them."""
    cache = _rows_cache_stamp()
    try:
        with open_regular(outcome_file()) as handle:
            head = handle.readline()
            if not head.startswith(_header(tokenizer, stamp, cache, 0).partition(b',"rows":')[0]):
                return None  # other files, tokenizer or method: the rows are not read
            settled, places = handle.readline(), handle.readline()
            rows = list(handle)
    except OSError:
        return None
    if rows and rows[-1][-1:] != b"\n":
        return None  # a file cut short
    for index, row in enumerate(rows):  # in place: each line's bytes freed as its row's are made
        rows[index] = row[:-1]
    if head != _header(tokenizer, stamp, cache, len(rows)) + b"\n" or not all(row[:1] == b"{" for row in rows):
        return None
    try:
        settled, places = loads(settled), loads(places)
        if not isinstance(places, list) or len(places) != len(rows) or any(
                not isinstance(known, list) or len(known) != len(PLACED_BY) for known in places):
            return None
        return Outcome(rows, {str(key): frozenset(map(int, calls)) for key, calls in settled["copied"].items()},
                       frozenset(map(str, settled["copy_files"])), Counter(settled["problems"]), places)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def keep(tokenizer: str, stamp: str, outcome: Outcome) -> None:
    """The outcome of measuring these files, for the next report over the same (a failed write is no loss: that
    report checks the rows cache as before)."""
    settled = {"copied": {key: sorted(calls) for key, calls in outcome.copied.items()},
               "copy_files": sorted(outcome.copy_files), "problems": dict(outcome.problems)}
    places = outcome.places if outcome.places is not None else [
        [row.get(key) for key in PLACED_BY] for row in map(loads, outcome.rows)]

    def lines() -> Iterable[bytes]:
        header = _header(tokenizer, stamp, _rows_cache_stamp(), len(outcome.rows))
        yield header + b"\n" + dumps(settled) + b"\n" + dumps(places) + b"\n"
        for row in outcome.rows:
            yield row + b"\n"

    try:
        atomic_write(outcome_file(), lines())
    except OSError:
        pass
