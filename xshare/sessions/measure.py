"""Measure every session on the machine, re-reading only the transcripts that changed.

The cache keeps each transcript's row under its path, size and modification time; a different
tokenizer or method version makes every entry stale. Files to read are spread over the machine's
cores, largest first; each worker runs the same incremental reader the live hook runs.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from xshare import METHOD_VERSION
from xshare.measure import tokens as tokenizers
from xshare.measure.family import complete_packed, complete_with_unrecorded
from xshare.measure.ids import key_path, normal_id, path_key
from xshare.measure.plausible import row_problem
from xshare.measure.timestamps import parse_time
from xshare.sessions import rows_cache
from xshare.sessions.packed import PackedRows
from xshare.sessions.progress import Progress
from xshare.sources import agents, same_file
from xshare.sources.claude import copies as claude_copies
from xshare.sources.claude import transcript as claude
from xshare.sources.claude.transcript import ClaudeTranscript, TranscriptFile
from xshare.sources.hermes import state_db as hermes
from xshare.state.store import atomic_write, dumps, read_json, state_dir

# below this much to read, starting worker processes costs more than it saves
_PARALLEL_MIN_BYTES = 4 << 20
_IN_FLIGHT = 4  # batches per worker submitted ahead of the results: workers stay busy, few futures live
_BATCH_FILES, _BATCH_BYTES = 32, 1 << 20  # small sessions travel to a worker together, up to either
_counter: tokenizers.Counter | None = None


@dataclass
class Measured:
    rows: PackedRows = field(default_factory=PackedRows)
    problems: Counter = field(default_factory=Counter)
    tokenizer: tokenizers.TokenizerChoice | None = None
    sources: dict[str, str] = field(default_factory=dict)  # agent -> "read" | "not found"
    looked_in: list[str] = field(default_factory=list)  # for the "nothing found" message (stderr)
    copied: dict[str, frozenset[str]] = field(default_factory=dict)  # path_key -> calls another file bills


def cache_path(agent: str = "claude") -> Path:
    """Where an agent's rows are cached (Claude Code's in lines, see xshare.rows_cache)."""
    return rows_cache.cache_file() if agent == "claude" else state_dir() / "cache" / f"{agent}-rows.json"


def _init_worker(choice: tokenizers.TokenizerChoice) -> None:
    global _counter
    if _counter is None or _counter.choice != choice:
        _counter = tokenizers.Counter(choice)


def read_file(file: TranscriptFile, copied=(), detail: bool = False) -> ClaudeTranscript:
    """One transcript read start to end, the calls in `copied` read as another file's."""
    transcript = ClaudeTranscript(file, _counter.count, _counter.name, detail, copied)
    fallbacks = _counter.fallbacks
    transcript.catch_up()
    if _counter.fallbacks > fallbacks:  # texts tiktoken failed on (a Rust panic): estimated, and said so
        transcript.problems["texts tiktoken could not count, estimated as characters / 4"] += (
            _counter.fallbacks - fallbacks)
    return transcript


def measure_file(file: TranscriptFile, copied=()) -> tuple[dict, dict, dict]:
    """One transcript: its row (even with no API call), its problems, and its own calls' start times
    (which other files may hold copies of: see claude_copies)."""
    transcript = read_file(file, copied)
    return transcript.row(), dict(transcript.problems), transcript.copies.times


