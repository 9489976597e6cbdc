"""Hermes's and the four other agents' sessions measured, each database or file read again only when it
changed (their adapters in sessions/registry.py call this).

Their rows are cached per file, as JSON in the state folder (Claude Code's in lines: agents/claude_code/rows_cache.py).
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime
from pathlib import Path

from xshare import METHOD_VERSION
from xshare.agents.claude_code import rows_cache
from xshare.agents.common import counting as counter
from xshare.agents.common import same_file
from xshare.agents.hermes import state_db as hermes
from xshare.measure import tokens as tokenizers
from xshare.measure.ids import key_path, path_key
from xshare.measure.plausible import row_problem
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import parse_time
from xshare.state.store import atomic_write, dumps, read_json, state_dir


def cache_path(agent: str = "claude") -> Path:
    """Where an agent's rows are cached (Claude Code's in lines, see xshare.agents.claude_code.rows_cache)."""
    return rows_cache.cache_file() if agent == "claude" else state_dir() / "cache" / f"{agent}-rows.json"


def _load_cache(choice: tokenizers.TokenizerChoice, agent: str = "claude") -> dict:
    data = read_json(cache_path(agent))
    if not isinstance(data, dict) or data.get("method") != METHOD_VERSION or data.get("tokenizer") != choice.name:
        return {}
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return {}
    return {path: entry for path, entry in entries.items() if _cache_entry_ok(entry, agent)}


def _cache_entry_ok(entry: object, agent: str) -> bool:
    """A cached file's [stamp..., rows (or one row), problems]: a damaged or edited entry is not trusted,
    its file is read again (its rows are held to the rule for rows, plausible.row_problem)."""
    if not isinstance(entry, list) or len(entry) < 3 or not isinstance(entry[-1], dict):
        return False
    if agent == "hermes" and not isinstance(entry[1], (str, type(None))):
        return False  # the window's start it was read for, compared as text
    rows = entry[-2] if isinstance(entry[-2], list) else [entry[-2]]
    return (all(row_problem(row) is None for row in rows)
            and all(type(count) is int for count in entry[-1].values()))


def _save_cache(choice: tokenizers.TokenizerChoice, entries: dict, agent: str = "claude") -> None:
    payload = {"method": METHOD_VERSION, "tokenizer": choice.name, "entries": entries}
    try:
        atomic_write(cache_path(agent), dumps(payload))
    except OSError as error:
        print(f"xshare: could not write the cache ({error.strerror}); the next report reads everything again",
              file=sys.stderr)


def _database_stamp(path: Path) -> list[int] | None:
    """A Hermes database changes through its -wal as well as the file itself."""
    stamp = []
    for part in (path, path.with_name(path.name + "-wal")):
        try:
            stat = part.stat()
            stamp += [stat.st_size, stat.st_mtime_ns]
        except FileNotFoundError:
            stamp += [0, 0]
        except OSError:
            return None
    return stamp


def _reaches(read_since: object, since: datetime | None) -> bool:
    """A database read from `read_since` (None: from the start) holds every session started since `since`;
    compared as times, not text (a cache written by an older version may hold an offset)."""
    if read_since is None:
        return True
    read_from = parse_time(read_since)
    return since is not None and read_from is not None and read_from <= since


def measure_hermes(
    databases: list[Path], choice: tokenizers.TokenizerChoice, since: datetime | None = None, use_cache: bool = True
) -> tuple[list[SessionRow], Counter]:
    """Rows of every session in these Hermes databases, counted with the same tokenizer as Claude's rows.
    A database is read again only when it (or its -wal) changed, or for a window reaching further back."""
    cached = _load_cache(choice, "hermes") if use_cache else {}
    rows: list[SessionRow] = []
    problems: Counter = Counter()
    fresh: dict[str, list] = {}
    for path in same_file.unique(databases):  # one database named twice is read once
        stamp, start = _database_stamp(path), since.isoformat() if since else None
        entry = cached.get(path_key(path))
        if stamp and entry and entry[0] == stamp and _reaches(entry[1], since):
            fresh[path_key(path)] = entry
        else:
            current = counter.use(choice)
            found, trouble = hermes.measure_hermes([path], current, since=since)
            choice = current.choice  # the vocabulary may have proved unusable on load
            counter.flush()
            fresh[path_key(path)] = [stamp, start, found, dict(trouble)]
        rows += fresh[path_key(path)][2]
        problems.update(fresh[path_key(path)][3])
    if use_cache and fresh != {key: cached.get(key) for key in fresh}:
        _save_cache(choice, {**cached, **fresh}, "hermes")
    return rows, problems


def _read_agent_file(job: tuple[str, Path]) -> tuple[list[SessionRow], dict]:
    """One file of another agent (a worker's job): its rows and problems."""
    problems: Counter = Counter()
    current = counter.made()  # by the pool's initializer (or the caller, in this process)
    reader = importlib.import_module(job[0])  # by name: a job travels to a worker process as plain data
    rows = reader.read(job[1], current, problems)
    current.flush()
    return rows, dict(problems)


def _read_agent_files(reader: str, todo: list[Path], total: int, workers: int | None) -> list:
    jobs = [(reader, path) for path in todo]
    workers = counter.workers(workers)
    if workers < 2 or len(jobs) < 2 or total < counter.PARALLEL_MIN_BYTES:
        return [_read_agent_file(job) for job in jobs]
    context = counter.pool_context()
    counter.load_if_counting(total, workers)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=counter.use,
                             initargs=(counter.made().choice, counter.fast())) as pool:
        return list(pool.map(_read_agent_file, jobs))


