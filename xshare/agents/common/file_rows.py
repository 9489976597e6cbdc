"""The sessions of an agent whose reader is one module (agents/common/file_agent.py) measured, each database
or file read again only when it changed, and the JSON rows cache per file in the state folder they share
with Hermes's database cache (agents/hermes/rows_cache.py); Claude Code's rows are cached in lines
(agents/claude_code/rows_cache.py).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from xshare import METHOD_VERSION
from xshare.agents.common import counting, progress
from xshare.agents.protocol import Looking
from xshare.measure import tokens as tokenizers
from xshare.measure.ids import key_path, path_key
from xshare.measure.plausible import row_problem
from xshare.measure.row import SessionRow
from xshare.state.store import atomic_write, dumps, read_json, state_dir


def cache_path(agent: str) -> Path:
    """Where an agent's rows are cached."""
    return state_dir() / "cache" / f"{agent}-rows.json"


def load_cache(choice: tokenizers.TokenizerChoice, agent: str,
               entry_ok: Callable[[object], bool] | None = None) -> dict:
    """The agent's cached entries by file, for this method and tokenizer; an entry that fails `entry_ok` (by
    default cache_entry_ok) is dropped, its file read again."""
    data = read_json(cache_path(agent))
    if not isinstance(data, dict) or data.get("method") != METHOD_VERSION or data.get("tokenizer") != choice.name:
        return {}
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return {}
    return {path: entry for path, entry in entries.items() if (entry_ok or cache_entry_ok)(entry)}


def cache_entry_ok(entry: object) -> bool:
    """A cached file's [stamp..., rows (or one row), problems]: a damaged or edited entry is not trusted,
    its file is read again (its rows are held to the rule for rows, plausible.row_problem)."""
    if not isinstance(entry, list) or len(entry) < 3 or not isinstance(entry[-1], dict):
        return False
    rows = entry[-2] if isinstance(entry[-2], list) else [entry[-2]]
    return (all(row_problem(row) is None for row in rows)
            and all(type(count) is int for count in entry[-1].values()))


def save_cache(choice: tokenizers.TokenizerChoice, entries: dict, agent: str) -> None:
    payload = {"method": METHOD_VERSION, "tokenizer": choice.name, "entries": entries}
    try:
        atomic_write(cache_path(agent), dumps(payload))
    except OSError as error:
        print(f"xshare: could not write the cache ({error.strerror}); the next report reads everything again",
              file=sys.stderr)


def database_stamp(path: Path) -> list[int] | None:
    """A database (Hermes's, OpenCode's, OpenClaw's) changes through its -wal as well as the file itself."""
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


def _read_agent_file(job: tuple[str, Path], current: tokenizers.Counter | None = None) -> tuple[list[SessionRow], dict]:
    """One file of another agent: its rows and problems, counted by `current` (else, in a pool's worker, by
    the worker's own, made by the pool's initializer, and stopped by Ctrl-C with its counts kept)."""
    problems: Counter = Counter()
    reader = importlib.import_module(job[0])  # by name: a job travels to a worker process as plain data
    if current is not None:
        rows = reader.read(job[1], current, problems)
        current.flush()
        return rows, dict(problems)
    current = counting.made()
    with counting.interruptible(current):
        return reader.read(job[1], current, problems), dict(problems)


Found = tuple[list[SessionRow], dict]


def _read_agent_files(reader: str, todo: list[tuple[Path, list]], current: tokenizers.Counter,
                      workers: int | None, keep: Callable[[int, Found], None]) -> None:
    """Each file's rows and problems given to `keep` with its index in `todo` as it is read; Ctrl-C: the
    workers stopped, the files read before it kept, then KeyboardInterrupt."""
    jobs = [(reader, path) for path, _ in todo]
    total = sum(stamp[0] for _, stamp in todo)
    workers = counting.workers(workers)
    parallel = workers >= 2 and len(jobs) >= 2 and total >= counting.PARALLEL_MIN_BYTES
    if parallel:
        counting.load_if_counting(current, total, workers)
    progress.measuring(len(jobs), total, f"measuring {importlib.import_module(reader).NAME}:")
    if not parallel:
        for index, job in enumerate(jobs):
            keep(index, _read_agent_file(job, current))
            progress.advance(1, todo[index][1][0])
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed, wait  # only for a pool (see counting.py)

    counting.share_with_workers(current)
    with ProcessPoolExecutor(workers, mp_context=counting.pool_context(), initializer=counting.start_worker,
                             initargs=(current.choice, current.fast)) as pool:
        pending = {pool.submit(_read_agent_file, job): index for index, job in enumerate(jobs)}
        try:
            for done in as_completed(list(pending)):
                index = pending.pop(done)  # kept once, here or after a stop
                keep(index, done.result())
                progress.advance(1, todo[index][1][0])
        except KeyboardInterrupt:
            with counting.shielded():
                for future in pending:
                    future.cancel()  # those not started
                counting.stop_workers()
                for future in wait(pending, timeout=30).done:  # the files read before the stop are kept
                    if not future.cancelled() and future.exception() is None:
                        keep(pending[future], future.result())
            raise