def _stat(file: TranscriptFile) -> tuple[int, int] | None:
    try:
        stat = file.path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def measure_claude(
    files: list[TranscriptFile],
    choice: tokenizers.TokenizerChoice,
    since: datetime | None = None,
    use_cache: bool = True,
    workers: int | None = None,
) -> Measured:
    """Rows for these transcripts; files last written before `since` cannot hold a session in it. The
    rows are kept packed (xshare.packed), the cache's as the bytes it holds, so no report over many
    sessions holds all their dicts."""
    result = Measured(tokenizer=choice)
    oldest_ns = int((since.timestamp() - 86400) * 1e9) if since else None
    wanted: list[tuple[TranscriptFile, tuple[int, int]]] = []
    for file in files:
        stat = _stat(file)
        if stat is None:
            result.problems["transcripts that vanished or could not be read"] += 1
        elif oldest_ns is None or stat[1] >= oldest_ns:
            wanted.append((file, stat))
    cached = rows_cache.load(choice.name, {path_key(file.path) for file, _ in wanted}) if use_cache else {}
    fresh: dict[str, rows_cache.Entry] = {}
    todo: list[tuple[TranscriptFile, tuple[int, int]]] = []
    for file, stat in wanted:
        entry = cached.get(path_key(file.path))
        if entry and entry.size == stat[0] and entry.mtime_ns == stat[1]:
            fresh[path_key(file.path)] = entry
        else:
            todo.append((file, stat))
    del cached, wanted
    todo.sort(key=lambda item: -item[1][0])
    for (file, stat), (row, problems, times) in zip(todo, _run(todo, choice, workers), strict=True):
        fresh[path_key(file.path)] = rows_cache.Entry(stat[0], stat[1], problems, row, times, ())
    reread = _settle_copies(fresh, files, choice)
    result.copied = {key: frozenset(entry.copied) for key, entry in fresh.items() if entry.copied}
    for entry in fresh.values():
        if entry.problems:
            result.problems.update(entry.problems)
    result.rows = PackedRows(complete_packed([entry.row for entry in fresh.values()]))
    if todo and _counter:
        result.tokenizer = _counter.choice  # the vocabulary may have proved unusable on load
    if use_cache and (todo or reread):
        rows_cache.save(result.tokenizer.name, fresh)
    return result


def _settle_copies(fresh: dict[str, rows_cache.Entry], files: list[TranscriptFile],
                   choice: tokenizers.TokenizerChoice) -> int:
    """Each call billed once across the files read: a file holding calls another file holds earlier is read
    again with them as copies (claude_copies). Returns how many files were read again."""
    by_key = {path_key(file.path): file for file in files}
    held = {key: (by_key[key].source, entry.times) for key, entry in fresh.items()}
    reread = 0
    for key, lost in claude_copies.lost_calls(held).items():
        entry = fresh[key]
        if tuple(sorted(lost)) != tuple(entry.copied):
            _init_worker(choice)
            row, problems, _ = measure_file(by_key[key], lost)
            fresh[key] = entry._replace(problems=problems or None, row=dumps(row), copied=tuple(sorted(lost)))
            reread += 1
    if reread:
        _flush()
    return reread


def _packed(measured: tuple[dict, dict, dict]) -> tuple[bytes, dict | None, dict]:
    """A worker's result as it travels and is kept: the row's JSON, its problems if any, and its own calls'
    start times (claude_copies)."""
    return dumps(measured[0]), measured[1] or None, measured[2]


def measure_group(files: list[TranscriptFile]) -> list[tuple[bytes, dict | None, dict]]:
    measured = [_packed(measure_file(file)) for file in files]
    _counter.flush()  # what this worker counted, for the others and for later runs
    return measured


def _load_if_counting() -> None:
    """Before forking workers: with no count store to read from (or an empty one), every text will be
    counted, so the tokenizer is loaded once here and the workers inherit it; with one, a worker loads
    it only on its first unknown text, and a report whose texts are all known never loads it."""
    if _counter.store is None or not len(_counter.store):
        _counter.load()


def _flush() -> None:
    if _counter is not None:
        _counter.flush()


def _run(todo: list, choice: tokenizers.TokenizerChoice, workers: int | None) -> list[tuple[bytes, dict | None, dict]]:
    """Rows in the order of `todo`. A session's subagent and compaction files replay its texts, so
    they go to the same worker, whose count cache then tokenizes each shared text once."""
    if not todo:
        return []
    _init_worker(choice)
    _load_if_counting()
    total = sum(stat[0] for _, stat in todo)
    progress = Progress(len(todo), total)
    try:
        return _run_with(todo, choice, workers, total, progress)
    finally:
        progress.done()


