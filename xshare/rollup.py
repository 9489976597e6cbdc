"""A team's rollup: `xshare report --from-rows FILE...` over rows files written on many machines.

The files are read a line at a time and summed per agent/source group, so a million rows need the
memory of their per-session shares (for the medians) and one small number per row (to skip a
session given twice), never the rows themselves. The figures are summarize()'s, field for field.
Rows of different tokenizers are never pooled: the most common tokenizer's rows are summed, the
others counted and named.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from xshare.report import GroupSums, _order
from xshare.store import loads


@dataclass
class Rollup:
    """What the rows files held: groups per tokenizer, and who and what they came from."""
    files: int = 0
    rows: int = 0
    bad_lines: int = 0
    duplicates: int = 0
    outside_window: int = 0
    without_machine: int = 0
    machines: set = field(default_factory=set)
    people: set = field(default_factory=set)
    by_tokenizer: dict = field(default_factory=dict)  # tokenizer -> {(agent, source): GroupSums}

    def tokenizer(self) -> str | None:
        """The tokenizer most sessions were counted with: the one the figures use."""
        counts = {name: sum(g.sessions for g in groups.values()) for name, groups in self.by_tokenizer.items()}
        return max(counts, key=counts.get) if counts else None

    def left_out(self) -> dict[str, int]:
        """Sessions counted with another tokenizer than the figures', by tokenizer."""
        used = self.tokenizer()
        return {name: sum(g.sessions for g in groups.values())
                for name, groups in self.by_tokenizer.items() if name != used}

    def groups(self) -> dict[str, dict]:
        found = self.by_tokenizer.get(self.tokenizer(), {})
        keys = sorted((f"{agent}/{source}", (agent, source)) for agent, source in found)
        return {key: found[pair].figures(*pair) for key, pair in sorted(keys, key=lambda item: _order(item[0]))}

    def to_json(self) -> dict:
        return {"files": self.files, "rows": self.rows, "machines": len(self.machines), "people": len(self.people),
                "unreadable_lines": self.bad_lines, "duplicate_rows": self.duplicates,
                "outside_window": self.outside_window,
                "rows_without_machine_id": self.without_machine, "other_tokenizers": self.left_out()}


def _valid(row: object) -> bool:
    return (isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("agent"), str)
            and isinstance(row.get("billed_tokens"), dict) and isinstance(row.get("api_calls"), int))


def read_rows_files(paths: list[Path], place) -> Rollup:
    """Stream the files' rows into a Rollup; `place(row)` is the window's ('in' counts). A session
    given twice (the same machine's file collected twice) counts once, the first time it is met."""
    rollup, seen = Rollup(), set()
    for path in paths:
        try:
            handle = open(path, "rb")
        except OSError as error:
            print(f"xshare: rows file {path} could not be read ({error.strerror or error})", file=sys.stderr)
            continue
        rollup.files += 1
        with handle:
            for line in handle:
                _take(rollup, seen, line, place)
    return rollup


def _take(rollup: Rollup, seen: set, line: bytes, place) -> None:
    if not line.strip():
        return
    try:
        row = loads(line)
    except ValueError:
        row = None
    if not _valid(row):
        rollup.bad_lines += 1
        return
    machine = row.get("machine")
    identity = hash((machine, row["agent"], row["id"]))
    if identity in seen:
        rollup.duplicates += 1
        return
    seen.add(identity)
    if place(row) != "in":
        rollup.outside_window += 1
        return
    try:
        groups = rollup.by_tokenizer.setdefault(str(row.get("tokenizer")), {})
        group = groups.get((row["agent"], row.get("source")))
        if group is None:
            group = groups[(row["agent"], row.get("source"))] = GroupSums()
        group.add(row)
    except (KeyError, TypeError):
        rollup.bad_lines += 1
        return
    rollup.rows += 1
    if isinstance(machine, str):
        rollup.machines.add(machine)
    else:
        rollup.without_machine += 1  # a rows file written before xshare stamped its rows
    person = row.get("person")
    if isinstance(person, str) or isinstance(machine, str):
        rollup.people.add(f"person:{person}" if isinstance(person, str) else f"machine:{machine}")