def measure_agent(
    reader: ModuleType, files: list[Path], looking: Looking, workers: int | None = None,
) -> tuple[list[SessionRow], Counter]:
    """Rows of another agent's files (sessions/registry.py), each read again only when it changed: a
    session file by its size and mtime, a database by its own and its -wal's (files last written
    before `looking.since` cannot hold a session in it); counted with `looking.counter`. Ctrl-C: the files
    read before it are cached, said by the KeyboardInterrupt."""
    cached = load_cache(looking.counter.choice, reader.AGENT) if looking.use_cache else {}
    problems: Counter = Counter()
    fresh, todo = _current_and_changed(reader, files, cached, looking, problems)
    if todo:
        _read_into(fresh, todo, reader, looking, workers, cached)
    rows = []
    for entry in fresh.values():
        rows += entry[1]
        problems.update(entry[2])
    if looking.use_cache and todo:
        with counting.shielded():  # Ctrl-C now would lose every file just read: it waits for the save
            _save_kept(looking, cached, fresh, reader.AGENT)
    return rows, problems


def _current_and_changed(reader: ModuleType, files: list[Path], cached: dict, looking: Looking,
                         problems: Counter) -> tuple[dict[str, list], list[tuple[Path, list]]]:
    """The cached entries still current, by path key, and the files to read with their stamps, largest first."""
    fresh: dict[str, list] = {}
    todo: list[tuple[Path, list]] = []
    oldest_ns = int((looking.since.timestamp() - 86400) * 1e9) if looking.since else None
    for path in files:
        stamp = database_stamp(path) if reader.KIND == "database" else _stat_path(path)
        if stamp is not None and hasattr(reader, "session_files"):
            stamp += _others_stamp(path, reader.session_files(path))
        if stamp is None:
            problems[f"{reader.NAME} files that vanished or could not be read"] += 1
            continue
        if oldest_ns is not None and max(stamp[1::2]) < oldest_ns:
            continue
        entry = cached.get(path_key(path))
        if entry and entry[0] == stamp:
            fresh[path_key(path)] = entry
        else:
            todo.append((path, stamp))
    todo.sort(key=lambda item: -item[1][0])
    return fresh, todo


def _read_into(fresh: dict[str, list], todo: list[tuple[Path, list]], reader: ModuleType, looking: Looking,
               workers: int | None, cached: dict) -> None:
    """The files to read, read into `fresh` in the order of `todo` (whichever worker finished first), so the
    rows come out the same on every run. Ctrl-C: those read before it cached, and said so."""
    read: dict[int, Found] = {}  # by index in todo, as the workers finish
    try:
        _read_agent_files(reader.__name__, todo, looking.counter.made(), workers, read.__setitem__)
    except KeyboardInterrupt:
        done = len(read)
        _into(fresh, todo, read)
        with contextlib.suppress(KeyboardInterrupt), counting.shielded():  # a second Ctrl-C does not cut it short
            looking.counter.flush()
            if looking.use_cache and done:
                _save_kept(looking, cached, fresh, reader.AGENT)
        kept = "and kept; the next report carries on" if looking.use_cache else "(--no-cache: none kept)"
        raise KeyboardInterrupt(f"interrupted: {done:,} of {len(todo):,} {reader.NAME} files measured {kept}") from None
    _into(fresh, todo, read)


def _into(fresh: dict[str, list], todo: list[tuple[Path, list]], read: dict[int, Found]) -> None:
    for index in sorted(read):
        (path, stamp), (rows, trouble) = todo[index], read[index]
        fresh[path_key(path)] = [stamp, rows, trouble]


def _save_kept(looking: Looking, cached: dict, fresh: dict, agent: str) -> None:
    """The files read now and the cached ones that still exist."""
    kept = {key: entry for key, entry in cached.items() if key_path(key).exists()}
    save_cache(looking.counter.choice, {**kept, **fresh}, agent)


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
