"""A team's rollup: `xshare report --from-rows FILE...` over rows files written on many machines.

The files are read a line at a time and summed per agent/source group, so a million rows need the
memory of their per-session shares (for the medians) and one small number per row (to skip a
session given twice), never the rows themselves. The figures are summarize()'s, field for field.
Rows of different tokenizers are never pooled: the most common tokenizer's rows are summed, the
others counted and named.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, cast

from xshare.measure.plausible import NO_SESSION, NOT_A_ROW, row_problem
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import session_time
from xshare.printing import printable
from xshare.report.render import GroupSums, group_order
from xshare.state.store import loads, open_regular

MAX_LINE = 4 << 20  # bytes; a row is a few KB, one with every compaction's snapshot rarely 100 KB


@dataclass
class Rollup:
    """What the rows files held: groups per tokenizer, and who and what they came from."""
    files: int = 0
    rows: int = 0
    bad_lines: int = 0
    impossible: Counter = field(default_factory=Counter)  # rows refused by plausible.row_problem, by why
    duplicates: int = 0
    outside_window: int = 0
    without_machine: int = 0
    machines: set = field(default_factory=set)
    people: set = field(default_factory=set)
    by_tokenizer: dict = field(default_factory=dict)  # tokenizer -> {(agent, source): GroupSums}

    def tokenizer(self) -> str | None:
        """The tokenizer most sessions were counted with: the one the figures use."""
        counts = {name: sum(g.sessions for g in groups.values()) for name, groups in self.by_tokenizer.items()}
        return max(counts, key=counts.__getitem__) if counts else None

    def left_out(self) -> dict[str, int]:
        """Sessions counted with another tokenizer than the figures', by tokenizer."""
        used = self.tokenizer()
        return {name: sum(g.sessions for g in groups.values())
                for name, groups in self.by_tokenizer.items() if name != used}

    def groups(self) -> dict[str, dict]:
        found = self.by_tokenizer.get(self.tokenizer(), {})
        keys = sorted((f"{agent}/{source}", (agent, source)) for agent, source in found)
        return {key: found[pair].figures(*pair) for key, pair in sorted(keys, key=lambda item: group_order(item[0]))}

    def to_json(self) -> dict:
        return {"files": self.files, "rows": self.rows, "machines": len(self.machines), "people": len(self.people),
                "unreadable_lines": self.bad_lines, "impossible_rows": sum(self.impossible.values()),
                "duplicate_rows": self.duplicates,
                "outside_window": self.outside_window,
                "rows_without_machine_id": self.without_machine, "other_tokenizers": self.left_out()}


def read_rows_files(paths: list[Path], place: Callable[[SessionRow], str]) -> Rollup:
    """Stream the files' rows into a Rollup; `place(row)` is the window's ('in' counts). A session given
    more than once (the same machine's file collected on two nights) counts once, in its newest version
    (see `_rank`), whatever the order of the files and lines. Two passes, so no row is held in memory:
    the first checks every row and finds where each session's newest version is, the second sums those."""
    rollup, plausible = Rollup(), 0
    newest: dict[int, int] = {}  # by session: where its newest version is (_rank, file, line)
    stamps: list = []
    for path in paths:
        stamp, found = _scan(path, len(stamps), newest, rollup)
        if stamp is not None:
            rollup.files += 1
            plausible += found
            stamps.append((path, stamp))  # a file named twice is read twice: its rows are then duplicates
    rollup.duplicates = plausible - len(newest)
    wanted: dict[int, set[int]] = {}
    while newest:  # emptied as it goes: the ranks' big numbers are freed before the line numbers pile up
        value = newest.popitem()[1]
        wanted.setdefault(value >> _LINE_BITS & _FILE_MASK, set()).add(value & _LINE_MASK)
    for index, (path, stamp) in enumerate(stamps):
        if _sum(path, wanted.get(index, set()), rollup, place) != stamp:
            print(f"xshare: rows file {printable(path)} changed while it was read; some of its sessions may be missing",
                  file=sys.stderr)
    return rollup


_LINE_BITS, _FILE_BITS = 40, 24  # where a row is: its file's index and its line's, under its rank
_LINE_MASK, _FILE_MASK = (1 << _LINE_BITS) - 1, (1 << _FILE_BITS) - 1