def measure_agent(
    adapter, files: list[Path], choice: tokenizers.TokenizerChoice, since: datetime | None = None,
    use_cache: bool = True, workers: int | None = None,
) -> tuple[list[SessionRow], Counter]:
    """Rows of another agent's files (sessions/registry.py), each read again only when it changed: a
    session file by its size and mtime, a database by its own and its -wal's (files last written
    before `since` cannot hold a session in it)."""
    cached = _load_cache(choice, adapter.AGENT) if use_cache else {}
    fresh: dict[str, list] = {}
    todo: list[tuple[Path, list]] = []
    problems: Counter = Counter()
    oldest_ns = int((since.timestamp() - 86400) * 1e9) if since else None
    for path in files:
        stamp = _database_stamp(path) if adapter.KIND == "database" else _stat_path(path)
        if stamp is not None and hasattr(adapter, "session_files"):
            stamp += _others_stamp(path, adapter.session_files(path))
        if stamp is None:
            problems[f"{adapter.NAME} files that vanished or could not be read"] += 1
            continue
        if oldest_ns is not None and max(stamp[1::2]) < oldest_ns:
            continue
        entry = cached.get(path_key(path))
        if entry and entry[0] == stamp:
            fresh[path_key(path)] = entry
        else:
            todo.append((path, stamp))
    todo.sort(key=lambda item: -item[1][0])
    if todo:
        counter.use(choice)
        found = _read_agent_files(adapter.__name__, [path for path, _ in todo], sum(s[0] for _, s in todo), workers)
        for (path, stamp), (rows, trouble) in zip(todo, found, strict=True):
            fresh[path_key(path)] = [stamp, rows, trouble]
    rows = []
    for entry in fresh.values():
        rows += entry[1]
        problems.update(entry[2])
    if use_cache and todo:
        kept = {key: entry for key, entry in cached.items() if key_path(key).exists()}
        _save_cache(counter.made().choice, {**kept, **fresh}, adapter.AGENT)
    return rows, problems


def _others_stamp(path: Path, session_files: list[Path]) -> list[int]:
    """The stamps of the other files that may hold this file's session (a reader's `session_files`): its row
    is read from them too, so it is read again when one of them changes, comes or goes."""
    stamp: list[int] = []
    for other in session_files:
        if other.name != path.name:
            stamp += _stat_path(other) or [0, 0]  # [size, mtime] pairs, as the file's own
    return stamp


def _stat_path(path: Path) -> list[int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns]