def _run_with(todo: list, choice: tokenizers.TokenizerChoice, workers: int | None, total: int,
              progress: Progress) -> list[tuple[bytes, dict | None, dict]]:
    workers = workers or os.cpu_count() or 1
    if workers < 2 or len(todo) < 2 or total < _PARALLEL_MIN_BYTES:
        measured = []
        for file, stat in todo:
            measured.append(_packed(measure_file(file)))
            progress.advance(1, stat[0])
        _flush()
        return measured
    groups: dict[tuple, list[int]] = {}
    for index, (file, _) in enumerate(todo):
        groups.setdefault(file.parent_id or file.session_id, []).append(index)
    ordered = sorted(groups.values(), key=lambda indexes: -sum(todo[i][1][0] for i in indexes))
    import multiprocessing

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    results: list = [None] * len(todo)
    pending: dict = {}

    def collect(done: set) -> None:
        for batch in done:
            indexes = pending.pop(batch)  # a done batch's future (and its rows) is not kept past here
            for index, one in zip(indexes, batch.result(), strict=True):
                results[index] = one
            progress.advance(len(indexes), sum(todo[i][1][0] for i in indexes))

    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(choice,)) as pool:
        for indexes in _batches(ordered, todo):
            pending[pool.submit(measure_group, [todo[i][0] for i in indexes])] = indexes
            if len(pending) >= workers * _IN_FLIGHT:  # a few batches ahead, not one future per session at once
                collect(wait(pending, return_when=FIRST_COMPLETED).done)
        while pending:
            collect(wait(pending, return_when=FIRST_COMPLETED).done)
    return results


def _batches(ordered: list[list[int]], todo: list) -> Iterator[list[int]]:
    """Sessions (a family never split) in batches, largest first: a large session alone, small ones
    together, so a hundred thousand small sessions are not as many futures and messages."""
    batch: list[int] = []
    size = 0
    for indexes in ordered:
        batch += indexes
        size += sum(todo[i][1][0] for i in indexes)
        if len(batch) >= _BATCH_FILES or size >= _BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


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
) -> tuple[list[dict], Counter]:
    """Rows of every session in these Hermes databases, counted with the same tokenizer as Claude's rows.
    A database is read again only when it (or its -wal) changed, or for a window reaching further back."""
    cached = _load_cache(choice, "hermes") if use_cache else {}
    rows: list[dict] = []
    problems: Counter = Counter()
    fresh: dict[str, list] = {}
    for path in same_file.unique(databases):  # one database named twice is read once
        stamp, start = _database_stamp(path), since.isoformat() if since else None
        entry = cached.get(path_key(path))
        if stamp and entry and entry[0] == stamp and _reaches(entry[1], since):
            fresh[path_key(path)] = entry
        else:
            _init_worker(choice)
            found, trouble = hermes.measure_hermes([path], _counter.count, _counter.name, since=since)
            choice = _counter.choice  # the vocabulary may have proved unusable on load
            _flush()
            fresh[path_key(path)] = [stamp, start, found, dict(trouble)]
        rows += fresh[path_key(path)][2]
        problems.update(fresh[path_key(path)][3])
    if use_cache and fresh != {key: cached.get(key) for key in fresh}:
        _save_cache(choice, {**cached, **fresh}, "hermes")
    return rows, problems


def _read_agent_file(job: tuple[str, Path]) -> tuple[list[dict], dict]:
    """One file of another agent (a worker's job): its rows and problems."""
    problems: Counter = Counter()
    rows = agents.BY_AGENT[job[0]].read(job[1], _counter.count, _counter.name, problems)
    _counter.flush()
    return rows, dict(problems)


def _read_agent_files(agent: str, todo: list[Path], total: int, workers: int | None) -> list:
    jobs = [(agent, path) for path in todo]
    workers = workers or os.cpu_count() or 1
    if workers < 2 or len(jobs) < 2 or total < _PARALLEL_MIN_BYTES:
        return [_read_agent_file(job) for job in jobs]
    import multiprocessing

    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    _load_if_counting()
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                             initargs=(_counter.choice,)) as pool:
        return list(pool.map(_read_agent_file, jobs))


