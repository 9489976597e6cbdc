"""A team's rollup: `xshare report --from-rows FILE...` over rows files written on many machines.

The files are read a line at a time and summed per agent/source group, so a million rows need the
memory of their per-session shares (for the medians) and one small number per row (to skip a
session given twice), never the rows themselves. The figures are summarize()'s, field for field.
Rows of different tokenizers are never pooled: the most common tokenizer's rows are summed, the
others counted and named.
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from xshare.ledger import CATEGORIES, REREAD, share
from xshare.report import _order, reading
from xshare.store import loads


@dataclass
class _Group:
    sessions: int = 0
    with_calls: int = 0
    api_calls: int = 0
    prompt: int = 0
    context: int = 0
    unrecorded_calls: int = 0
    unrecorded_prompt: int = 0
    usage_unknown: int = 0
    tasks: Counter = field(default_factory=Counter)
    billed: list = field(default_factory=lambda: [0] * len(CATEGORIES))
    first_time: list = field(default_factory=lambda: [0] * len(CATEGORIES))
    shares: list = field(default_factory=list)

    def add(self, row: dict) -> None:
        """Raises KeyError or TypeError on a row missing a figure or holding a non-number, before any
        sum changes (the row is then counted as unreadable)."""
        billed = [row["billed_tokens"][category] for category in CATEGORIES]
        first = [row["first_time_tokens"][category] for category in CATEGORIES]
        calls = row["api_calls"]
        sum(billed) + sum(first) + calls + row["prompt_tokens_billed"] + row["context_tokens"]
        sum(row.get(name, 0) for name in ("unrecorded_calls", "unrecorded_prompt_tokens"))
        self.sessions += 1
        self.with_calls += 1 if calls else 0
        self.api_calls += calls
        self.prompt += row["prompt_tokens_billed"]
        self.context += row["context_tokens"]
        self.unrecorded_calls += row.get("unrecorded_calls", 0)
        self.unrecorded_prompt += row.get("unrecorded_prompt_tokens", 0)
        self.usage_unknown += 1 if row.get("usage_unknown") else 0
        tasks = row.get("unrecorded_tasks")
        if isinstance(tasks, dict) and all(type(count) is int for count in tasks.values()):
            self.tasks.update(tasks)
        for index in range(len(CATEGORIES)):
            self.billed[index] += billed[index]
            self.first_time[index] += first[index]
        value = row["exploration_share_of_context"]
        if isinstance(value, (int, float)):
            self.shares.append(value)

    def figures(self, agent: str, source: str) -> dict:
        """The group as summarize() gives it."""
        billed = dict(zip(CATEGORIES, self.billed, strict=True))
        first_time = dict(zip(CATEGORIES, self.first_time, strict=True))
        pooled = share(billed["exploration"], self.context)
        median = statistics.median(self.shares) if self.shares else None
        return {
            "agent": agent, "source": source, "sessions": self.sessions, "sessions_with_api_calls": self.with_calls,
            "api_calls": self.api_calls, "prompt_tokens_billed": self.prompt,
            "unrecorded_calls": self.unrecorded_calls, "unrecorded_prompt_tokens": self.unrecorded_prompt,
            "unrecorded_tasks": dict(sorted(self.tasks.items())), "usage_unknown_sessions": self.usage_unknown,
            "context_tokens": self.context, "recorded_over_billed": share(self.context, self.prompt),
            "exploration_share_of_context": pooled,
            "exploration_share_of_prompt": share(billed["exploration"], self.prompt),
            "median_session_share": median,
            "reread_share_of_context": share(billed[REREAD], self.context),
            "reread_share_of_prompt": share(billed[REREAD], self.prompt),
            "shares_of_context": {category: share(billed[category], self.context) for category in CATEGORIES},
            "billed_tokens": billed, "first_time_tokens": first_time,
            "reading": reading(pooled, median, self.sessions) if source == "interactive" else None,
        }


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
    by_tokenizer: dict = field(default_factory=dict)  # tokenizer -> {(agent, source): _Group}

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
            group = groups[(row["agent"], row.get("source"))] = _Group()
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
