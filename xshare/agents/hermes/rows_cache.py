"""Hermes's sessions measured with its database cache: a state.db is read again only when it (or its -wal)
changed, or for a window reaching further back than it was read for. The entries live in the JSON rows
cache the file agents share (agents/common/file_rows.py), each with the window's start it was read from."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path

from xshare.agents.common import same_file
from xshare.agents.common.file_rows import cache_entry_ok, database_stamp, load_cache, save_cache
from xshare.agents.hermes import state_db as hermes
from xshare.agents.protocol import Looking
from xshare.measure.ids import path_key
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import parse_time

AGENT = hermes.AGENT  # its cache file's name


def entry_ok(entry: object) -> bool:
    """A cached database's [stamp, the window's start it was read for, rows, problems]."""
    return cache_entry_ok(entry) and isinstance(entry, list) and isinstance(entry[1], (str, type(None)))


def _reaches(read_since: object, since: datetime | None) -> bool:
    """A database read from `read_since` (None: from the start) holds every session started since `since`;
    compared as times, not text (a cache written by an older version may hold an offset)."""
    if read_since is None:
        return True
    read_from = parse_time(read_since)
    return since is not None and read_from is not None and read_from <= since


def measure_hermes(
    databases: list[Path], looking: Looking) -> tuple[list[SessionRow], Counter]:
    """Rows of every session in these Hermes databases, counted with `looking.counter` (Claude Code's rows'
    too). A database is read again only when it (or its -wal) changed, or for a window reaching further back."""
    since, use_cache, choice = looking.since, looking.use_cache, looking.counter.choice
    cached = load_cache(choice, AGENT, entry_ok) if use_cache else {}
    rows: list[SessionRow] = []
    problems: Counter = Counter()
    fresh: dict[str, list] = {}
    for path in same_file.unique(databases):  # one database named twice is read once
        stamp, start = database_stamp(path), since.isoformat() if since else None
        entry = cached.get(path_key(path))
        if stamp and entry and entry[0] == stamp and _reaches(entry[1], since):
            fresh[path_key(path)] = entry
        else:
            current = looking.counter.made()
            found, trouble = hermes.measure_hermes([path], current, since=since)
            choice = current.choice  # the vocabulary may have proved unusable on load
            current.flush()
            fresh[path_key(path)] = [stamp, start, found, dict(trouble)]
        rows += fresh[path_key(path)][2]
        problems.update(fresh[path_key(path)][3])
    if use_cache and fresh != {key: cached.get(key) for key in fresh}:
        save_cache(choice, {**cached, **fresh}, AGENT)
    return rows, problems