def measure_agent(
    adapter, files: list[Path], choice: tokenizers.TokenizerChoice, since: datetime | None = None,
    use_cache: bool = True, workers: int | None = None,
) -> tuple[list[dict], Counter]:
    """Rows of another agent's files (sources/agents.py), each read again only when it changed: a
    session file by its size and mtime, a database by its own and its -wal's (files last written
    before `since` cannot hold a session in it)."""
    cached = _load_cache(choice, adapter.AGENT) if use_cache else {}
    fresh: dict[str, list] = {}
    todo: list[tuple[Path, list]] = []
    problems: Counter = Counter()
    oldest_ns = int((since.timestamp() - 86400) * 1e9) if since else None
    for path in files:
        stamp = _database_stamp(path) if adapter.KIND == "database" else _stat_path(path)
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
        _init_worker(choice)
        found = _read_agent_files(adapter.AGENT, [path for path, _ in todo], sum(s[0] for _, s in todo), workers)
        for (path, stamp), (rows, trouble) in zip(todo, found, strict=True):
            fresh[path_key(path)] = [stamp, rows, trouble]
    rows = []
    for entry in fresh.values():
        rows += entry[1]
        problems.update(entry[2])
    if use_cache and todo:
        kept = {key: entry for key, entry in cached.items() if key_path(key).exists()}
        _save_cache(_counter.choice, {**kept, **fresh}, adapter.AGENT)
    return rows, problems


def _stat_path(path: Path) -> list[int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns]


def measure_agents(result: Measured, agent_homes: dict[str, list[str] | None] | None, since: datetime | None,
                   use_cache: bool) -> None:
    """Add every other agent's rows to `result`; an agent given an empty list is not looked for."""
    for adapter in agents.ADAPTERS:
        given = (agent_homes or {}).get(adapter.AGENT)
        if given == []:
            continue
        homes = agents.homes(adapter, given)
        result.looked_in += adapter.describe(homes)
        result.problems.update(getattr(adapter, "unread", lambda _: [])(homes))
        files = adapter.discover(homes)
        result.sources[adapter.NAME] = "read" if files else "not found"
        if files:
            rows, problems = measure_agent(adapter, files, result.tokenizer, since, use_cache)
            result.rows += rows
            result.problems.update(problems)
            if _counter:
                result.tokenizer = _counter.choice


def measure_all(
    claude_roots: list[str] | None,
    choice: tokenizers.TokenizerChoice,
    since: datetime | None = None,
    use_cache: bool = True,
    hermes_dbs: list[str] | None = None,
    agent_homes: dict[str, list[str] | None] | None = None,
) -> Measured:
    """Every agent's sessions on this machine (or under the roots and databases given; hermes_dbs=[]: none)."""
    roots = [claude.resolve_root(root) for root in claude_roots] if claude_roots else claude.default_roots()
    skipped: Counter = Counter()
    files = claude.discover(roots, skipped)
    result = measure_claude(files, choice, since=since, use_cache=use_cache)
    result.problems.update(skipped)
    result.sources["Claude Code"] = "read" if files else "not found"
    result.looked_in += [f"Claude Code transcripts under {root}" for root in roots]
    if hermes_dbs is None:
        databases = hermes.default_databases()
        result.looked_in.append("Hermes state.db in $HERMES_HOME or ~/.hermes, and ~/.hermes/profiles/*")
    else:
        databases = [Path(path).expanduser() for path in hermes_dbs]
        result.looked_in += [f"Hermes state.db at {path}" for path in databases]
    if databases:
        rows, problems = measure_hermes(databases, result.tokenizer or choice, since, use_cache)
        result.rows += rows
        result.problems.update(problems)
        if _counter:
            result.tokenizer = _counter.choice  # the vocabulary may have proved unusable on load
    if hermes_dbs != []:  # an explicit empty list (the demo) looks for no Hermes database at all
        result.sources["Hermes"] = "read" if any(path.is_file() for path in databases) else "not found"
    measure_agents(result, agent_homes, since, use_cache)
    return result


def find_session(wanted: str, claude_roots: list[str] | None = None) -> TranscriptFile | None:
    """A transcript by path, or by session id (file stem, or <session>/<agent file stem>)."""
    path = Path(wanted).expanduser()
    if path.suffix == ".jsonl" and path.is_file():
        return claude.describe(path.resolve())
    roots = [claude.resolve_root(root) for root in claude_roots] if claude_roots else claude.default_roots()
    wanted = normal_id(wanted)  # as rows print it, or as the shell passed a file name's bytes
    return next((file for file in claude.discover(roots) if file.session_id == wanted), None)