def _scan(path: Path, index: int, newest: dict[int, int], rollup: Rollup) -> tuple[tuple | None, int]:
    """The first pass over one file: count what is refused, keep each session's newest version (its rank
    and place) in `newest`. Returns the file's stamp (None: it cannot be read) and its plausible rows."""
    try:
        handle = open_regular(path)
    except OSError as error:
        print(f"xshare: rows file {printable(path)} could not be read ({printable(error.strerror or error)})",
              file=sys.stderr)  # a teammate's file name, globbed: escaped as every printed field
        return None, 0
    found = 0
    with handle:
        for number, line in enumerate(_lines(handle)):
            row = _row(line)
            problem = row_problem(row) if row is not None else NOT_A_ROW
            if row is None or problem in (NOT_A_ROW, NO_SESSION):
                rollup.bad_lines += 1
            elif problem is not None:
                rollup.impossible[problem] += 1
            else:
                found += 1
                identity = hash((row.get("machine"), row["agent"], row["id"]))
                value = (_rank(row, line) << _FILE_BITS | index) << _LINE_BITS | number
                if value > newest.get(identity, -1):
                    newest[identity] = value
        return _stamp(handle), found


def _sum(path: Path, wanted: set[int], rollup: Rollup, place: Callable[[SessionRow], str]) -> tuple | None:
    """The second pass: sum the rows on the `wanted` lines. Returns the file's stamp, None if unreadable."""
    try:
        handle = open_regular(path)
    except OSError:
        return None
    with handle:
        for number, line in enumerate(_lines(handle)):
            if number in wanted:
                row = _row(line)
                if row is not None and row_problem(row) is None:  # the same line as in the first pass
                    _take(rollup, row, place)
        return _stamp(handle)


def _stamp(handle: BinaryIO) -> tuple:
    found = os.fstat(handle.fileno())
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


def _rank(row: SessionRow, line: bytes) -> int:
    """How new a version of a session is, as one number: its last activity (`last_activity`, else
    `ended_at`; none is oldest), then its calls, then its billed prompt (a session only grows), then a
    digest of the line itself, so that of two versions alike so far the same one wins in any order."""
    moment = session_time(row.get("last_activity")) or session_time(row.get("ended_at"))  # a 9999 row never wins
    activity = int(moment.timestamp() * 1000) + (1 << 48) if moment else 0  # ms, shifted past year 1
    digest = int.from_bytes(hashlib.sha256(line).digest()[:8], "little")
    return (((activity << 24 | row["api_calls"]) << 52 | row["prompt_tokens_billed"]) << 64) | digest


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    """The file's non-blank lines, up to its size when the read began (a link to /proc/self/pagemap is
    regular by stat and never ends); a line longer than MAX_LINE (no row is) is given as b"" (unreadable),
    read past in pieces rather than held whole."""
    end = os.fstat(handle.fileno()).st_size

    def readline(most: int) -> bytes:
        return handle.readline(max(0, min(most, end - handle.tell())))

    while True:
        line = readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = readline(MAX_LINE)
            yield b""
        elif line.strip():
            yield line.strip()


def _row(line: bytes) -> SessionRow | None:
    try:
        row = loads(line)
    except ValueError:
        return None
    return cast(SessionRow, row) if isinstance(row, dict) else None  # not yet checked: row_problem does


def _take(rollup: Rollup, row: SessionRow, place: Callable[[SessionRow], str]) -> None:
    if place(row) != "in":
        rollup.outside_window += 1
        return
    groups = rollup.by_tokenizer.setdefault(str(row.get("tokenizer")), {})
    group = groups.get((row["agent"], row.get("source")))
    if group is None:
        group = groups[(row["agent"], row.get("source"))] = GroupSums()
    group.add(row)
    rollup.rows += 1
    machine, person = row.get("machine"), row.get("person")
    if machine is not None:
        rollup.machines.add(machine)
    else:
        rollup.without_machine += 1  # a rows file written before xshare stamped its rows
    if person is not None or machine is not None:
        rollup.people.add(f"person:{person}" if person is not None else f"machine:{machine}")