def measure_one(file: TranscriptFile, choice: tokenizers.TokenizerChoice) -> tuple[dict, dict]:
    """One session's row, with the calls Claude Code billed but wrote into none of its family's files."""
    _, row, problems = measure_session(file, choice)
    return row, problems


def measure_session(file: TranscriptFile, choice: tokenizers.TokenizerChoice, detail: bool = False,
                    copied: frozenset[str] | None = None) -> tuple[ClaudeTranscript, dict, dict]:
    """One session as `xshare session` and its page show it: the reader (with its per-call log when
    `detail`), its row as the report has it, and its problems. The row leaves out calls an earlier file
    holds (`copied`, else worked out from the files beside it) and adds the calls Claude Code billed but
    wrote into none of its family's files."""
    _init_worker(choice)
    transcript = read_file(file, detail=detail)
    lost = copied if copied is not None else copied_here(file, transcript.copies.times)
    if lost:
        transcript = read_file(file, lost, detail)
    row = transcript.row()
    if row.get("cost_state"):
        family = [measure_file(member)[0] for member in claude.family_files(file)]
        row = complete_with_unrecorded(row, family)
    _flush()
    return transcript, row, dict(transcript.problems)


def copied_here(file: TranscriptFile, times: dict[str, str | None]) -> frozenset[str]:
    """The calls of this file that an earlier transcript of its project folder holds too, as the report
    decides it (claude_copies): from the report's cache where it is current, else from the files
    whose request ids meet this file's (a scan, not a read, of the others)."""
    project = claude_copies.project_folder(file.path)
    if not times or project is None:
        return frozenset()
    others = [claude.describe(path) for path in claude_copies.transcripts_in(project)]
    cached = rows_cache.load(_counter.choice.name, {path_key(other.path) for other in others})
    held = {path_key(file.path): (file.source, times)}
    for other in others:
        key = path_key(other.path)
        if key in held:
            continue
        entry, stat = cached.get(key), _stat(other)
        if entry and stat and (entry.size, entry.mtime_ns) == stat:
            held[key] = (other.source, entry.times)
        elif not claude_copies.request_ids(other.path).isdisjoint(times):
            held[key] = (other.source, measure_file(other)[2])
    return claude_copies.lost_calls(held)[path_key(file.path)]


def find_hermes_session(
    session_id: str, choice: tokenizers.TokenizerChoice, hermes_dbs: list[str] | None = None
) -> tuple[dict | None, Counter]:
    """A Hermes session's row by its id, from the databases given, else the default ones (read-only);
    the first database holding it wins."""
    databases = [Path(path).expanduser() for path in hermes_dbs] if hermes_dbs else hermes.default_databases()
    problems: Counter = Counter()
    for path in databases:
        if not path.is_file():
            problems[f"Hermes database {path} not found"] += 1
            continue
        _init_worker(choice)
        rows = hermes.read_database(path, _counter.count, _counter.name, problems, only=session_id)
        _flush()
        if rows:
            return rows[0], problems
    return None, problems


def find_agent_session(
    session_id: str, choice: tokenizers.TokenizerChoice, agent_homes: dict[str, list[str] | None] | None = None,
    ledgers: dict | None = None,
) -> tuple[dict | None, Counter, str | None]:
    """Another agent's session by its id: its row, the problems met, and the file it came from. Files
    whose name holds the id are read first; with `ledgers`, its detailed ledger is left there."""
    problems: Counter = Counter()
    session_id = normal_id(session_id)  # rows' ids are
    _init_worker(choice)
    for adapter in agents.ADAPTERS:
        given = (agent_homes or {}).get(adapter.AGENT)
        if given == []:
            continue
        files = adapter.discover(agents.homes(adapter, given))
        likely = [path for path in files if session_id in path.name or session_id[:8] in path.name]
        for path in likely + [path for path in files if path not in likely]:
            found: dict = {}
            rows = adapter.read(path, _counter.count, _counter.name, problems, found)
            _flush()
            row = next((row for row in rows if row["id"] == session_id), None)
            if row is not None:
                if ledgers is not None:
                    ledgers[session_id] = found[session_id]
                return row, problems, str(path)
    return None, problems, None
